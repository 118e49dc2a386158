"""The ``topic`` spider: spider arguments in, scored requests and on-topic pages out."""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from scrapy import Request, Spider, signals
from scrapy.exceptions import CloseSpider, DontCloseSpider, IgnoreRequest
from scrapy.http import TextResponse
from scrapy.spidermiddlewares.httperror import HttpError

from topicspider import settings as project_settings
from topicspider.analysis import Analyzer, PageAnalysis, ScoredLink
from topicspider.canonical import (
    REMEMBERED,
    DroppedParameters,
    KnownCanonicals,
    link_header_canonicals,
)
from topicspider.charset import content_type, is_binary, readable
from topicspider.dupefilters import DUPEFILTERS
from topicspider.engine import items_in_process, process_item, store
from topicspider.exceptions import ArgumentError, ConfigError, SeedError
from topicspider.fetchedelsewhere import FetchedElsewhere
from topicspider.hostcap import HostFull
from topicspider.httpstatus import status_message
from topicspider.importance import Opic
from topicspider.items import PageItem
from topicspider.keywords import KeywordVector, load_keywords
from topicspider.listings import LISTED_KEY, TopicalLists
from topicspider.pipelines import NotStored
from topicspider.pqueues import LINKS_QUEUED_KEY, RESERVE_KEY, SCORE_KEY
from topicspider.redirects import given_url, same_page
from topicspider.redis.connection import get_client, key_prefix
from topicspider.redis.crawl import check_settings
from topicspider.redis.learning import Learner, LearningSync
from topicspider.redis.mix import SharedBestFirst
from topicspider.redis.parameters import SharedDroppedParameters
from topicspider.redis.patterns import SharedPatternStats
from topicspider.redis.simhashes import SharedSimHashIndex
from topicspider.redis.thresholds import SharedAdaptiveThreshold
from topicspider.relevance import (
    SEED_SCORE,
    STRATEGIES,
    WEIGHTINGS,
    BestFirst,
    LinkCandidate,
    Strategy,
    reserve_score,
)
from topicspider.robotsmeta import NOFOLLOW, NOINDEX, header_directives
from topicspider.scheduler import check_frontier
from topicspider.scripts import SCRIPT_KEY, SiteScripts, script_html, script_text, written_page
from topicspider.seeds import SEEDS_FAILED_REASON, load_seeds, start_urls
from topicspider.sentlinks import SentLinks, make_room
from topicspider.settingtypes import check_types
from topicspider.siblings import PARENT_KEY, SiblingYields
from topicspider.signals import item_pipelines_closing, links_discovered, page_scored
from topicspider.simhash import SimHashIndex, near
from topicspider.slots import SLOT_POLICIES
from topicspider.thresholds import AdaptiveThreshold, threshold_from_settings
from topicspider.thresholds import check_settings as check_threshold_settings
from topicspider.urlpatterns import PatternStats, template, without_session
from topicspider.urls import on_sites
from topicspider.workers import AnalysisFailed, AnalysisPool

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Iterator

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from twisted.python.failure import Failure
    from typing_extensions import Self

logger = logging.getLogger(__name__)

TUNNEL_KEY = "topic_tunnel"
LINEAGE_KEY = "topic_lineage"
#: The link-score terms a request was scored with, for adaptive strategies to learn from.
FEATURES_KEY = "topic_features"
#: The SimHash of the text of the page a request's link is on.
PARENT_TEXT_KEY = "topic_parent_text"
#: A table of contents is about the topic when at least this share of its link text is.
TOPICAL_HUB_SHARE = 0.5
#: Weights of the page and link scores: none may be negative (nor not a number).
#: The ``CLOSESPIDER_*`` settings that give a crawl a budget (not ``_ERRORCOUNT``).
BUDGETS = ("PAGECOUNT", "ITEMCOUNT", "TIMEOUT", "PAGECOUNT_NO_ITEM", "TIMEOUT_NO_ITEM")


#: In a request's meta: ``dont_filter`` was set by ``TopicSpider.scheduled``, for a redirect
#: to the request's own address; the redirects that follow do not inherit it.
_REFETCH = "topic_refetch"


#: What a failure whose exception says nothing means.
_UNSAID = {
    "ResponseDataLossError": "the connection closed before the Content-Length the server sent"
    " was read (DOWNLOAD_FAIL_ON_DATALOSS=False keeps what arrived)",
}
#: Each reason of ``_skip_reason``, as a seed's line says it.
_SKIPPED = {"not_text": "not text", "not_html": "not HTML", "empty": "empty", "binary": "binary"}


def _skip_reason(response: Any) -> str | None:
    """Why a response is not a page to score, if it is not: the stats name it."""
    if not isinstance(response, TextResponse):
        return "not_text"
    if b"html" not in (response.headers.get("Content-Type") or b"text/html").lower():
        return "not_html"
    if not response.body.strip():
        return "empty"
    if is_binary(response.body, content_type(response)):
        return "binary"
    return None


def _check_lengths(seeds: list[str], limit: int) -> None:
    """A seed longer than ``URLLENGTH_LIMIT`` would be dropped by Scrapy's middleware in a
    line at INFO, the crawl ending "finished" with nothing fetched."""
    for seed in seeds:
        if limit > 0 and len(seed) > limit:
            raise SeedError(
                f"seed {seed[:60]!r}… is {len(seed)} characters long, over URLLENGTH_LIMIT"
                f" ({limit})"
            )


def _check_regex(name: str, pattern: str | None) -> None:
    """``allow`` and ``deny`` must compile before the crawl starts: each analysis worker
    compiles them, and died on one that did not, with a traceback, the crawl going on."""
    if pattern:
        try:
            re.compile(pattern)
        except re.error as error:
            raise ArgumentError(f"{name}={pattern!r}: not a regular expression ({error})") from None


def _handed_over(
    request: Request, outputs: list[PageItem | Request]
) -> Iterator[PageItem | Request]:
    """Yield the outputs, then tell the scheduler that the page's links are all queued.

    Scrapy pulls a callback's outputs one by one through the spider middlewares and
    queues each request as it comes, so the line after the last ``yield`` runs once
    they all are.
    """
    yield from outputs
    request.meta[LINKS_QUEUED_KEY] = True


