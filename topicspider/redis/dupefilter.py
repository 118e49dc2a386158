"""The crawl's seen-set, shared by all workers in Redis: an exact set or a Bloom filter.

``TOPIC_DUPEFILTER`` chooses, as in a local crawl (:mod:`topicspider.dupefilters`):
``exact`` is scrapy-redis's set of fingerprints, ``bloom`` a Bloom filter in the bits of one
Redis string, sized by ``TOPIC_BLOOM_CAPACITY`` and ``TOPIC_BLOOM_ERROR_RATE``. Both are
keyed by Scrapy's ``REQUEST_FINGERPRINTER``, and both are checked by ``RedisScheduler``
inside the frontier's batched script, in the round trip that queues the requests; their
``request_seen`` serves other callers. Both are kept when a worker closes: they are the
crawl's memory of what was fetched, not the worker's.

Every worker must use the same seen-set (a filter of another size maps a URL to other
bits): :func:`seen_set` describes it, the crawl record keeps the first worker's description
and refuses a worker with another one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.utils.misc import build_from_crawler, load_object
from scrapy_redis.dupefilter import RFPDupeFilter

from topicspider.bloom import REDIS_MAX_BITS, BloomFilter, RedisBits, optimal_size
from topicspider.dupefilters import BloomDupeFilter
from topicspider.exceptions import ConfigError
from topicspider.redis.connection import get_client, key_prefix

if TYPE_CHECKING:
    from redis import Redis
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.dupefilters import BaseDupeFilter
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector
    from scrapy.utils.request import RequestFingerprinterProtocol
    from typing_extensions import Self

__all__ = [
    "EXACT",
    "REDIS_DUPEFILTERS",
    "RedisBloomDupeFilter",
    "RedisDupeFilter",
    "RedisTopicDupeFilter",
    "seen_set",
]

#: The seen-set of a crawl with the exact set (and of crawls recorded before there was a choice).
EXACT = "TOPIC_DUPEFILTER=exact"

#: ``TOPIC_DUPEFILTER`` value → dupefilter class of a shared crawl.
REDIS_DUPEFILTERS = {
    "exact": "topicspider.redis.dupefilter.RedisDupeFilter",
    "bloom": "topicspider.redis.dupefilter.RedisBloomDupeFilter",
}


def seen_set(settings: BaseSettings) -> str:
    """The crawl's seen-set, as the crawl record keeps it: ``TOPIC_DUPEFILTER=exact``, or
    the Bloom filter's settings and the size they give. Raise ``ConfigError`` if the
    settings cannot make one.

    >>> from scrapy.settings import Settings
    >>> seen_set(Settings({"TOPIC_DUPEFILTER": "bloom", "TOPIC_BLOOM_CAPACITY": 1000,
    ...                    "TOPIC_BLOOM_ERROR_RATE": 0.01})).split(" ", 3)[3]
    '(9586 bits, 7 hashes)'
    """
    name = settings.get("TOPIC_DUPEFILTER")
    if name not in REDIS_DUPEFILTERS:
        raise ConfigError(
            f"TOPIC_DUPEFILTER={name!r}: expected one of {', '.join(sorted(REDIS_DUPEFILTERS))}"
        )
    if name == "exact":
        return EXACT
    capacity = settings.getint("TOPIC_BLOOM_CAPACITY")
    error_rate = settings.getfloat("TOPIC_BLOOM_ERROR_RATE")
    try:
        bits, hashes = optimal_size(capacity, error_rate)
    except ValueError as error:
        raise ConfigError(f"TOPIC_BLOOM_CAPACITY, TOPIC_BLOOM_ERROR_RATE: {error}") from None
    if bits > REDIS_MAX_BITS:
        raise ConfigError(
            f"TOPIC_BLOOM_CAPACITY={capacity} at TOPIC_BLOOM_ERROR_RATE={error_rate!r} needs"
            f" {bits} bits; a Redis string holds at most {REDIS_MAX_BITS}"
        )
    return (
        f"TOPIC_DUPEFILTER=bloom TOPIC_BLOOM_CAPACITY={capacity}"
        f" TOPIC_BLOOM_ERROR_RATE={error_rate!r} ({bits} bits, {hashes} hashes)"
    )


class RedisTopicDupeFilter:
    """``REDIS_DUPEFILTER_CLASS`` that builds the dupefilter named by ``TOPIC_DUPEFILTER``."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BaseDupeFilter:
        seen_set(crawler.settings)  # raises on settings that make no seen-set
        name = crawler.settings.get("TOPIC_DUPEFILTER")
        return build_from_crawler(load_object(REDIS_DUPEFILTERS[name]), crawler)


