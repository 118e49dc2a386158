"""Queued requests for URL templates the crawl has learned yield nothing.

The spider stops following links of a template once it has fetched 30 of its pages and none
was on topic (a dead folder, endless pagination of off-topic lists), but a page may have
queued hundreds of them before. The schedulers drop them as they hand requests out
(``TopicScheduler`` and ``RedisScheduler``, ``TOPIC_DROP_NOISE_URLS``): through the engine
to a downloader middleware, each cost 0.5 ms of CPU, and a long crawl's last 42,600 took 30 s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from topicspider.urlpatterns import template

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Request
    from scrapy.crawler import Crawler


def barren(crawler: Crawler, request: Request) -> bool:
    """Whether the request's URL template is one the spider learned yields nothing
    (``spider.patterns``, as Scrapy's offsite filter uses ``spider.allowed_domains``)."""
    patterns = getattr(crawler.spider, "patterns", None)
    return patterns is not None and patterns.is_barren(template(request.url))


def past_barren(crawler: Crawler, pop: Callable[[], Request | None]) -> tuple[Request | None, bool]:
    """The first request ``pop`` hands out whose URL template is not barren, and whether
    any were dropped before it (each counted in ``topic/noise_url``)."""
    request, dropped = pop(), False
    while request is not None and barren(crawler, request):
        crawler.stats.inc_value("topic/noise_url")
        request, dropped = pop(), True
    return request, dropped
