"""Scrapy's meta refresh, except that a refresh to the page itself is no redirect.

News portals reload their front pages every minute or so (``<meta http-equiv="refresh"
content="60; url=/index.html">`` on ``/index.html``); a browser shows the page and reloads
it later. Scrapy follows such a refresh (a delay under ``METAREFRESH_MAXDELAY``) to the
same address again, and the crawl took that for a redirect loop: the page was lost, and a
seed that was one failed the crawl. A refresh to itself at once (a delay of 0) is followed
once, as a cookie gate would want; the page it gives again is the page.

The refresh is read from the whole page, decoded as the crawl decodes it
(:mod:`topicspider.charset`). Scrapy reads the first 4,096 characters only, which a head of
inline scripts fills, and decodes by its own guess: an undeclared GBK page refreshing to
``/新闻/足球.html`` was read as Thai and sent to a garbled address, and one declaring
``rot13`` failed with a ``LookupError``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware
from scrapy.http import HtmlResponse
from scrapy.utils.httpobj import urlparse_cached
from w3lib.html import get_base_url, get_meta_refresh

from topicspider.charset import content_type, decode
from topicspider.redirects import same_page

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.http import Response

__all__ = ["SelfRefreshMiddleware"]

#: ``http-equiv="refresh"`` in any case, or "refresh" in UTF-16 (either byte order): most
#: pages have neither, and are not decoded here (an article that says "refresh" neither).
_REFRESH = re.compile(
    rb"""http-equiv\s*=\s*["']?\s*refresh|r\x00e\x00f\x00r\x00e\x00s\x00h""", re.IGNORECASE
)
_WEB = frozenset({"http", "https"})


class SelfRefreshMiddleware(MetaRefreshMiddleware):
    """``MetaRefreshMiddleware`` that reads the refresh as the crawl reads the page, and
    keeps a page refreshing to itself (see the module)."""

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Request | Response:
        if (
            request.meta.get("dont_redirect")
            or request.method == "HEAD"
            or not isinstance(response, HtmlResponse)
            or urlparse_cached(request).scheme not in _WEB
            or not _REFRESH.search(response.body)
        ):
            return response
        encoding, text = decode(response.body, content_type(response))
        base = get_base_url(text, response.url, encoding)
        delay, url = get_meta_refresh(text, base, encoding, ignore_tags=self._ignore_tags)
        if url is None:
            return response
        itself, *earlier = same_page(
            self.crawler, url, [response.url, *request.meta.get("redirect_urls", ())]
        )
        if itself and (delay or any(earlier)):
            return response
        redirected = self._redirect_request_using_get(request, response, url)
        if urlparse_cached(redirected).scheme not in _WEB or delay >= self._maxdelay:
            return response
        return self._redirect(redirected, request, "meta refresh")
