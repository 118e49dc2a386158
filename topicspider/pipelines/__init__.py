"""Item pipelines: the pages folder (:mod:`.files`) and MySQL (:mod:`.mysql`)."""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING

from scrapy.utils.defer import deferred_from_coro

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred


def close_crawl(crawler: Crawler | None, reason: str) -> Deferred[None] | None:
    """Close the spider from a pipeline, where raising ``CloseSpider`` does not (it works in
    callbacks only). Keep the Deferred, or it may be garbage-collected; None outside a crawl."""
    engine = None
    with suppress(RuntimeError):  # Scrapy 2.19+ raises it while no crawl is running
        engine = crawler and crawler.engine
    if engine is None:
        return None
    return deferred_from_coro(engine.close_spider_async(reason=reason))
