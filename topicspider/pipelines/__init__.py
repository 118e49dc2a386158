"""Item pipelines: the pages folder (:mod:`.files`) and MySQL (:mod:`.mysql`), and what runs
them (:class:`ItemPipelines`)."""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING

from scrapy.exceptions import DropItem
from scrapy.pipelines import ItemPipelineManager
from scrapy.utils.defer import deferred_from_coro

from topicspider.signals import item_pipelines_closing

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


class ItemPipelines(ItemPipelineManager):
    """Scrapy's item pipelines (``ITEM_PROCESSOR``), which tell the crawl before they close
    (``item_pipelines_closing``): the spider then stores the items of the accepted pages
    that wait for the threshold to settle, in a crawl stopped (Ctrl-C, a ``CLOSESPIDER_*``
    budget) with no ``JOBDIR`` to keep them. Scrapy closes the pipelines once the pages in
    progress are parsed, and tells nobody before: a stop with no page left to parse (the
    one in flight failed) lost them."""

    async def close_spider_async(self) -> None:
        if self.crawler is not None:  # a handler's error is logged, not raised
            await self.crawler.signals.send_catch_log_async(item_pipelines_closing)
        await super().close_spider_async()
