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


def barren(crawler: Crawler, request: Request) -> bool:
    """Whether the request's URL template is one the spider learned yields nothing
    (``spider.patterns``, as Scrapy's offsite filter uses ``spider.allowed_domains``)."""
    patterns = getattr(crawler.spider, "patterns", None)
    return patterns is not None and patterns.is_barren(template(request.url))


class BarrenTemplateMiddleware:
    """Downloader middleware for ``TOPIC_DROP_NOISE_URLS`` in a crawl in Redis. The spider
    stops following links of a template once it has fetched 30 of its pages and none was
    on topic (a dead folder, endless pagination of off-topic lists), but a page may have
    queued hundreds of them before: they are dropped here, as they come out of the shared
    frontier. A local frontier drops them itself as it hands requests out
    (``TopicScheduler.next_request``): through the engine, each cost 0.5 ms of CPU, and a
    long crawl's last 42,600 took 30 s.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        if not settings.getbool("TOPIC_DROP_NOISE_URLS") or not settings.get("REDIS_URL"):
            raise NotConfigured
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        if barren(self.crawler, request):
            self.crawler.stats.inc_value("topic/noise_url")
            raise BarrenTemplate(f"{request.url}: its URL template yielded nothing on topic")
