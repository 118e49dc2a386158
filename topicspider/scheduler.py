"""Scrapy's scheduler, taught that a link found again may deserve an earlier fetch."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.core.scheduler import BaseScheduler, Scheduler

from topicspider.redis.scheduler import RedisScheduler

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred


class TopicScheduler(Scheduler):
    """``SCHEDULER``: a request for a page that is still queued raises that page's score
    (to the better of the two) instead of being dropped as a duplicate unseen.

    Needs a priority queue with ``rescore`` (``topicspider.pqueues.ScorePriorityQueue``).
    With ``REDIS_URL`` set it builds ``topicspider.redis.scheduler.RedisScheduler`` instead,
    so that the same command and settings run a local crawl or a worker of a shared one.
    """

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BaseScheduler:
        if crawler.settings.get("REDIS_URL"):
            return RedisScheduler.from_crawler(crawler)
        return super().from_crawler(crawler)

    def open(self, spider: Spider) -> Deferred[None] | None:
        opened = super().open(spider)
        # Requests a paused crawl left in JOBDIR: this run's scheduler stats do not count them.
        if resumed := len(self):
            self.stats.set_value("topic/resumed", resumed)
        return opened

    def enqueue_request(self, request: Request) -> bool:
        if not request.dont_filter:
            for queue in (self.dqs, self.mqs):
                if queue is not None and queue.rescore(request):
                    self.stats.inc_value("topic/rediscovered")
                    return False
        return super().enqueue_request(request)
