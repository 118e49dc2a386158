"""Queued requests for URL templates the crawl has learned yield nothing, dropped."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest, NotConfigured

from topicspider.urlpatterns import template

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler


class BarrenTemplate(IgnoreRequest):
    """A request dropped because its URL template is barren; counted, not logged."""


class BarrenTemplateMiddleware:
    """Downloader middleware for ``TOPIC_DROP_NOISE_URLS``. The spider stops following
    links of a template once it has fetched 30 of its pages and none was on topic (a dead
    folder, endless pagination of off-topic lists), but a page may have queued hundreds of
    them before: they are dropped here, as they come out of the frontier. Uses what the
    spider learned (``spider.patterns``), as Scrapy's offsite filter uses
    ``spider.allowed_domains``.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        if not crawler.settings.getbool("TOPIC_DROP_NOISE_URLS"):
            raise NotConfigured
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        patterns = getattr(self.crawler.spider, "patterns", None)
        if patterns is not None and patterns.is_barren(template(request.url)):
            self.crawler.stats.inc_value("topic/noise_url")
            raise BarrenTemplate(f"{request.url}: its URL template yielded nothing on topic")
