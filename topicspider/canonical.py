"""Addresses a fetched page names as its own (``<link rel="canonical">``): not fetched again.

A site often serves one page at several addresses — with and without ``index.html``, with
a ``?from=`` or ``?sort=`` its links add, on ``www.`` and on the bare host — and names one
of them in the page's head. Once the crawl has the page, a link to that address would only
fetch it again: the spider sends no such link, and a request for one that was queued before
is dropped as it leaves the frontier. Only a canonical with the page's own path (up to an
index file) is believed: sites that name a list's first page as the canonical of every
later page would otherwise keep the crawl from the first page, and a canonical of another
path is as often a template's mistake as the truth.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from lxml import etree
from scrapy.exceptions import IgnoreRequest

from topicspider.sentlinks import make_room
from topicspider.text import link_url

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler

__all__ = ["FetchedElsewhere", "KnownCanonicalMiddleware", "KnownCanonicals", "canonical_of"]

#: Canonical addresses remembered; past that the oldest tenth is forgotten.
REMEMBERED = 100_000
_LINKS = etree.XPath("/html/head/link[@rel and @href]")
_INDEX_FILE = re.compile(r"/(?:index|default)\.[a-z]+$", re.IGNORECASE)


def canonical_of(root: etree._Element, base_url: str, page_url: str, encoding: str) -> str | None:
    """The address other than ``page_url`` the page names as its own, written as the
    crawl writes links (:func:`~topicspider.text.link_url`); None if it names none, its
    own, or one of another path."""
    for element in _LINKS(root):
        if "canonical" not in element.get("rel").lower().split():
            continue
        url = link_url(element.get("href"), base_url, encoding)
        if url is None or url == page_url or _path(url) != _path(page_url):
            return None
        return url
    return None


def _path(url: str) -> str:
    return _INDEX_FILE.sub("/", urlsplit(url).path or "/")


class KnownCanonicals:
    """The last canonical addresses named by pages the crawl fetched at another address."""

    def __init__(self) -> None:
        self._urls: dict[str, None] = {}

    def __contains__(self, url: str) -> bool:
        return url in self._urls

    def add(self, url: str) -> None:
        if url not in self._urls:
            make_room(self._urls, REMEMBERED)
            self._urls[url] = None


class FetchedElsewhere(IgnoreRequest):
    """A request dropped because its page was fetched at another address; counted, not
    logged."""


class KnownCanonicalMiddleware:
    """Downloader middleware: drops a request for the canonical address of a page fetched
    since it was queued. Uses what the spider learned (``spider.canonicals``), as
    ``BarrenTemplateMiddleware`` uses ``spider.patterns``."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        canonicals = getattr(self.crawler.spider, "canonicals", None)
        if canonicals is not None and request.url in canonicals:
            self.crawler.stats.inc_value("topic/canonical_known")
            raise FetchedElsewhere(f"{request.url}: fetched at another address")
