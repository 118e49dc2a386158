"""A periodic progress line and a final summary of the focused crawl."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import task

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from typing_extensions import Self

logger = logging.getLogger(__name__)


class Progress:
    """Logs fetched, accepted, harvest rate, queue size and pages/s.

    The harvest rate (accepted / fetched) is what a focused crawler is judged
    by, so it is also left in the final stats as ``topic/harvest_rate``. An accepted
    page that is a near-duplicate of a stored one is on topic but not stored again:
    the line says how many, or "accepted" would count more pages than the store has.
    """

    def __init__(self, stats: StatsCollector, interval: float) -> None:
        self.stats = stats
        self.interval = interval
        self.started = time.monotonic()
        self.loop: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        interval = crawler.settings.getfloat("TOPIC_PROGRESS_INTERVAL")
        if interval < 0:
            raise NotConfigured("TOPIC_PROGRESS_INTERVAL is negative")
        extension = cls(crawler.stats, interval)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self) -> None:
        self.started = time.monotonic()
        if self.interval:
            self.loop = task.LoopingCall(self.log, "Progress")
            self.loop.start(self.interval, now=False)

    def figures(self) -> dict[str, float]:
        get = self.stats.get_value
        local_queue = (
            get("topic/resumed", 0) + get("scheduler/enqueued", 0) - get("scheduler/dequeued", 0)
        )
        fetched = get("response_received_count", 0)
        accepted = get("topic/accepted", 0)
        duplicates = get("topic/duplicate", 0)
        failed = get("topic/not_stored", 0)
        elapsed = max(time.monotonic() - self.started, 1e-9)
        return {
            "fetched": fetched,
            "accepted": accepted,
            "harvest": accepted / fetched if fetched else 0.0,
            "duplicates": duplicates,
            "failed": failed,
            # Redis mode sets topic/queued: the shared frontier, not this worker's share.
            "queued": get("topic/queued", local_queue),
            "rate": fetched / elapsed,
        }

    def log(self, label: str) -> None:
        figures = self.figures()
        duplicates, failed = figures["duplicates"], figures["failed"]
        not_stored = f", not stored as near-duplicates: {duplicates}" if duplicates else ""
        if failed:
            not_stored += f", not stored for a failed pages folder: {failed}"
        logger.info(
            "%(label)s: fetched %(fetched)d pages, accepted %(accepted)d "
            "(harvest rate %(harvest).2f)%(not_stored)s, %(queued)d queued, %(rate).1f pages/s",
            {"label": label, "not_stored": not_stored, **figures},
        )

    def spider_closed(self) -> None:
        if self.loop is not None and self.loop.running:
            self.loop.stop()
        self.stats.set_value("topic/harvest_rate", round(self.figures()["harvest"], 4))
        self.log("Finished")
