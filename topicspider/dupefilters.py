"""Duplicate request filters: Scrapy's exact set, or a Bloom filter for very large crawls.

``DUPEFILTER_CLASS = "topicspider.dupefilters.TopicDupeFilter"`` builds the one
``TOPIC_DUPEFILTER`` names (``DUPEFILTERS``); both use ``REQUEST_FINGERPRINTER``.
Both answer ``knows`` (seen, without adding), so that ``TopicScheduler`` can queue a
request in ``JOBDIR`` before it is written down as seen.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy.dupefilters import BaseDupeFilter, RFPDupeFilter
from scrapy.utils.job import job_dir
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy.utils.request import referer_str

from topicspider.bloom import BloomFilter, optimal_size
from topicspider.exceptions import ConfigError

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from scrapy.utils.request import RequestFingerprinterProtocol
    from typing_extensions import Self

__all__ = ["DUPEFILTERS", "BloomDupeFilter", "DurableRFPDupeFilter", "TopicDupeFilter"]

logger = logging.getLogger(__name__)

#: ``TOPIC_DUPEFILTER`` value → dupefilter class.
DUPEFILTERS = {
    "exact": "topicspider.dupefilters.DurableRFPDupeFilter",
    "bloom": "topicspider.dupefilters.BloomDupeFilter",
}


class DurableRFPDupeFilter(RFPDupeFilter):
    """Scrapy's exact filter, writing each new fingerprint through to ``JOBDIR`` at once.

    Scrapy buffers ``requests.seen``; after a ``kill -9`` the last fingerprints would
    be missing and their pages fetched again. The queue (``DiskQueue``) commits every
    request as it comes, so the two stay in step.
    """

    FILE_NAME = "requests.seen"

    def request_seen(self, request: Request) -> bool:
        seen = super().request_seen(request)
        if not seen and self.file:
            self.file.flush()
        return seen

    def knows(self, request: Request) -> bool:
        """Whether ``request_seen`` would say seen, without adding the request. Reads
        Scrapy's set (not public API: 2.19 keeps bytes in ``_fingerprints``, 2.18 hex
        strings in ``fingerprints``)."""
        fingerprints = getattr(self, "_fingerprints", None)
        if fingerprints is None:
            return self.request_fingerprint(request) in self.fingerprints
        return self.fingerprinter.fingerprint(request) in fingerprints


class TopicDupeFilter:
    """``DUPEFILTER_CLASS`` that builds the dupefilter named by ``TOPIC_DUPEFILTER``.

    Raises ``ConfigError``, before it writes anything there, if ``JOBDIR`` keeps its seen
    URLs with the other one: the new filter would know none of them, and the crawl
    would fetch every page again.
    """

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BaseDupeFilter:
        name = crawler.settings.get("TOPIC_DUPEFILTER")
        if name not in DUPEFILTERS:
            raise ConfigError(
                f"TOPIC_DUPEFILTER={name!r}: expected one of {', '.join(sorted(DUPEFILTERS))}"
            )
        directory = job_dir(crawler.settings)
        kept = _kept_by(Path(directory)) if directory else None
        if kept not in (None, name):
            raise ConfigError(
                f"JOBDIR {directory} keeps its seen URLs with TOPIC_DUPEFILTER={kept}; this"
                f" crawl has TOPIC_DUPEFILTER={name}, which would fetch them all again."
                f" Resume it with TOPIC_DUPEFILTER={kept}, or use another JOBDIR"
            )
        return build_from_crawler(load_object(DUPEFILTERS[name]), crawler)


def _kept_by(directory: Path) -> str | None:
    """The ``TOPIC_DUPEFILTER`` whose file in ``directory`` holds seen URLs, if any."""
    if (directory / BloomDupeFilter.FILE_NAME).exists():
        return "bloom"
    seen = directory / DurableRFPDupeFilter.FILE_NAME
    if seen.exists() and seen.stat().st_size:
        return "exact"
    return None


class BloomDupeFilter(BaseDupeFilter):
    """Filters requests whose fingerprint is (probably) in a Bloom filter.

    About 1.8 bytes per URL at ``TOPIC_BLOOM_ERROR_RATE`` 0.001 instead of the exact
    set's hundred-odd, at the price of skipping a share ``TOPIC_BLOOM_ERROR_RATE`` of
    the new URLs (see :mod:`topicspider.bloom`). With ``JOBDIR`` the filter lives in
    ``JOBDIR/requests.bloom``, mapped into memory, so that a crawl paused or killed
    resumes with it; the file keeps its own size even if the capacity settings changed
    (said once, and its own capacity is the one past which it warns).
    """

    FILE_NAME = "requests.bloom"

    def __init__(
        self,
        bloom: BloomFilter,
        fingerprinter: RequestFingerprinterProtocol,
        *,
        capacity: int,
        debug: bool = False,
        stats: StatsCollector | None = None,
    ) -> None:
        self.bloom = bloom
        self.fingerprinter = fingerprinter
        self.capacity = capacity
        self.debug = debug
        self.stats = stats
        self.logdupes = True
        self._warned_full = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        capacity = settings.getint("TOPIC_BLOOM_CAPACITY")
        directory = job_dir(settings)
        path = Path(directory, cls.FILE_NAME) if directory else None
        error_rate = settings.getfloat("TOPIC_BLOOM_ERROR_RATE")
        if path is None:
            bloom = BloomFilter.local(capacity, error_rate)
        else:
            resumed = path.exists()
            try:
                bloom = BloomFilter.open(path, capacity, error_rate)
            except ValueError as error:
                raise ConfigError(f"Cannot use JOBDIR: {error}") from None
            if resumed:
                logger.info(
                    "Resumed the Bloom filter of %(count)d URLs from %(path)s",
                    {"count": bloom.count, "path": path},
                )
            if (bloom.bits.size, bloom.hashes) != optimal_size(capacity, error_rate):
                logger.warning(
                    "%(path)s keeps its size: %(bits)d bits, %(hashes)d hashes, for about"
                    " %(kept)d URLs; TOPIC_BLOOM_CAPACITY=%(capacity)d and"
                    " TOPIC_BLOOM_ERROR_RATE=%(rate)r apply to a new JOBDIR only",
                    {
                        "path": path,
                        "bits": bloom.bits.size,
                        "hashes": bloom.hashes,
                        "kept": bloom.capacity,
                        "capacity": capacity,
                        "rate": error_rate,
                    },
                )
                capacity = bloom.capacity
        return cls(
            bloom,
            crawler.request_fingerprinter,
            capacity=capacity,
            debug=settings.getbool("DUPEFILTER_DEBUG"),
            stats=crawler.stats,
        )

    def request_seen(self, request: Request) -> bool:
        if self.bloom.add(self.fingerprinter.fingerprint(request)):
            return True
        self._check_capacity()
        return False

    def knows(self, request: Request) -> bool:
        """Whether ``request_seen`` would say seen, without adding the request."""
        return self.fingerprinter.fingerprint(request) in self.bloom

    def _check_capacity(self) -> None:
        if self.bloom.count > self.capacity and not self._warned_full:
            self._warned_full = True
            logger.warning(
                "The Bloom filter holds more than the %(capacity)d URLs it was sized for"
                " (TOPIC_BLOOM_CAPACITY); its false-positive rate grows past the one it was"
                " sized for",
                {"capacity": self.capacity},
            )

    def close(self, reason: str) -> None:
        if self.stats is not None:
            self.stats.set_value("dupefilter/bloom/urls", self.bloom.count)
            self.stats.set_value(
                "dupefilter/bloom/false_positive_rate", round(self.bloom.false_positive_rate(), 6)
            )
        self.bloom.close()

    def log(self, request: Request, spider: Spider) -> None:
        """As ``RFPDupeFilter.log``: the first duplicate, or all with ``DUPEFILTER_DEBUG``."""
        self._log_duplicate(request)
        if self.stats is not None:
            self.stats.inc_value("dupefilter/filtered")

    def _log_duplicate(self, request: Request) -> None:
        if self.debug:
            logger.debug(
                "Filtered duplicate request: %(request)s (referer: %(referer)s)",
                {"request": request, "referer": referer_str(request)},
            )
        elif self.logdupes:
            logger.debug(
                "Filtered duplicate request: %(request)s - no more duplicates will be shown"
                " (see DUPEFILTER_DEBUG to show all duplicates)",
                {"request": request},
            )
            self.logdupes = False
