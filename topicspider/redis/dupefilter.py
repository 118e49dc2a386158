"""The crawl's exact set of seen request fingerprints, shared by all workers in Redis."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_redis.dupefilter import RFPDupeFilter

from topicspider.redis.connection import get_client, key_prefix

if TYPE_CHECKING:
    from redis import Redis
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.utils.request import RequestFingerprinterProtocol
    from typing_extensions import Self

__all__ = ["RedisDupeFilter"]


class RedisDupeFilter(RFPDupeFilter):
    """scrapy-redis's set of fingerprints (``topicspider:<crawl id>:dupefilter``), keyed by
    Scrapy's ``REQUEST_FINGERPRINTER`` rather than scrapy-redis's own hash, and kept when a
    worker closes: it is the crawl's memory of what was fetched, not the worker's.

    ``RedisScheduler`` checks this set inside its batched script, in the same round trip
    that queues the request; ``request_seen`` (one ``SADD``) serves other callers. Any other
    ``REDIS_DUPEFILTER_CLASS`` is asked through ``request_seen``.
    """

    def __init__(
        self,
        server: Redis,
        key: str,
        fingerprinter: RequestFingerprinterProtocol,
        debug: bool = False,
    ) -> None:
        super().__init__(server, key, debug)
        self.fingerprinter = fingerprinter

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        assert crawler.spidercls is not None
        return cls(
            get_client(crawler.settings),
            f"{key_prefix(crawler.settings, crawler.spidercls.name)}:dupefilter",
            crawler.request_fingerprinter,
            crawler.settings.getbool("DUPEFILTER_DEBUG"),
        )

    def request_fingerprint(self, request: Request) -> str:
        return self.fingerprinter.fingerprint(request).hex()

    def close(self, reason: str = "") -> None:
        """Keep the set: other workers, and this crawl when it resumes, still need it."""
