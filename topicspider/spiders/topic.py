"""The ``topic`` spider: spider arguments in, scored requests and on-topic pages out."""

from __future__ import annotations

import logging
import math
from collections import Counter
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import Request, Spider, signals
from scrapy.http import TextResponse
from scrapy.link import Link
from scrapy.linkextractors import LinkExtractor
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.response import get_base_url

from topicspider.charset import decode
from topicspider.exceptions import ConfigError
from topicspider.importance import Opic
from topicspider.items import PageItem
from topicspider.keywords import KeywordVector, load_keywords
from topicspider.pqueues import SCORE_KEY
from topicspider.redis.crawl import check_settings
from topicspider.relevance import (
    SEED_SCORE,
    STRATEGIES,
    WEIGHTINGS,
    BestFirst,
    LinkCandidate,
    Relevance,
    Strategy,
)
from topicspider.seeds import load_seeds
from topicspider.signals import links_discovered, page_scored, pipelines_closing
from topicspider.simhash import SimHashIndex, simhash
from topicspider.slots import SLOT_POLICIES
from topicspider.text import LinkContext, canonical, extract_page, tokenize
from topicspider.thresholds import Verdicts
from topicspider.thresholds import check_settings as check_threshold_settings
from topicspider.urlpatterns import PatternStats, is_noise

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from twisted.python.failure import Failure
    from typing_extensions import Self

logger = logging.getLogger(__name__)

TUNNEL_KEY = "topic_tunnel"
PARENT_KEY = "topic_parent"
#: The link-score terms a request was scored with, for adaptive strategies to learn from.
FEATURES_KEY = "topic_features"


_CONTROL_BYTES = bytes([*range(9), *range(14, 32)])