class RedisDupeFilter(RFPDupeFilter):
    """scrapy-redis's set of fingerprints (``topicspider:<crawl id>:dupefilter``), keyed by
    Scrapy's ``REQUEST_FINGERPRINTER`` rather than scrapy-redis's own hash, and kept when a
    worker closes.

    ``RedisScheduler`` checks this set inside its batched script; ``request_seen`` (one
    ``SADD``) serves other callers. Any other ``REDIS_DUPEFILTER_CLASS`` is asked through
    ``request_seen``.
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


class RedisBloomDupeFilter(BloomDupeFilter):
    """A Bloom filter of request fingerprints in the Redis string
    ``topicspider:<crawl id>:bloom``, shared by every worker of the crawl and kept with it.

    About 1.8 bytes of Redis memory per URL at ``TOPIC_BLOOM_ERROR_RATE`` 0.001, allocated
    at once for ``TOPIC_BLOOM_CAPACITY`` URLs, against some 90 for the exact set; the price
    is a share ``TOPIC_BLOOM_ERROR_RATE`` of new URLs skipped as seen. ``RedisScheduler``
    computes the bit positions here and sets them in its batched script, which also counts
    the URLs added (``:bloom:urls``, all workers together) and reports the count back
    through :meth:`counted`: the stats and the capacity warning are the crawl's, not this
    worker's.
    """

    def __init__(
        self,
        bloom: BloomFilter,
        fingerprinter: RequestFingerprinterProtocol,
        *,
        capacity: int,
        debug: bool = False,
        stats: StatsCollector | None = None,
    ) -> None:
        if not isinstance(bloom.bits, RedisBits):
            raise TypeError("a shared Bloom filter keeps its bits in Redis (RedisBits)")
        super().__init__(bloom, fingerprinter, capacity=capacity, debug=debug, stats=stats)
        self.bits: RedisBits = bloom.bits
        #: The Redis key the frontier's script sets the bits of.
        self.key = self.bits.key

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        assert crawler.spidercls is not None
        settings = crawler.settings
        seen_set(settings)  # raises on a size Redis cannot hold
        capacity = settings.getint("TOPIC_BLOOM_CAPACITY")
        size, hashes = optimal_size(capacity, settings.getfloat("TOPIC_BLOOM_ERROR_RATE"))
        key = f"{key_prefix(settings, crawler.spidercls.name)}:bloom"
        return cls(
            BloomFilter(
                RedisBits(get_client(settings), key, size),
                hashes,
                cache_size=settings.getint("REDIS_SEEN_CACHE"),
            ),
            crawler.request_fingerprinter,
            capacity=capacity,
            debug=settings.getbool("DUPEFILTER_DEBUG"),
            stats=crawler.stats,
        )

    def request_seen(self, request: Request) -> bool:
        """One ``BITFIELD`` (none for a fingerprint in the cache), and one ``INCR`` of the
        crawl's count if the request is new."""
        if self.bloom.add(self.fingerprinter.fingerprint(request)):
            return True
        self.counted(self.bits.client.incr(f"{self.key}:urls"))
        return False

    def log(self, request: Request, spider: Spider) -> None:
        """Only the log line: ``RedisScheduler`` counts ``dupefilter/filtered``, for these
        and for the duplicates its script finds (as with scrapy-redis's set)."""
        self._log_duplicate(request)

    def counted(self, urls: int) -> None:
        """The crawl's filter now holds ``urls`` URLs (added by any worker)."""
        self.bloom.count = urls
        if self.stats is not None:
            self.stats.set_value("dupefilter/bloom/urls", urls)
        self._check_capacity()
