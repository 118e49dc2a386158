"""Item pipelines: the pages folder (:mod:`.files`) and MySQL (:mod:`.mysql`)."""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING

from scrapy.exceptions import DropItem
from scrapy.utils.defer import deferred_from_coro

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred


class NotStored(DropItem):
    """An accepted page a pipeline failed to store: the spider fetches it again, when the
    crawl resumes from its ``JOBDIR`` or, in Redis, by a worker of the crawl."""


def refetch_note(crawler: Crawler | None) -> str:
    """What the line naming the pages not stored adds: how the crawl fetches them again
    (see ``TopicSpider.item_dropped``), if it does."""
    settings = crawler.settings if crawler else {}
    if settings.get("REDIS_URL"):
        return "; they go back to the crawl in Redis, for a worker to fetch again"
    if settings.get("JOBDIR"):
        return "; the crawl fetches them again when it resumes from its JOBDIR"
    return ""


def close_crawl(crawler: Crawler | None, reason: str) -> Deferred[None] | None:
    """Close the spider from a pipeline, where raising ``CloseSpider`` does not (it works in
    callbacks only). Keep the Deferred, or it may be garbage-collected; None outside a crawl."""
    engine = None
    with suppress(RuntimeError):  # Scrapy 2.19+ raises it while no crawl is running
        engine = crawler and crawler.engine
    if engine is None:
        return None
    return deferred_from_coro(engine.close_spider_async(reason=reason))