#: Spider arguments besides the spider's own that Scrapy takes as the spider's attributes.
_ATTRIBUTES = frozenset({"user_agent"})


class _Origin(NamedTuple):
    """The page links come from: from its markup, or from a script it loads."""

    url: str
    depth: int
    tunnel: int  # irrelevant pages in a row, this one included
    lineage: float
    fingerprint: int  # of its main text, for a link's page to be compared with


class _Verdict(NamedTuple):
    """What ``TopicSpider._verdict`` made of a page."""

    threshold: float  # the bar it was held to
    listed: bool  # held to the lower bar of a page a list of the topic names
    relevant: bool
    hub: bool  # a site's table of contents: followed as relevant, not stored
    accepted: bool
    held: bool  # accepted before the threshold settled: judged again once it has
    duplicate: bool | None  # accepted, but a near-duplicate of a stored page (None: not yet)
    robots: frozenset[str]  # what its robots tags forbid
    entries: frozenset[str]  # the links it lists as a list of the topic


class _Judged(NamedTuple):
    """A page judged: what ``page_scored`` says of it, and its item if it is accepted."""

    url: str
    relevance: float
    depth: int
    score: float | None  # its request's
    threshold: float
    listed: bool
    accepted: bool
    held: bool
    duplicate: bool | None  # None: not looked at yet
    item: PageItem | None  # if accepted
    fingerprint: int
    from_list: bool  # its request came from a list of the topic


