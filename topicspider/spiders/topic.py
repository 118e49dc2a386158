"""The ``topic`` spider: spider arguments in, scored requests and on-topic pages out."""

from __future__ import annotations

import logging
import math
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import Request, Spider
from scrapy.http import TextResponse
from scrapy.link import Link
from scrapy.linkextractors import LinkExtractor
from scrapy.utils.response import get_base_url

from topicspider.charset import decode
from topicspider.exceptions import ConfigError
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
from topicspider.signals import links_discovered, page_scored
from topicspider.slots import SLOT_POLICIES
from topicspider.text import LinkContext, canonical, extract_page

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from typing_extensions import Self

logger = logging.getLogger(__name__)

TUNNEL_KEY = "topic_tunnel"
PARENT_KEY = "topic_parent"


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
        if settings.get("REDIS_URL"):
            check_settings(settings, cls.name, vector)

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.configure(crawler)
        return spider

    def configure(self, crawler: Crawler) -> None:
        settings = crawler.settings
        if not self.seeds and not settings.get("REDIS_URL"):
            load_seeds(None)  # raises: a local crawl needs seeds
        self.threshold = settings.getfloat("TOPIC_THRESHOLD")
        self.tunnel_depth = settings.getint("TOPIC_TUNNEL_DEPTH")
        self.context_chars = settings.getint("TOPIC_CONTEXT_CHARS")
        self.max_chars = settings.getint("TOPIC_MAX_TEXT_CHARS")
        self.relevance = Relevance(
            self.keywords,
            title_weight=settings.getfloat("TOPIC_TITLE_WEIGHT"),
            weighting=settings.get("TOPIC_WEIGHTING"),
        )
        self.strategy = self._strategy(settings.get("TOPIC_STRATEGY"), settings)
        if settings.getbool("TOPIC_STAY_ON_SITE"):
            # Host names, not host:port, which Scrapy's LinkExtractor would compare.
            self.allowed_domains = sorted({urlsplit(url).hostname or "" for url in self.seeds})
        self.link_extractor = LinkExtractor(allow=self.allow or (), deny=self.deny or ())

    def _strategy(self, name: str, settings: BaseSettings) -> Strategy:
        if name == BestFirst.name:
            return BestFirst(self.relevance, settings.getfloat("TOPIC_ANCHOR_WEIGHT"))
        return STRATEGIES[name]()

    def _on_site(self, url: str) -> bool:
        domains = getattr(self, "allowed_domains", None)
        if not domains:
            return True
        host = urlsplit(url).hostname or ""
        return any(host == d or host.endswith(f".{d}") for d in domains)

    async def start(self) -> AsyncIterator[Request]:
        for url in self.seeds:
            yield Request(url, meta={SCORE_KEY: SEED_SCORE, TUNNEL_KEY: 0})

    def parse(self, response: Any) -> Iterator[PageItem | Request]:
        stats = self.crawler.stats
        if not isinstance(response, TextResponse) or b"html" not in (
            response.headers.get("Content-Type") or b"text/html"
        ):
            stats.inc_value("topic/skipped/not_html")
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
        )
        relevance = self.relevance.page(page.title, page.body)
        depth = response.meta.get("depth", 0)
        accepted = relevance >= self.threshold
        self.crawler.signals.send_catch_log(
            page_scored,
            url=response.url,
            relevance=round(relevance, 6),
            accepted=accepted,
            depth=depth,
            score=score if math.isfinite(score := response.meta.get(SCORE_KEY, 0.0)) else None,
        )
        if accepted:
            stats.inc_value("topic/accepted")
            tunnel = 0
            yield PageItem(
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
        else:
            stats.inc_value("topic/dropped")
            tunnel = response.meta.get(TUNNEL_KEY, 0) + 1
        follow = tunnel <= self.tunnel_depth
        if not follow:
            stats.inc_value("topic/tunnel_closed")
        links = self._score_links(response, page.links, relevance, depth)
        self.crawler.signals.send_catch_log(
            links_discovered,
            page_url=response.url,
            links=[
                {"url": link.url, "anchor": link.text, "score": score, "followed": follow}
                for score, link in links
            ],
        )
        if follow:
            for score, link in links:
                yield Request(
                    link.url,
                    meta={SCORE_KEY: score, TUNNEL_KEY: tunnel, PARENT_KEY: response.url},
                )

    def _score_links(
        self, response: TextResponse, contexts: dict, relevance: float, depth: int
    ) -> list[tuple[float, Link]]:
        """The page's on-site links with their scores, best first: the engine may start
        downloading the first requests before the last are queued."""
        scored = []
        for link in self.link_extractor.extract_links(response):
            if not self._on_site(link.url):
                continue
            context = contexts.get(canonical(link.url)) or LinkContext(
                link.url, link.text, link.text
            )
            scored.append((self.strategy.score(LinkCandidate(context, depth + 1, relevance)), link))
        scored.sort(key=lambda pair: -pair[0])
        return scored
