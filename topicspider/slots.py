"""Which download slot a request goes to: one per host, or a host's URLs spread over N slots.

Scrapy limits concurrency and delay per download slot, one slot per host by default
(``TOPIC_SLOT_POLICY = "host"``, the polite choice). When a site's owner allows more load,
``"aphash"`` spreads the site's URLs over ``TOPIC_SLOTS`` slots by the APHash of the URL, as
Heritrix's queue assignment policies do, so a single large site uses up to
``TOPIC_SLOTS × CONCURRENT_REQUESTS_PER_DOMAIN`` connections. Both the local and the Redis
frontier key their per-slot queues by the same slot, so the policy holds in either mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware
from scrapy.utils.httpobj import urlparse_cached
from w3lib.url import canonicalize_url

from topicspider.urlpatterns import without_session

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from typing_extensions import Self

__all__ = ["SLOT_POLICIES", "SlotPolicyMiddleware", "aphash"]

#: The values ``TOPIC_SLOT_POLICY`` accepts.
SLOT_POLICIES = ("host", "aphash")

#: Scrapy's request meta key naming the download slot (``Downloader.DOWNLOAD_SLOT``).
DOWNLOAD_SLOT = "download_slot"


def aphash(data: bytes) -> int:
    """Arash Partow's AP hash (32 bits), as Heritrix uses to spread URLs over queues.

    >>> aphash(b"abcdefghijklmnopqrstuvwxyz1234567890")
    882643939
    """
    value = 0xAAAAAAAA
    for index, byte in enumerate(data):
        if index & 1 == 0:
            value ^= (value << 7) ^ (byte * (value >> 3))
        else:
            value ^= ~((value << 11) + (byte ^ (value >> 5)))
        value &= 0xFFFFFFFF
    return value


class SlotPolicyMiddleware(BaseSpiderMiddleware):
    """Spider middleware (``SPIDER_MIDDLEWARES``): with ``TOPIC_SLOT_POLICY = "aphash"``, set
    each request's ``download_slot`` to ``host#k``, k = APHash(URL) mod ``TOPIC_SLOTS``.

    It acts before the scheduler sees the request, so the queue's per-slot bookkeeping and the
    downloader agree. Off (``NotConfigured``) with the default ``host`` policy.
    """

    def __init__(self, crawler: Crawler, slots: int) -> None:
        super().__init__(crawler)
        self.slots = slots

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        policy = crawler.settings.get("TOPIC_SLOT_POLICY")
        if policy == "host":
            raise NotConfigured  # the default: Scrapy's own one slot per host
        slots = crawler.settings.getint("TOPIC_SLOTS")
        if policy != "aphash" or slots < 1:
            raise NotConfigured(f"TOPIC_SLOT_POLICY={policy!r}, TOPIC_SLOTS={slots}: not used")
        return cls(crawler, slots)

    def slot_of(self, request: Request) -> str:
        """The slot of the page, whichever way its address is written: a page found again
        through a link with its query in another order (``?b=2&a=1``), one fingerprint,
        stays in the slot it is queued in."""
        host = urlparse_cached(request).hostname or ""
        page = canonicalize_url(without_session(request.url))
        return f"{host}#{aphash(page.encode()) % self.slots}"

    def get_processed_request(self, request: Request, response: Response | None) -> Request:
        request.meta.setdefault(DOWNLOAD_SLOT, self.slot_of(request))
        return request
