"""Queued requests for pages the crawl has since fetched at another address: dropped, or
sent without the query parameters the site's pages were seen to drop
(see :mod:`topicspider.canonical`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler

__all__ = ["FetchedElsewhere", "KnownCanonicalMiddleware"]


class FetchedElsewhere(IgnoreRequest):
    """A request dropped because its page was fetched at another address; counted, not
    logged."""


class KnownCanonicalMiddleware:
    """Downloader middleware: drops a request for the canonical address of a page fetched
    since it was queued. Uses what the spider learned (``spider.canonicals``), as Scrapy's
    offsite middleware uses ``spider.allowed_domains``."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_request(self, request: Request) -> Request | None:
        """A request queued with a parameter its site's pages have since been seen to drop
        goes back to the scheduler without it: dropped there if that address is seen."""
        spider = self.crawler.spider
        canonicals = getattr(spider, "canonicals", None)
        if canonicals is not None and request.url in canonicals:
            self.crawler.stats.inc_value("topic/canonical_known")
            raise FetchedElsewhere(f"{request.url}: fetched at another address")
        parameters = getattr(spider, "dropped_parameters", None)
        if parameters is not None and not request.dont_filter:
            url = parameters.address(request.url)
            if url != request.url:
                self.crawler.stats.inc_value("topic/parameters_dropped")
                return request.replace(url=url)
        return None
