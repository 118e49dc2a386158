"""Scrapy's meta refresh, except that a refresh to the page itself is no redirect.

News portals reload their front pages every minute or so (``<meta http-equiv="refresh"
content="60; url=/index.html">`` on ``/index.html``); a browser shows the page and reloads
it later. Scrapy follows such a refresh (a delay under ``METAREFRESH_MAXDELAY``) to the
same address again, and the crawl took that for a redirect loop: the page was lost, and a
seed that was one failed the crawl. A refresh to itself at once (a delay of 0) is followed
once, as a cookie gate would want; the page it gives again is the page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware
from scrapy.http import HtmlResponse
from scrapy.utils.response import get_meta_refresh

from topicspider.redirects import same_page

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.http import Response

__all__ = ["SelfRefreshMiddleware"]


class SelfRefreshMiddleware(MetaRefreshMiddleware):
    """``MetaRefreshMiddleware`` that keeps a page refreshing to itself (see the module)."""

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Request | Response:
        if isinstance(response, HtmlResponse) and not request.meta.get("dont_redirect"):
            delay, url = get_meta_refresh(response, ignore_tags=self._ignore_tags)
            if url:
                itself, *earlier = same_page(
                    self.crawler, url, [response.url, *request.meta.get("redirect_urls", ())]
                )
                if itself and (delay or any(earlier)):
                    return response
        return super().process_response(request, response)
