"""Request fingerprints that leave session ids out: one page, one fingerprint.

Links come without session ids (``urlpatterns.without_session``), but a redirect may give a
page one (a first visit sent to ``/index.jsp;jsessionid=…``). Fingerprinted as it is, that
page would be fetched once more through its links, which lead to ``/index.jsp``. Every
seen-set of the crawl (Scrapy's, the Bloom filters, Redis) uses ``REQUEST_FINGERPRINTER``,
so this one place serves them all, as Heritrix's canonicalization rules serve its
already-seen test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.utils.request import fingerprint

from topicspider.urlpatterns import without_session

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from typing_extensions import Self

__all__ = ["SessionlessFingerprinter"]


class SessionlessFingerprinter:
    """Scrapy's fingerprint of the request with its URL's session ids and tracking
    parameters taken out.

    A redirect that does nothing but give a page its id (``/index.jsp`` to
    ``/index.jsp;jsessionid=…``) is fingerprinted with the id: without it, it would be the
    request it came from, and dropped as seen.
    """

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls()

    def fingerprint(self, request: Request) -> bytes:
        url = without_session(request.url)
        if url != request.url and not _gives_an_id(request, url):
            request = request.replace(url=url)
        return fingerprint(request)


def _gives_an_id(request: Request, url: str) -> bool:
    redirected_from = request.meta.get("redirect_urls")
    return bool(redirected_from) and without_session(redirected_from[-1]) == url
