"""The item processor: Scrapy's pipeline manager, plus the pages accepted as the crawl stops."""

from __future__ import annotations

from scrapy.pipelines import ItemPipelineManager
from twisted.python.failure import Failure

from topicspider.signals import pipelines_closing


class TopicPipelineManager(ItemPipelineManager):
    """Scrapy's ``ItemPipelineManager`` (``ITEM_PROCESSOR``) that, before the pipelines close,
    sends ``pipelines_closing`` and stores the items its handlers return.

    Scrapy closes the pipelines once no page is being parsed, whatever stopped the crawl (the
    end, ``CLOSESPIDER_*``, Ctrl-C); only then can the spider know that pages waiting for a
    verdict will see no more pages, and this is the last moment their items can be stored.
    """

    async def close_spider_async(self) -> None:
        crawler = self.crawler
        assert crawler is not None  # built with from_crawler, as the scraper does
        results = await crawler.signals.send_catch_log_async(signal=pipelines_closing)
        for _, items in results:
            if isinstance(items, Failure) or not items:
                continue  # a failing handler is logged by send_catch_log
            for item in items:
                # The scraper's own path: these pipelines, then item_scraped or item_dropped.
                await crawler.engine.scraper.start_itemproc_async(item, response=None)
        await super().close_spider_async()
