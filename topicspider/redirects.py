"""What a request that was redirected (HTTP or meta refresh) still says of where it began,
and whether two of its addresses are one page to the crawl.

Scrapy's redirect middlewares keep the addresses a request passed through in its
``redirect_urls`` meta. The spider, the robots.txt middleware and the refresh middleware
each read them; here is the one reading of them they share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import Request

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["given_url", "same_page"]


def given_url(request: Request) -> str:
    """The address the user or a page gave, before any redirect."""
    return request.meta.get("redirect_urls", [request.url])[0]


def same_page(crawler: Crawler, url: str, others: list[str]) -> list[bool]:
    """Whether the crawl's seen-set takes ``url`` and each of ``others`` for one page
    (``/a?x=1&y=2`` and ``/a?y=2&x=1``, ``http://host`` and ``http://host/``, ``/a`` and
    ``/a#top``, ``/a`` and ``/a;jsessionid=…``): its ``REQUEST_FINGERPRINTER`` says."""
    fingerprint = crawler.request_fingerprinter.fingerprint
    own = fingerprint(Request(url))
    return [other == url or fingerprint(Request(other)) == own for other in others]