def _skip_reason(response: Any) -> str | None:
    """Why a response is not a page to score, if it is not: the stats name it."""
    if not isinstance(response, TextResponse):
        return "not_text"
    if b"html" not in (response.headers.get("Content-Type") or b"text/html"):
        return "not_html"
    if not response.body.strip():
        return "empty"
    head = response.body[:4096]
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    if b"\x00" in head or controls > len(head) // 20:
        return "binary"
    return None


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
        self.seeds = load_seeds(seeds) if seeds else []
        self.keywords: KeywordVector = load_keywords(keywords or "")
        self.allow = allow
        self.deny = deny

    @classmethod
    def check_arguments(
        cls, settings: BaseSettings, seeds: str | None = None, keywords: str | None = None, **_: Any
    ) -> None:
        """Fail before the crawl starts, with one clear message, on bad input.

        Seeds are optional with ``REDIS_URL``: a worker without them joins the shared crawl.
        """
        if seeds or not settings.get("REDIS_URL"):
            load_seeds(seeds)
        vector = load_keywords(keywords or "")
        for name, choices in (
            ("TOPIC_STRATEGY", STRATEGIES),
            ("TOPIC_WEIGHTING", WEIGHTINGS),
            ("TOPIC_SLOT_POLICY", SLOT_POLICIES),
        ):
            if settings.get(name) not in choices:
                raise ConfigError(
                    f"{name}={settings.get(name)!r}: expected one of {', '.join(sorted(choices))}"
                )
        check_threshold_settings(settings)
        if settings.get("REDIS_URL"):
            check_settings(settings, cls.name, vector)

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.configure(crawler)
        crawler.signals.connect(spider.restore_state, signal=signals.spider_opened)
        crawler.signals.connect(spider.store_waiting, signal=pipelines_closing)
        return spider

    def configure(self, crawler: Crawler) -> None:
        settings = crawler.settings
        if not self.seeds and not settings.get("REDIS_URL"):
            load_seeds(None)  # raises: a local crawl needs seeds
        # Which pages are stored; (item, tokens, link score) of each scored page.
        self.verdicts: Verdicts[tuple[PageItem, list[str], float]]
        self.verdicts = Verdicts.from_crawler(crawler)
        self.tunnel_depth = settings.getint("TOPIC_TUNNEL_DEPTH")
        self.context_chars = settings.getint("TOPIC_CONTEXT_CHARS")
        self.max_chars = settings.getint("TOPIC_MAX_TEXT_CHARS")
        self.noise_ratio = settings.getfloat("TOPIC_NOISE_LINK_RATIO")
        self.drop_noise_urls = settings.getbool("TOPIC_DROP_NOISE_URLS")
        self.max_links = settings.getint("TOPIC_MAX_LINKS_PER_PAGE")
        self.max_pages_per_host = settings.getint("TOPIC_MAX_PAGES_PER_HOST")
        self.host_pages: Counter[str] = Counter()
        self.relevance = Relevance(
            self.keywords,
            title_weight=settings.getfloat("TOPIC_TITLE_WEIGHT"),
            weighting=settings.get("TOPIC_WEIGHTING"),
        )
        self.strategy = self._strategy(settings.get("TOPIC_STRATEGY"), settings)
        self.patterns = PatternStats()
        distance = settings.getint("TOPIC_DUPLICATE_DISTANCE")
        self.duplicates = SimHashIndex(distance) if distance >= 0 else None
        use_importance = settings.getfloat("TOPIC_IMPORTANCE_WEIGHT") > 0
        self.importance = Opic() if use_importance else None
        if settings.getbool("TOPIC_STAY_ON_SITE"):
            # Host names, not host:port, which Scrapy's LinkExtractor would compare.
            self.allowed_domains = sorted({urlsplit(url).hostname or "" for url in self.seeds})
        self.link_extractor = LinkExtractor(allow=self.allow or (), deny=self.deny or ())

    def _strategy(self, name: str, settings: BaseSettings) -> Strategy:
        if name != BestFirst.name:
            return STRATEGIES[name]()
        return BestFirst(
            self.relevance,
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
        what the crawl learned (URL templates, page fingerprints, link-score mix) resumes."""
        state = getattr(self, "state", None)
        if state is None:
            return
        for name in ("patterns", "duplicates", "importance", "strategy", "host_pages", "verdicts"):
            if name in state and getattr(self, name) is not None:
                setattr(self, name, state[name])
            else:
                state[name] = getattr(self, name)
        if isinstance(self.strategy, BestFirst):
            self.strategy.relevance = self.relevance

    def _host_full(self, url: str) -> bool:
        if not self.max_pages_per_host:
            return False
        return self.host_pages[urlsplit(url).hostname or ""] >= self.max_pages_per_host

    def _on_site(self, url: str) -> bool:
        domains = getattr(self, "allowed_domains", None)
        if not domains:
            return True
        host = urlsplit(url).hostname or ""
        return any(host == d or host.endswith(f".{d}") for d in domains)

    async def start(self) -> AsyncIterator[Request]:
        for url in self.seeds:
            yield Request(url, meta={SCORE_KEY: SEED_SCORE, TUNNEL_KEY: 0}, errback=self.failed)

    def parse(self, response: Any) -> Iterator[PageItem | Request]:
        stats = self.crawler.stats
        self.host_pages[urlsplit(response.url).hostname or ""] += 1
        skipped = _skip_reason(response)
        if skipped:
            stats.inc_value(f"topic/skipped/{skipped}")
            return
        content_type = (response.headers.get("Content-Type") or b"").decode("latin-1")
        charset, _ = decode(response.body, content_type)
        if response.encoding != charset:
            response = response.replace(encoding=charset)
        page = extract_page(
            response.selector.root,
            get_base_url(response),
            context_chars=self.context_chars,
            max_chars=self.max_chars,
            noise_ratio=self.noise_ratio,
        )
        tokens = tokenize(page.body)
        relevance = self.relevance.page(page.title, tokens)
        depth = response.meta.get("depth", 0)
        item = PageItem(
            url=response.url,
            title=page.title,
            text=page.body,
            body=response.body,
            charset=charset,
            relevance=relevance,
            depth=depth,
            parent_url=response.meta.get(PARENT_KEY),
            fetched_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        )
        score = response.meta.get(SCORE_KEY, 0.0)
        # On topic by the threshold of now; whether it is stored may be decided later.
        on_topic = self.verdicts.score(relevance, (item, tokens, score))
        self.strategy.learn(tuple(response.meta.get(FEATURES_KEY, ())), relevance)
        self.patterns.record(response.url, on_topic)
        yield from self._verdicts()
        tunnel = 0 if on_topic else response.meta.get(TUNNEL_KEY, 0) + 1
        follow = tunnel <= self.tunnel_depth
        if not follow:
            stats.inc_value("topic/tunnel_closed")
        links = self._score_links(response, page.links, relevance, depth)
        self.crawler.signals.send_catch_log(
            links_discovered,
            page_url=response.url,
            links=[
                {"url": link.url, "anchor": link.text, "score": score, "followed": follow}
                for score, _, link in links
            ],
        )
        if follow:
            for score, features, link in links:
                yield Request(
                    link.url,
                    errback=self.failed,
                    meta={
                        SCORE_KEY: score,
                        TUNNEL_KEY: tunnel,
                        PARENT_KEY: response.url,
                        FEATURES_KEY: features,
                    },
                )

    def _verdicts(self) -> Iterator[PageItem]:
        """Stats and items of the pages just judged; ``page_scored`` in fetch order."""
        stats = self.crawler.stats
        for verdict in self.verdicts.new():
            item, tokens, _ = verdict.page
            if not verdict.accepted:
                stats.inc_value("topic/dropped")
                continue
            stats.inc_value("topic/accepted")
            if self._is_duplicate(tokens):
                stats.inc_value("topic/duplicate")
            else:
                yield item
        for verdict in self.verdicts.in_order():
            item, _, score = verdict.page
            self.crawler.signals.send_catch_log(
                page_scored,
                url=item.url,
                relevance=round(item.relevance, 6),
                accepted=verdict.accepted,
                depth=item.depth,
                score=score if math.isfinite(score) else None,
                threshold=round(verdict.threshold, 6),
            )

    def store_waiting(self) -> list[PageItem]:
        """The crawl stops: judge the pages still waiting for a verdict; the items to store."""
        self.verdicts.close()
        return list(self._verdicts())

    def closed(self, reason: str) -> None:
        if self.verdicts.pending:  # only if ITEM_PROCESSOR is not topicspider's
            logger.warning(
                "%d pages waited for a verdict and were not judged: set ITEM_PROCESSOR to "
                "topicspider.pipelines.manager.TopicPipelineManager",
                len(self.verdicts.pending),
            )

    def failed(self, failure: Failure) -> None:
        """A request that got no page: one log line and a stat naming why, not a traceback."""
        request = failure.request  # type: ignore[attr-defined]
        reason = failure.type.__name__ if failure.type else "Unknown"
        if failure.check(HttpError):
            reason = f"{reason}/{failure.value.response.status}"
        self.crawler.stats.inc_value(f"topic/failed/{reason}")
        level = logging.WARNING if request.meta.get("depth", 0) == 0 else logging.INFO
        logger.log(level, "Not fetched %s: %s", request.url, failure.getErrorMessage())

    def _is_duplicate(self, tokens: list[str]) -> bool:
        """Whether a page already stored has (nearly) the same text; if not, remember this one."""
        if self.duplicates is None:
            return False
        fingerprint = simhash(tokens)
        if self.duplicates.near(fingerprint) is not None:
            return True
        self.duplicates.add(fingerprint)
        return False

    def _score_links(
        self, response: TextResponse, contexts: dict, relevance: float, depth: int
    ) -> list[tuple[float, tuple[float, ...], Link]]:
        """The page's on-site links with their scores and score terms, best first: the
        engine may start downloading the first requests before the last are queued."""
        links = []
        extracted = self.link_extractor.extract_links(response)
        if self.max_links and len(extracted) > self.max_links:
            self.crawler.stats.inc_value("topic/links_truncated")
            extracted = extracted[: self.max_links]
        for link in extracted:
            if not self._on_site(link.url):
                continue
            if self._host_full(link.url):
                self.crawler.stats.inc_value("topic/host_capped")
                continue
            if self.drop_noise_urls and (is_noise(link.url) or self.patterns.is_barren(link.url)):
                self.crawler.stats.inc_value("topic/noise_url")
                continue
            links.append(link)
        if self.importance is not None:
            self.importance.distribute(response.url, [link.url for link in links])
        scored = []
        for link in links:
            candidate = LinkCandidate(
                contexts.get(canonical(link.url)) or LinkContext(link.url, link.text, link.text),
                depth + 1,
                relevance,
                pattern_yield=self.patterns.yield_of(link.url),
                importance=self.importance.importance(link.url) if self.importance else 0.0,
            )
            scored.append((*self.strategy.score_and_features(candidate), link))
        scored.sort(key=lambda item: -item[0])
        return scored
