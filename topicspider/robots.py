"""A robots.txt that cannot be downloaded, said in one line."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import load_object

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


def is_robots_txt(request: Request) -> bool:
    """Whether Scrapy's ``RobotsTxtMiddleware`` made the request, for a host's robots.txt."""
    return bool(request.meta.get("dont_obey_robotstxt")) and (
        urlparse_cached(request).path == "/robots.txt"
    )


class RobotsTxtFailureMiddleware:
    """Downloader middleware. When a host's robots.txt cannot be downloaded (the host is
    down, its name unknown, the connection dropped), Scrapy's ``RobotsTxtMiddleware`` logs
    it at ERROR with a traceback of some sixty lines and fetches the host's pages as if
    robots.txt allowed them all. This says so in one line instead, and hands that
    middleware an ``IgnoreRequest``, which it takes the same way without a traceback.

    The failures are those Scrapy retries (``RETRY_EXCEPTIONS``): this middleware sits
    between ``RobotsTxtMiddleware`` and ``RetryMiddleware``, so it sees one once the
    retries are given up. Any other error still gets Scrapy's traceback.
    """

    def __init__(self, network_errors: tuple[type[BaseException], ...]) -> None:
        self.network_errors = network_errors

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        errors = crawler.settings.getlist("RETRY_EXCEPTIONS")
        return cls(tuple(load_object(error) for error in errors))

    def process_exception(self, request: Request, exception: Exception) -> None:
        if is_robots_txt(request) and isinstance(exception, self.network_errors):
            logger.warning(
                "Not fetched %s (the host's pages are fetched as if it allowed all): %s",
                request.url,
                exception,
            )
            raise IgnoreRequest(f"robots.txt not fetched: {exception}") from exception
