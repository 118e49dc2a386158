"""Scrapy's scheduler, taught that a link found again may deserve an earlier fetch."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.core.scheduler import Scheduler

if TYPE_CHECKING:
    from scrapy import Request


class TopicScheduler(Scheduler):
    """``SCHEDULER``: a request for a page that is still queued raises that page's score
    (to the better of the two) instead of being dropped as a duplicate unseen.

    Needs a priority queue with ``rescore`` (``topicspider.pqueues.ScorePriorityQueue``).
    """

    def enqueue_request(self, request: Request) -> bool:
        if not request.dont_filter:
            for queue in (self.dqs, self.mqs):
                if queue is not None and queue.rescore(request):
                    self.stats.inc_value("topic/rediscovered")
                    return False
        return super().enqueue_request(request)
