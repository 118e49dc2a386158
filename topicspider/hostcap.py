"""A cap on the pages downloaded from one host, held whatever is already queued."""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.utils.httpobj import urlparse_cached

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

COUNTED_KEY = "topic_host_counted"


class HostFull(IgnoreRequest):
    """A request dropped because its host has had its pages; counted, not logged each time."""


class HostPageCapMiddleware:
    """Downloader middleware for ``TOPIC_MAX_PAGES_PER_HOST``. The spider stops following
    a host's links once it has parsed that many of its pages, but by then the frontier
    may hold hundreds more (a trap, a large site), and more are downloading. This counts
    downloads as they start and drops a host's requests past the cap.

    It sits after the redirect and retry middlewares, so a redirect or a failed download
    does not count and the request that follows it does, and before the HTTP cache, so a
    cached page counts. robots.txt does not count. With ``JOBDIR`` the counts resume; in a
    distributed crawl each worker keeps its own.
    """

    def __init__(self, crawler: Crawler, cap: int) -> None:
        self.crawler = crawler
        self.cap = cap
        self.downloads: Counter[str] = Counter()
        self.full_hosts: set[str] = set()
        crawler.signals.connect(self.restore_state, signal=signals.engine_started)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        cap = crawler.settings.getint("TOPIC_MAX_PAGES_PER_HOST")
        if cap <= 0:
            raise NotConfigured
        return cls(crawler, cap)

    def restore_state(self) -> None:
        """Share the counts with ``spider.state``, which ``JOBDIR`` keeps between runs
        (set by Scrapy's ``SpiderState`` when the spider opens, before the engine starts)."""
        state = getattr(self.crawler.spider, "state", None)
        if state is not None:
            self.downloads = state.setdefault("host_downloads", self.downloads)

    def process_request(self, request: Request) -> None:
        if request.meta.get("dont_obey_robotstxt"):  # robots.txt
            return
        host = urlparse_cached(request).hostname or ""
        if self.downloads[host] >= self.cap:
            if host not in self.full_hosts:
                self.full_hosts.add(host)
                logger.info(
                    "%s has had its %d pages (TOPIC_MAX_PAGES_PER_HOST): its other requests "
                    "are dropped",
                    host,
                    self.cap,
                )
            self.crawler.stats.inc_value("topic/host_full_dropped")
            raise HostFull(f"{host} has had its {self.cap} pages")
        self.downloads[host] += 1
        request.meta[COUNTED_KEY] = True

    def process_response(self, request: Request, response: Response) -> Response:
        if 300 <= response.status < 400:  # the redirect it leads to counts instead
            self._uncount(request)
        return response

    def process_exception(self, request: Request, exception: Exception) -> None:
        self._uncount(request)

    def _uncount(self, request: Request) -> None:
        if request.meta.pop(COUNTED_KEY, False):
            self.downloads[urlparse_cached(request).hostname or ""] -= 1