class TopicSpider(Spider):
    """Fetch the most promising links first; yield the pages that are on topic.

    Arguments: ``seeds`` (URLs or a file; optional for a worker joining a crawl in Redis),
    ``keywords`` (a file, a name in ``keywords/`` or ``term:weight,...``), optional
    ``allow``/``deny`` URL regexes.
    """

    name = "topic"

    def __init__(
        self,
        seeds: str | None = None,
        keywords: str | None = None,
        allow: str | None = None,
        deny: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        # Without seeds, only a worker joining a crawl in Redis has work (checked below).
        self.seeds = self._seeds(seeds)
        self.keywords: KeywordVector = load_keywords(keywords or "")
        self.allow = allow
        self.deny = deny

    @classmethod
    def check_arguments(
        cls,
        settings: BaseSettings,
        seeds: str | None = None,
        keywords: str | None = None,
        allow: str | None = None,
        deny: str | None = None,
        **others: Any,
    ) -> None:
        """Fail before the crawl starts, with one clear message, on bad input: what
        :meth:`check_configuration` checks, the seeds and the keywords; with ``REDIS_URL``,
        Redis and the crawl there.

        Seeds are optional with ``REDIS_URL``: a worker without them joins the shared crawl.
        """
        cls.check_configuration(settings, allow, deny, **others)
        given = cls._seeds(seeds)
        if not given and not settings.get("REDIS_URL"):
            load_seeds(None)  # raises: a local crawl needs seeds
        _check_lengths(given, settings.getint("URLLENGTH_LIMIT"))
        vector = load_keywords(keywords or "")
        if settings.get("REDIS_URL"):
            check_settings(settings, cls.name, vector, allow, deny)

    @classmethod
    def check_configuration(
        cls,
        settings: BaseSettings,
        allow: str | None = None,
        deny: str | None = None,
        **others: Any,
    ) -> None:
        """The settings and arguments a spider is made with, however it is run (``scrapy
        crawl``, ``runspider``, a script's ``CrawlerProcess``, a subclass's
        ``custom_settings``): checked as the spider is made, before any request.

        An argument of another name is a typo (``-a seed=``, ``-a alow=``), which Scrapy
        would make an attribute of the spider and the crawl ignore; scrapyd's own
        (``_job``, ``_version``) start with ``_``, and ``user_agent`` is the attribute
        Scrapy's ``UserAgentMiddleware`` reads. Scrapy's other attributes of that kind
        (``download_delay``) are deprecated for their settings, which the message names.
        """
        unknown = sorted(
            name for name in others if not name.startswith("_") and name not in _ATTRIBUTES
        )
        if unknown:
            name = unknown[0]
            setting = f"; the setting is -s {name.upper()}=…" if name.upper() in settings else ""
            raise ArgumentError(
                f"unknown spider argument {name!r} (expected seeds, keywords, allow or deny"
                f"{setting})"
            )
        check_types(settings)
        _check_regex("allow", allow)
        _check_regex("deny", deny)
        for name, choices in (
            ("TOPIC_STRATEGY", STRATEGIES),
            ("TOPIC_WEIGHTING", WEIGHTINGS),
            ("TOPIC_SLOT_POLICY", SLOT_POLICIES),
            ("TOPIC_DUPEFILTER", DUPEFILTERS),
        ):
            if settings.get(name) not in choices:
                raise ConfigError(
                    f"{name}={settings.get(name)!r}: expected one of {', '.join(sorted(choices))}"
                )
        check_threshold_settings(settings)
        if not 0 <= settings.getfloat("TOPIC_PARENT_DECAY") < 1:
            raise ConfigError(
                f"TOPIC_PARENT_DECAY={settings.get('TOPIC_PARENT_DECAY')}: expected 0 <= it < 1"
            )
        check_frontier(settings)

    @classmethod
    def _seeds(cls, seeds: str | None) -> list[str]:
        return load_seeds(seeds) if seeds else start_urls(getattr(cls, "start_urls", ()))

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        """The project's settings (``topicspider.settings``) come with the spider wherever
        it runs: a user's own project, ``runspider`` outside this one, a script's
        ``CrawlerProcess``. Before, there it ran with Scrapy's scheduler and no ``TOPIC_*``
        setting, and stopped on the first it read. They go in at the priority of what an
        add-on brings: over Scrapy's defaults and a command's, under a settings module,
        ``-s`` and ``custom_settings``. (At the defaults' own priority, Scrapy's ``crawl``
        command put its defaults back as it started the crawl.)"""
        settings.setmodule(project_settings, priority="addon")
        super().update_settings(settings)

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        arguments = {k: v for k, v in kwargs.items() if k not in ("seeds", "keywords")}
        cls.check_configuration(crawler.settings, **arguments)
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.configure(crawler)
        crawler.signals.connect(spider.restore_state, signal=signals.engine_started)
        crawler.signals.connect(spider.scheduled, signal=signals.request_scheduled)
        crawler.signals.connect(spider.idle, signal=signals.spider_idle)
        crawler.signals.connect(spider.item_dropped, signal=signals.item_dropped)
        crawler.signals.connect(spider.store_last_items, signal=item_pipelines_closing)
        return spider

    def configure(self, crawler: Crawler) -> None:
        settings = crawler.settings
        logger.info("Topic: %s", readable(self.keywords.describe()))
        for warning in self.keywords.encoding_warnings():
            logger.warning("%s", readable(warning))
        for warning in self.keywords.broadened:
            logger.warning("%s", readable(warning))
        self.threshold = threshold_from_settings(settings)
        self.wait_for_threshold = settings.getbool("TOPIC_THRESHOLD_WAIT")
        self.tunnel_depth = settings.getint("TOPIC_TUNNEL_DEPTH")
        # Only a budget ends a crawl that would otherwise go on through all its reserve.
        self.tunnel_reserve = settings.getbool("TOPIC_TUNNEL_RESERVE") and any(
            settings.getfloat(f"CLOSESPIDER_{budget}") > 0 for budget in BUDGETS
        )
        self.parent_decay = settings.getfloat("TOPIC_PARENT_DECAY")
        self.hub_link_ratio = settings.getfloat("TOPIC_HUB_LINK_RATIO")
        self.list_link_ratio = settings.getfloat("TOPIC_LIST_LINK_RATIO")
        self.drop_noise_urls = settings.getbool("TOPIC_DROP_NOISE_URLS")
        self.follow_translations = settings.getbool("TOPIC_FOLLOW_TRANSLATIONS")
        self.scripts = SiteScripts(REMEMBERED)
        self.depth_limit = settings.getint("DEPTH_LIMIT")
        # The name robots tags and headers address this crawler by, if they are obeyed.
        self.robots_agent = (
            settings.get("BOT_NAME") if settings.getbool("TOPIC_OBEY_ROBOTS_META") else None
        )
        self.max_pages_per_host = settings.getint("TOPIC_MAX_PAGES_PER_HOST")
        self.host_pages: Counter[str] = Counter()
        self.seeds_failed = 0
        # Seeds that gave no page, by their request's URL: with JOBDIR the seen-set holds
        # them, and the same command run again once the site is back would filter them.
        self.failed_seeds: set[str] = set()
        # Accepted pages a pipeline failed to store (a full pages folder or MySQL spool), by
        # URL, with their depth: the seen-set holds them, and a crawl resumed from JOBDIR
        # fetches them again.
        self.not_stored: dict[str, int] = {}
        # Pages judged before the threshold settled, in order (see ``_release``); with
        # JOBDIR, kept for the crawl resumed if this one stops first.
        self.waiting: list[_Judged] = []
        # The requests of the accepted pages among them that outlive their callback, by
        # URL, then of those released till their items are stored: see
        # ``requests_unstored``.
        self._unstored: dict[str, Request] = {}
        self._storing: list[Request] = []
        self.sent_links = SentLinks(settings.getint("TOPIC_SENT_LINKS"))
        self.canonicals = KnownCanonicals()
        self.dropped_parameters = DroppedParameters()
        self.stored_addresses: dict[int, str] = {}
        self.strategy = self._strategy(settings.get("TOPIC_STRATEGY"), settings)
        self.patterns = PatternStats()
        self.siblings = SiblingYields(settings.getint("TOPIC_BARREN_SIBLINGS"))
        self.lists = TopicalLists()
        self.listed_threshold = settings.getfloat("TOPIC_LISTED_THRESHOLD")
        distance = settings.getint("TOPIC_DUPLICATE_DISTANCE")
        self.duplicates = SimHashIndex(distance) if distance >= 0 else None
        if settings.get("REDIS_URL"):
            self._share(settings, crawler)
        use_importance = settings.getfloat("TOPIC_IMPORTANCE_WEIGHT") > 0
        self.importance = Opic() if use_importance else None
        if settings.getbool("TOPIC_STAY_ON_SITE"):
            # Host names, not host:port, which Scrapy's LinkExtractor would compare.
            self.allowed_domains = sorted({urlsplit(url).hostname or "" for url in self.seeds})
        self.analysis = AnalysisPool(
            Analyzer.arguments(
                self.keywords,
                settings,
                allow=self.allow,
                deny=self.deny,
            ),
            settings.getint("TOPIC_ANALYSIS_PROCESSES"),
            settings.getfloat("TOPIC_ANALYSIS_TIMEOUT"),
        )
        crawler.signals.connect(self.analysis.start, signal=signals.spider_opened)
        crawler.signals.connect(self.analysis.close, signal=signals.spider_closed)

    def _share(self, settings: BaseSettings, crawler: Crawler) -> None:
        """In a shared crawl, the stored pages' SimHashes are the crawl's, and the threshold,
        the link-score mix, URL-template yields and the query parameters that change nothing
        are learned from every worker's pages (:mod:`topicspider.redis.learning`): all in
        Redis, through one client."""
        server, prefix = get_client(settings), key_prefix(settings, self.name)
        if self.duplicates is not None:
            self.duplicates = SharedSimHashIndex.like(self.duplicates, server, prefix)
        self.patterns = SharedPatternStats(server, prefix)
        self.dropped_parameters = SharedDroppedParameters(server, prefix)
        learners: list[Learner] = [self.patterns, self.dropped_parameters]
        if isinstance(self.threshold, AdaptiveThreshold):
            self.threshold = SharedAdaptiveThreshold.like(self.threshold, server, prefix)
            learners.append(self.threshold)
        if isinstance(self.strategy, BestFirst) and self.strategy.adaptive:
            self.strategy = SharedBestFirst.like(self.strategy, server, prefix)
            learners.append(self.strategy)
        # Kept: the signals hold their handlers by weak references.
        self.learning = LearningSync(server, learners)
        crawler.signals.connect(self.learning.start, signal=signals.spider_opened)
        crawler.signals.connect(self.learning.close, signal=signals.spider_closed)

    def _strategy(self, name: str, settings: BaseSettings) -> Strategy:
        if name != BestFirst.name:
            return STRATEGIES[name]()
        return BestFirst(
            {
                "anchor": settings.getfloat("TOPIC_ANCHOR_WEIGHT"),
                "parent": settings.getfloat("TOPIC_PARENT_WEIGHT"),
                "pattern": settings.getfloat("TOPIC_PATTERN_WEIGHT"),
                "importance": settings.getfloat("TOPIC_IMPORTANCE_WEIGHT"),
            },
            noise_discount=settings.getfloat("TOPIC_NOISE_DISCOUNT"),
            adaptive=settings.getbool("TOPIC_ADAPTIVE"),
            warmup=settings.getint("TOPIC_ADAPTIVE_WARMUP"),
        )

    def restore_state(self) -> None:
        """With JOBDIR, Scrapy pickles ``spider.state`` at close and restores it at open:
        what the crawl learned (URL templates, page fingerprints and the stored pages'
        addresses, link-score mix, the hosts its seeds redirected to, the canonical
        addresses of pages fetched at another and the query parameters those drop, the
        pages whose links came back off topic, the seeds that gave no page, the accepted
        pages not stored, the scripts due and the script names that wrote nothing) resumes.
        The threshold, the link score, the sibling demotion and the near-duplicate index
        take their settings from this run (a resumed crawl may be given others) and what
        they learned from the last; a part one of the runs had off is as this run has it.

        Run when the engine starts, before the first request: Scrapy's ``SpiderState``
        extension sets ``spider.state`` in its ``spider_opened`` handler, which runs after
        the spider's own."""
        state = getattr(self, "state", None)
        if state is None:
            return
        names = ["importance", "host_pages", "canonicals", "siblings", "lists", "scripts"]
        if not self.settings.get("REDIS_URL"):  # in Redis, the crawl holds what these hold
            names += [
                "allowed_domains",
                "failed_seeds",
                "not_stored",
                "waiting",
                "dropped_parameters",
                "duplicates",
                "stored_addresses",
                "patterns",
                "strategy",
                "threshold",
            ]
        for name in names:
            if state.get(name) is None or getattr(self, name, None) is None:
                # New, or off in one of the two runs: as this run has it.
                state[name] = getattr(self, name, None)
            elif name in ("strategy", "threshold", "siblings", "duplicates"):
                getattr(self, name).resume(state[name])
                state[name] = getattr(self, name)
            elif name == "allowed_domains":
                # Seeds added since the pause bring their hosts: the union, in the list
                # the state holds (redirected seeds append to it).
                merged = list(dict.fromkeys([*state[name], *self.allowed_domains]))
                state[name] = self.allowed_domains = merged
            else:
                setattr(self, name, state[name])

    def idle(self) -> None:
        """A local crawl that has nothing left to do, scored no page and could not fetch a
        seed (unreachable, an HTTP error, forbidden by robots.txt, a redirect loop) or got
        no page from it (a PDF) ends with the reason ``SEEDS_FAILED_REASON``, not
        ``finished``: nothing was crawled. The seeds of a crawl resumed from ``JOBDIR``,
        fetched before, are no failures; in Redis, a worker may leave its seeds to the
        others, and the scheduler says it of the whole crawl (``RedisScheduler.spider_idle``).

        Pages that wait for the threshold to settle are judged by it as it is: the crawl
        ends before ``TOPIC_THRESHOLD_TOP`` pages scored above 0 (in Redis, a worker with
        nothing to do for the moment).
        Their items go to the pipelines here, outside any callback, and the crawl waits
        for them (:func:`topicspider.engine.store`)."""
        stored = list(self._release()) if self.waiting else []
        if stored:
            store(self.crawler.engine, stored)
            raise DontCloseSpider
        stats = self.crawler.stats
        scored = stats.get_value("topic/accepted", 0) + stats.get_value("topic/dropped", 0)
        if self.seeds_failed and not scored and not self.settings.get("REDIS_URL"):
            logger.error("No seed gave a page: nothing was crawled")
            raise CloseSpider(SEEDS_FAILED_REASON)

    def item_dropped(self, item: Any, exception: BaseException, **kwargs: Any) -> None:
        """An accepted page a pipeline failed to store is fetched again: locally, kept in
        ``not_stored`` for the crawl resumed from ``JOBDIR``; in Redis, its request given
        back to the shared frontier past the seen-set, for a worker to fetch (this one
        acknowledged the first when the item left it)."""
        if not (isinstance(exception, NotStored) and isinstance(item, PageItem)):
            return
        if not self.settings.get("REDIS_URL"):
            self.not_stored[item.url] = item.depth
            return
        self.crawler.engine.crawl(self._refetch(item.url, item.depth))

    def _refetch(self, url: str, depth: int) -> Request:
        """A request for an accepted page not stored, first in the frontier."""
        return Request(
            url,
            dont_filter=True,
            errback=self.failed,
            meta={SCORE_KEY: SEED_SCORE, TUNNEL_KEY: 0, "depth": depth},
        )

    def closed(self, reason: str) -> None:
        """What the crawl learned goes in the final stats: the threshold its last verdicts
        used, and the link-score mix (with ``TOPIC_ADAPTIVE``, no longer the one set).

        A crawl stopped before the threshold settled keeps the pages that wait in its
        ``JOBDIR`` state, for the crawl resumed to judge; a worker in Redis gave the
        requests of those accepted back to the shared frontier (its scheduler closed
        first), for a worker to fetch again, and says the others' verdicts. Otherwise the
        item pipelines stored them before they closed (``store_last_items``); if they did not
        (an ``ITEM_PROCESSOR`` of the project's own), it says their verdicts by the
        threshold as it is, and those it accepts are not stored. (The spider's handler runs
        before the extensions': the fetch log and the report have them.)"""
        stats = self.crawler.stats
        stats.set_value("topic/threshold", round(self.threshold.value, 4))
        if self.waiting and "waiting" in getattr(self, "state", {}):
            logger.info(
                "%d page(s) wait for the threshold to settle: kept in JOBDIR for the crawl"
                " resumed to judge",
                len(self.waiting),
            )
        elif self.waiting and self.settings.get("REDIS_URL"):
            given_back = sum(page.item is not None for page in self.waiting)
            self.waiting = [page for page in self.waiting if page.item is None]
            list(self._release())  # the verdicts on the pages dropped
            logger.info(
                "%d accepted page(s) wait for the threshold to settle: given back to the"
                " shared frontier, to be fetched again",
                given_back,
            )
        elif unstored := len(list(self._release())):
            logger.warning(
                "%d accepted page(s) not stored: the crawl stopped (%s) before the threshold"
                " settled to judge them by (JOBDIR keeps them for the crawl resumed)",
                unstored,
                reason,
            )
        if isinstance(self.strategy, BestFirst):
            for name, weight in self.strategy.weights_by_name().items():
                stats.set_value(f"topic/mix/{name}", weight)

    def scheduled(self, request: Request) -> None:
        """A redirect back to an address of its own chain is fetched again once if it is
        the address just left (a cookie gate), and is otherwise a loop, said in one line and
        not scheduled. A seed that redirects to another host (``www.example.com`` to
        ``example.com``, ``example.cn`` to ``example.com.cn``) names the site the user
        meant: the crawl keeps to that host too. Run before the scheduler's seen-set and
        Scrapy's offsite filter look at the request (the spider connects to the signal
        before the engine's middlewares do); the filter reads ``allowed_domains`` again when
        it changes (Scrapy 2.18 and later). Only redirected requests are looked at: the
        signal comes for every request."""
        redirected_from = request.meta.get("redirect_urls")
        if not redirected_from:
            return
        if request.meta.pop(_REFETCH, False):
            # Copied from the request that redirected to itself: this one is filtered again.
            request.dont_filter = False
        if not request.dont_filter:
            earlier = same_page(self.crawler, request.url, redirected_from)
            if earlier[-1] and not any(earlier[:-1]):
                # A redirect to the address itself (a cookie gate: 302 to the same URL with a
                # Set-Cookie, or ``http://host`` to ``/``) is no duplicate: fetch it again,
                # once; a second time is a loop.
                request.dont_filter = True
                request.meta[_REFETCH] = True
            elif any(earlier):
                # A loop, which the seen-set would drop without a word (in Redis mode in the
                # frontier's script, without even Scrapy's request_dropped): said here.
                loop = " -> ".join([*redirected_from, request.url])
                self._not_fetched(
                    request, redirected_from[0], "RedirectLoop", f"redirect loop ({loop})"
                )
                raise IgnoreRequest("redirect loop")
        if request.meta.get("depth") or not getattr(self, "allowed_domains", None):
            return
        host = urlsplit(request.url).hostname or ""
        # Host names: not url_is_from_any_domain, which compares host:port and reads an IPv6
        # address without brackets as one with a port.
        if not on_sites(host, self.allowed_domains):
            self.allowed_domains.append(host)  # the list JOBDIR's state holds
            self.crawler.stats.inc_value("topic/seed_hosts_added")
            logger.info(
                "Seed %s redirects to %s: the crawl keeps to %s too",
                redirected_from[0],
                request.url,
                host,
            )

    def _host_full(self, url: str) -> bool:
        if not self.max_pages_per_host:
            return False
        return self.host_pages[urlsplit(url).hostname or ""] >= self.max_pages_per_host

    async def start(self) -> AsyncIterator[Request]:
        """The seeds; checked here, not when the spider is made: ``scrapy parse URL``
        makes it too, and needs none."""
        if not self.seeds and not self.settings.get("REDIS_URL"):
            load_seeds(None)  # raises: a local crawl needs seeds
        for url in self.seeds:
            request = Request(url, meta={SCORE_KEY: SEED_SCORE, TUNNEL_KEY: 0}, errback=self.failed)
            if request.url in self.failed_seeds:  # failed in a run before: fetched again
                request.dont_filter = True
            yield request
        for url, depth in list(self.not_stored.items()):
            yield self._refetch(url, depth)

    async def parse(self, response: Any) -> Iterator[PageItem | Request]:
        """The page's item if it is on topic, and requests for its links.

        Not an async generator: the page is judged at once and Scrapy's item workers
        are not parked while it is being analyzed.
        """
        self.host_pages[urlsplit(response.url).hostname or ""] += 1
        if not response.meta.get("depth"):
            self.failed_seeds.discard(given_url(response.request))
        self.not_stored.pop(given_url(response.request), None)
        skipped = _skip_reason(response)
        if skipped:
            self.crawler.stats.inc_value(f"topic/skipped/{skipped}")
            if not response.meta.get("depth"):
                self._seed_skipped(response, skipped)
            return []
        try:
            page = await self.analysis.analyze(
                response.url,
                response.body,
                content_type(response),
                tuple(getattr(self, "allowed_domains", None) or ()),
                link_header_canonicals(response.headers.getlist("Link")),
            )
        except AnalysisFailed as error:
            self.crawler.stats.inc_value("topic/skipped/analysis_failed")
            logger.error("Could not analyze %s: %s", response.url, error)
            return []
        return _handed_over(response.request, list(self._judge(response, page)))

    def _item(self, response: TextResponse, page: PageAnalysis, depth: int) -> PageItem:
        parent = response.meta.get(PARENT_KEY)
        # Links come without session ids (urls.link_url); a redirect may add one.
        return PageItem(
            url=without_session(response.url),
            title=page.title,
            text=page.text,
            body=response.body,
            charset=page.charset,
            relevance=page.relevance,
            depth=depth,
            parent_url=without_session(parent) if parent else None,
            fetched_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        )

    @property
    def _settled(self) -> bool:
        """Whether a page accepted now is judged at once (``TOPIC_THRESHOLD_WAIT``)."""
        return not self.wait_for_threshold or self.threshold.settled

    async def store_last_items(self) -> None:
        """Store the accepted pages that wait for the threshold, judged by it as it is, as
        the item pipelines close (``item_pipelines_closing``) with nowhere else to keep
        them: no ``JOBDIR`` state (the crawl resumed judges them), no Redis (``closed``
        gives their requests back)."""
        if "waiting" in getattr(self, "state", {}) or self.settings.get("REDIS_URL"):
            return
        for item in list(self._release()):
            await process_item(self.crawler.engine, item)

    def _judge(self, response: TextResponse, page: PageAnalysis) -> Iterator[PageItem | Request]:
        """The page's item if it is stored, and requests for its links; what the crawl learns
        from it on the way. Before the threshold settles, the item waits (``_release``)."""
        depth = response.meta.get("depth", 0)
        verdict = self._verdict(response, page)
        self._learn(response, page, verdict)
        score = response.meta.get(SCORE_KEY, 0.0)
        judged = _Judged(
            response.url,
            page.relevance,
            depth,
            score if math.isfinite(score) else None,
            verdict.threshold,
            verdict.listed,
            verdict.accepted,
            verdict.held,
            verdict.duplicate,
            self._item(response, page, depth) if verdict.accepted else None,
            page.fingerprint,
            bool(response.meta.get(LISTED_KEY)),
        )
        self.waiting.append(judged)
        yield from self._release(everything=self._settled)
        if judged.item is not None and self.waiting and self.waiting[-1] is judged:
            # Its item waits past this callback: the engine will be done with its request.
            self._unstored[judged.url] = response.request
        stats = self.crawler.stats
        if verdict.held:
            stats.inc_value("topic/held")
        if verdict.hub:
            stats.inc_value("topic/hub")
        for directive in verdict.robots:
            stats.inc_value(f"topic/robots/{directive}")
        yield from self._follow(response, page, depth, verdict)

    def _release(self, everything: bool = True) -> Iterator[PageItem]:
        """The verdicts on the pages judged till now, said in the order they were judged
        (``page_scored``, the stats), and the items of those stored: accepted, and no
        near-duplicate of a stored page. Not ``everything``: those judged before the first
        page that waits for the threshold, whose verdicts are final.

        A page judged before the threshold settled met it at its floor, where a front page
        or a directory with a line on the topic passes: if accepted then, it is judged
        again by the threshold as it is now (a page a list of the topic has named since by
        the lower bar). Till then its item waits, and so do the verdicts on the pages
        judged after it. (The list is cut in place: with ``JOBDIR``, the spider's state
        holds it.)"""
        held = (index for index, page in enumerate(self.waiting) if page.held)
        end = len(self.waiting) if everything else next(held, len(self.waiting))
        waiting = self.waiting[:end]
        del self.waiting[:end]
        for page in waiting:
            if (request := self._unstored.pop(page.url, None)) is not None:
                self._storing.append(request)
            if page.held:
                page = self._judged_again(page)
            if page.accepted and page.duplicate is None:
                address = without_session(page.url)
                page = page._replace(duplicate=self._is_duplicate(page.fingerprint, address))
            self.crawler.signals.send_catch_log(
                page_scored,
                url=page.url,
                relevance=round(page.relevance, 6),
                accepted=page.accepted,
                duplicate=page.duplicate,
                depth=page.depth,
                score=page.score,
                threshold=round(page.threshold, 6),
                listed=page.listed,
            )
            stats = self.crawler.stats
            if not page.accepted:
                stats.inc_value("topic/dropped")
                continue
            stats.inc_value("topic/accepted")
            if page.duplicate:
                stats.inc_value("topic/duplicate")
            elif page.item is not None:
                yield page.item

    def requests_unstored(self) -> list[Request]:
        """The requests of the accepted pages that wait for the threshold, and of those
        released whose items the pipelines may not have stored yet (till no item is in
        process). A ``JOBDIR`` frontier keeps them taken (``DiskQueue.settle``): the crawl
        resumed after a ``kill -9`` fetches them again; a clean stop keeps the pages that
        wait in the spider's state."""
        if self._storing and not items_in_process(self.crawler.engine):
            self._storing.clear()
        return [*self._unstored.values(), *self._storing]

    def _judged_again(self, page: _Judged) -> _Judged:
        crawl_threshold = self.threshold.value
        listed = self._listed(page.url, page.from_list)
        threshold = self.listed_threshold if listed else crawl_threshold
        accepted = page.relevance >= threshold
        if accepted and page.relevance < crawl_threshold:
            self.crawler.stats.inc_value("topic/listed")
        return page._replace(threshold=threshold, listed=listed, accepted=accepted)

    def _verdict(self, response: TextResponse, page: PageAnalysis) -> _Verdict:
        """Whether the page is relevant, and whether it is stored."""
        self.threshold.observe(page.relevance)
        crawl_threshold = self.threshold.value
        # A site's table of contents (a front page, an index) names the topic's pages and
        # may score like them; unless most of what it lists is on topic it is not about
        # the topic: followed as a relevant page, not stored. If it is, it is a list of
        # the topic, and vouches for what it lists.
        topical = page.topical_link_share >= TOPICAL_HUB_SHARE
        site_contents = page.link_share > self.hub_link_ratio and not topical
        # A page a list of the topic names is held to the lower bar (see listings), unless
        # it is a site's table of contents: that bar is for storing a page, and such a page
        # is never stored, so it would only make the crawl follow it as a relevant page.
        from_list = bool(response.meta.get(LISTED_KEY))
        listed = not site_contents and self._listed(response.url, from_list)
        threshold = self.listed_threshold if listed else crawl_threshold
        relevant = page.relevance >= threshold
        hub = relevant and site_contents
        # A list of the topic vouches for what it lists: a chapter's contents, its
        # introduction above it or not (DocBook's chapter pages: 0.58 link text).
        topic_list = relevant and topical and page.link_share > self.list_link_ratio
        entries = self.lists.add(page) if topic_list else frozenset()
        robots = self._robots(response, page)
        accepted = relevant and not hub and NOINDEX not in robots
        # The first pages of a crawl meet the threshold at its floor, where a front page or
        # a directory with a line on the topic passes: they wait for it to settle.
        held = accepted and not listed and not self._settled
        if accepted and page.relevance < crawl_threshold:
            self.crawler.stats.inc_value("topic/listed")
        # Near-duplicates are told in the order pages are judged: a page that waits is
        # compared with the stored pages once its verdict is said.
        address = without_session(response.url)
        duplicate = accepted and (
            None if held or self.waiting else self._is_duplicate(page.fingerprint, address)
        )
        return _Verdict(
            threshold, listed, relevant, hub, accepted, held, duplicate, robots, entries
        )

    def _learn(self, response: TextResponse, page: PageAnalysis, verdict: _Verdict) -> None:
        """What the page tells the link scores to come: the link-score mix, its URL
        template's yield, its siblings' and its canonical address.

        A near-duplicate of a stored page (a list's last page, served again for any page
        number past it) says nothing the stored page did not: they learn from it as from an
        off-topic page, or each copy would raise the links to the next and the crawl go down
        such a list forever.
        """
        gain = 0.0 if verdict.duplicate else page.relevance
        self.strategy.learn(tuple(response.meta.get(FEATURES_KEY, ())), gain)
        self.patterns.record(page.template, verdict.relevant and not verdict.duplicate)
        self.siblings.record(response.meta.get(PARENT_KEY), verdict.relevant)
        if page.canonical:
            self.canonicals.add(page.canonical)
            self.dropped_parameters.learn(without_session(response.url), page.canonical)

    def _follow(
        self, response: TextResponse, page: PageAnalysis, depth: int, verdict: _Verdict
    ) -> Iterator[Request]:
        """Requests for the page's links that are new or score better than when sent, and
        for the site's scripts it loads, whose links are the page's too."""
        stats = self.crawler.stats
        tunnel = 0 if verdict.relevant else response.meta.get(TUNNEL_KEY, 0) + 1
        closed = tunnel > self.tunnel_depth
        if closed:
            stats.inc_value("topic/tunnel_closed")
        if page.truncated:
            stats.inc_value("topic/links_truncated")
        lineage = max(page.relevance, self.parent_decay * response.meta.get(LINEAGE_KEY, 0.0))
        copy = self._copies_parent(response, page)
        if copy:
            stats.inc_value("topic/parent_copy")
        origin = _Origin(response.url, depth, tunnel, lineage, page.fingerprint)
        if NOFOLLOW in verdict.robots or copy:
            yield from self._requests(origin, (), verdict.entries)
            return
        yield from self._script_requests(origin, page)
        yield from self._requests(origin, page.links, verdict.entries)

    def _requests(
        self,
        origin: _Origin,
        found: Iterable[ScoredLink],
        entries: frozenset[str],
        share_cash: bool = True,
    ) -> Iterator[Request]:
        """Requests for the links found on ``origin`` that are new or score better than
        when sent, but to the page itself; all of them reported in ``links_discovered``."""
        stats = self.crawler.stats
        depth, tunnel, lineage = origin.depth, origin.tunnel, origin.lineage
        closed = tunnel > self.tunnel_depth
        links = [
            (score, features, link, not closed or link.anchor > 0)
            for score, features, link in self._score_links(origin, found, share_cash)
        ]
        self.crawler.signals.send_catch_log(
            links_discovered,
            page_url=without_session(origin.url),  # as the page's item, and its row, have it
            links=[
                {"url": link.url, "anchor": link.text, "score": score, "followed": follow}
                for score, _, link, follow in links
            ],
        )
        known = reserved = 0
        for score, features, link, follow in links:
            if link.url == origin.url:
                continue
            if not follow:
                if not self.tunnel_reserve:
                    continue
                score = reserve_score(score, depth + 1)
            if not self.sent_links.fresh(link.url, score, depth + 1):
                known += 1
                continue
            meta = {
                SCORE_KEY: score,
                TUNNEL_KEY: tunnel,
                LINEAGE_KEY: lineage,
                PARENT_KEY: origin.url,
                FEATURES_KEY: features,
            }
            if origin.fingerprint:
                meta[PARENT_TEXT_KEY] = origin.fingerprint
            if link.url in entries:
                meta[LISTED_KEY] = True
            if not follow:
                reserved += 1
                meta[RESERVE_KEY] = True
            yield Request(link.url, errback=self.failed, meta=meta)
        if known:
            stats.inc_value("topic/links_known", known)
        if reserved:
            stats.inc_value("topic/reserved", reserved)

    def _script_requests(self, origin: _Origin, page: PageAnalysis) -> Iterator[Request]:
        """Requests for the site's scripts the page loads (:class:`SiteScripts`), each once,
        before any link: what they write is the page's (a help system's whole table of
        contents). A page at ``DEPTH_LIMIT`` asks for none, nor counts as loading them:
        Scrapy's depth limit would drop the request, and the script, due once, would never
        be asked for again."""
        if 0 < self.depth_limit <= origin.depth:
            return
        for url in page.scripts:
            if not self.scripts.due(url, seed=origin.depth == 0):
                continue
            if self.scripts.is_barren(url):
                self.crawler.stats.inc_value("topic/script/barren")
                continue
            self.crawler.stats.inc_value("topic/script/requested")
            script = {"origin": origin, "base": page.base_url, "charset": page.charset}
            yield Request(
                url,
                callback=self.parse_script,
                errback=self.script_failed,
                meta={SCORE_KEY: SEED_SCORE, SCRIPT_KEY: script},
            )

    async def parse_script(self, response: Any) -> Iterator[Request]:
        """Requests for the links a script writes, scored and followed as links of the page
        that loads it. The script is read in its declared charset, else in the page's."""
        script = response.meta[SCRIPT_KEY]
        # Its links are the page's: one click from it, for Scrapy's depth too.
        response.meta["depth"] = script["origin"].depth
        html = script_html(script_text(response.body, content_type(response), script["charset"]))
        self.scripts.record(response.url, bool(html))
        if not html:
            self.crawler.stats.inc_value("topic/script/no_links")
            return _handed_over(response.request, [])
        try:
            written = await self.analysis.analyze(
                script["origin"].url,
                written_page(html, script["base"], script["charset"]),
                "text/html",
                tuple(getattr(self, "allowed_domains", None) or ()),
            )
        except AnalysisFailed as error:
            logger.error("Could not read the links of %s: %s", response.url, error)
            return _handed_over(response.request, [])
        self.crawler.stats.inc_value("topic/script/links", len(written.links))
        if written.truncated:
            self.crawler.stats.inc_value("topic/links_truncated")
        requests = self._requests(script["origin"], written.links, frozenset(), share_cash=False)
        return _handed_over(response.request, list(requests))

    def script_failed(self, failure: Failure) -> None:
        """A script that could not be had writes no links: counted, not logged as a page."""
        self.scripts.record(failure.request.url, False)  # type: ignore[attr-defined]
        self.crawler.stats.inc_value("topic/script/failed")

    def _listed(self, url: str, from_list: bool) -> bool:
        """Whether the page at ``url`` is held to the lower bar of a page a list of the topic
        names: the crawl's threshold asks more, and a list this spider judged names it, or
        the one its request came from (``from_list``: judged by another worker, in Redis)."""
        return self.listed_threshold < self.threshold.value and (
            from_list or without_session(url) in self.lists
        )

    def _robots(self, response: TextResponse, page: PageAnalysis) -> frozenset[str]:
        """What the page's robots tags and its ``X-Robots-Tag`` headers forbid."""
        if self.robots_agent is None:
            return frozenset()
        headers = [value.decode("latin-1") for value in response.headers.getlist("X-Robots-Tag")]
        return page.robots | header_directives(headers, self.robots_agent)

    def failed(self, failure: Failure) -> None:
        """A request that got no page: one log line and a stat naming why, not a traceback."""
        # Counted (and said) by the middleware that dropped it.
        if failure.check(HostFull, FetchedElsewhere):
            return
        request = failure.request  # type: ignore[attr-defined]
        reason = failure.type.__name__ if failure.type else "Unknown"
        message = failure.getErrorMessage() or _UNSAID.get(reason, reason)
        if failure.check(HttpError):
            status = failure.value.response.status
            reason = f"{reason}/{status}"
            message = f"HTTP {status_message(status)}"  # not "Ignoring non-200 response"
            self.patterns.record(template(request.url), False)  # a dead folder is barren too
        url = given_url(request)
        if url != request.url:  # where its redirects ended
            message = f"{message} (redirected to {request.url})"
        self._not_fetched(request, url, reason, message)

    def _seed_skipped(self, response: Any, reason: str) -> None:
        """A seed that is no page (a PDF, an image) gives no link to follow: said in one
        line, as a seed not fetched is, and counted as one."""
        self.seeds_failed += 1
        logger.warning(
            "Not crawled %s: %s (Content-Type %s)",
            response.url,
            _SKIPPED[reason],
            content_type(response) or "none",
        )

    def _not_fetched(self, request: Request, url: str, reason: str, message: str) -> None:
        """One line, at WARNING for a seed, and the stat ``topic/failed/<reason>``."""
        self.crawler.stats.inc_value(f"topic/failed/{reason}")
        seed = request.meta.get("depth", 0) == 0
        self.seeds_failed += seed
        if seed:
            self.failed_seeds.add(url)
        level = logging.WARNING if seed else logging.INFO
        logger.log(level, "Not fetched %s: %s", url, message)

    def _copies_parent(self, response: TextResponse, page: PageAnalysis) -> bool:
        """Whether the page says what the page of the same URL template whose link led to
        it said: a list served again for a page number past its last, an empty calendar day
        after another. Its links lead on down such a chain and are not followed; the
        parent's were. Only in one template: a page whose own text is short beside a footer
        every page has may be near its parent's text, and its links are still the way on.
        A page with no text (a frameset) copies nothing."""
        parent = response.meta.get(PARENT_TEXT_KEY)
        return (
            self.duplicates is not None
            and bool(parent and page.fingerprint)
            and near(parent, page.fingerprint, self.duplicates.distance)
            and template(response.meta.get(PARENT_KEY, "")) == page.template
        )

    def _is_duplicate(self, fingerprint: int, url: str) -> bool:
        """Whether another page already stored has (nearly) the same text. If not, this one
        is remembered with its address. If so, the two addresses, at one path, show which
        query parameters change nothing (``DroppedParameters``) on a site that names no
        canonical address: only pages this worker stored, as in Redis another's are a
        fingerprint without an address. A page fetched again because a pipeline failed to
        store it (see ``not_stored``) is no copy of itself."""
        if self.duplicates is None:
            return False
        if self.duplicates.add_if_new(fingerprint, url):
            make_room(self.stored_addresses, REMEMBERED)
            self.stored_addresses[fingerprint] = url
            return False
        original = self.stored_addresses.get(self.duplicates.near(fingerprint))
        if original is not None and original != url:
            self.dropped_parameters.learn_same(url, original)
        return original != url

    def _score_links(
        self, origin: _Origin, page_links: Iterable[ScoredLink], share_cash: bool
    ) -> list[tuple[float, tuple[float, ...], ScoredLink]]:
        """The page's links the crawl may follow, with their scores and score terms, best
        first: the engine may start downloading the first requests before the last are queued.
        The page's OPIC cash goes to the links of its markup, once (``share_cash``)."""
        links = []
        for found in page_links:
            address = self.dropped_parameters.address(found.url)
            link = found if address == found.url else replace(found, url=address)
            if link.url in self.canonicals:
                self.crawler.stats.inc_value("topic/canonical_known")
                continue
            if self._host_full(link.url):
                self.crawler.stats.inc_value("topic/host_capped")
                continue
            if self.drop_noise_urls and (link.noise or self.patterns.is_barren(link.template)):
                self.crawler.stats.inc_value("topic/noise_url")
                continue
            if link.translation and not self.follow_translations:
                self.crawler.stats.inc_value("topic/translation_link")
                continue
            links.append(link)
        if self.importance is not None and share_cash:
            self.importance.distribute(origin.url, [link.url for link in links])
        scored = []
        for link in links:
            candidate = LinkCandidate(
                link.anchor,
                origin.depth + 1,
                origin.lineage,
                navigation=link.navigation,
                pattern_yield=self.patterns.yield_of(link.template),
                importance=self.importance.importance(link.url) if self.importance else 0.0,
            )
            scored.append((*self.strategy.score_and_features(candidate), link))
        scored.sort(key=lambda item: -item[0])
        return scored
