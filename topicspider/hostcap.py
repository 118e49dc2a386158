"""A cap on the pages downloaded from one host, held whatever is already queued, and
cluster-wide in a distributed crawl."""

from __future__ import annotations

import logging
from collections import Counter
from contextlib import suppress
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.utils.httpobj import urlparse_cached

from topicspider.redis.connection import UNAVAILABLE, Outage, get_client, key_prefix
from topicspider.redis.scripts import GIVE_BACK_HOST_PAGE, GONE, TAKE_HOST_PAGE
from topicspider.robots import is_robots_txt
from topicspider.scripts import SCRIPT_KEY

if TYPE_CHECKING:
    from typing import Self

    from redis import Redis
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

#: Where the download was counted ("local" or "shared") and for which host. Scrapy copies a
#: request's meta into its retries and into the request a page's ``<meta refresh>`` leads to.
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
    cached page counts. A request that carries the count of the download it follows (a
    retry, the address a page's ``<meta refresh>`` sends to on the same host) is not counted
    again: the chain is one page. robots.txt does not count, nor does a script whose links
    the crawl reads (:mod:`topicspider.scripts`): neither is a page. With ``JOBDIR`` the
    counts resume. In a distributed crawl (``REDIS_URL``) the workers share the counts in
    Redis (``P:host_pages``, see :mod:`topicspider.redis.scripts`); while Redis is away a
    worker counts on its own.
    """

    def __init__(self, crawler: Crawler, cap: int, server: Redis | None = None) -> None:
        self.crawler = crawler
        self.cap = cap
        self.downloads: Counter[str] = Counter()
        self.full_hosts: set[str] = set()
        self.server = server
        if server is not None:
            prefix = key_prefix(crawler.settings, crawler.spidercls.name)
            self.keys = [f"{prefix}:host_pages", f"{prefix}:meta"]
            self._take = server.register_script(TAKE_HOST_PAGE)
            self._give_back = server.register_script(GIVE_BACK_HOST_PAGE)
            self._outage = Outage(
                "pages per host are counted by this worker alone until it is back"
            )
        crawler.signals.connect(self.restore_state, signal=signals.engine_started)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        cap = crawler.settings.getint("TOPIC_MAX_PAGES_PER_HOST")
        if cap <= 0:
            raise NotConfigured
        server = get_client(crawler.settings) if crawler.settings.get("REDIS_URL") else None
        return cls(crawler, cap, server)

    def restore_state(self) -> None:
        """Share the counts with ``spider.state``, which ``JOBDIR`` keeps between runs
        (set by Scrapy's ``SpiderState`` when the spider opens, before the engine starts)."""
        state = getattr(self.crawler.spider, "state", None)
        if state is not None:
            self.downloads = state.setdefault("host_downloads", self.downloads)

    def process_request(self, request: Request) -> None:
        if is_robots_txt(request) or SCRIPT_KEY in request.meta:
            return
        host = urlparse_cached(request).hostname or ""
        if previous := request.meta.get(COUNTED_KEY):
            if previous[1] == host:
                return
            self._uncount(request)  # a refresh to another host: that host counts it
        counted = self._count(host)
        if counted is None:
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
        request.meta[COUNTED_KEY] = (counted, host)

    def _count(self, host: str) -> str | None:
        """Count a download from ``host``: where it was counted, or None if the host is full."""
        if self.server is not None:
            try:
                taken = self._take(keys=self.keys, args=[host, self.cap])
            except UNAVAILABLE as error:
                self._outage.started(error)
            else:
                self._outage.ended()
                if taken != GONE:  # gone: the scheduler stops the worker
                    return "shared" if taken else None
        if self.downloads[host] >= self.cap:
            return None
        self.downloads[host] += 1
        return "local"

    def process_response(self, request: Request, response: Response) -> Response:
        if 300 <= response.status < 400:  # the redirect it leads to counts instead
            self._uncount(request)
        return response

    def process_exception(self, request: Request, exception: Exception) -> None:
        self._uncount(request)

    def _uncount(self, request: Request) -> None:
        counted, host = request.meta.pop(COUNTED_KEY, (None, ""))
        if counted == "local":
            self.downloads[host] -= 1
        elif counted == "shared":
            # If Redis is away, the count stays one too high: a page less from the host.
            with suppress(*UNAVAILABLE):
                self._give_back(keys=self.keys, args=[host])
