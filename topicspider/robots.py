"""robots.txt as Scrapy's ``RobotsTxtMiddleware`` gets it: one that cannot be had, said in
one line; one it would misread (not in UTF-8, huge, not in its Content-Encoding), made
readable."""

from __future__ import annotations

import logging
import zlib
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy.exceptions import IgnoreRequest
from scrapy.utils.misc import load_object

from topicspider.charset import content_type, decode
from topicspider.httpstatus import status_message
from topicspider.inflate import ZLIB_CODINGS, inflate
from topicspider.redirects import given_url

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

#: How much of a robots.txt is read, as much as Google reads (RFC 9309 asks for at least
#: 500 KiB): Scrapy's parser takes seconds over megabytes of rules, then checks each of the
#: host's requests against all of them, and the whole crawl waits meanwhile.
READ_LIMIT = 500 * 1024


def is_robots_txt(request: Request) -> bool:
    """Whether Scrapy's ``RobotsTxtMiddleware`` made the request, for a host's robots.txt
    or where that redirected to (some sites send it to their front page)."""
    if not request.meta.get("dont_obey_robotstxt"):
        return False
    return urlsplit(given_url(request)).path == "/robots.txt"


class RobotsTxtFailureMiddleware:
    """Downloader middleware for the robots.txt requests of Scrapy's ``RobotsTxtMiddleware``.

    When a host's robots.txt cannot be had (the host is down, its name unknown, the
    connection dropped, a status Scrapy retries), Scrapy logs it at ERROR, a network error
    with a traceback of some sixty lines, and fetches the host's pages as if robots.txt
    allowed them all. This says so in one line instead, and hands ``RobotsTxtMiddleware``
    an ``IgnoreRequest``, which it takes as allowing all, without a traceback. Of a server
    error (5xx) Scrapy reads the error page as the rules, which mostly allows all; RFC 9309
    asks for complete disallow, and the host's pages are not fetched (one line says so).

    The failures are those Scrapy retries (``RETRY_EXCEPTIONS``, ``RETRY_HTTP_CODES``) and
    any other 5xx: this middleware sits between ``RobotsTxtMiddleware`` and
    ``RetryMiddleware``, so it sees one once the retries are given up, and has the retries'
    own "Gave up retrying" logged at DEBUG. Any other error still gets Scrapy's traceback.

    Scrapy reads robots.txt as UTF-8, dropping the bytes that are not: ``Disallow: /搜索``
    in GBK becomes ``Disallow: /``, which forbids the whole site. A robots.txt in another
    encoding is handed on in UTF-8, and one larger than ``READ_LIMIT`` cut there.
    """

    def __init__(
        self, network_errors: tuple[type[BaseException], ...], retried_statuses: frozenset[int]
    ) -> None:
        self.network_errors = network_errors
        self.retried_statuses = retried_statuses

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        errors = crawler.settings.getlist("RETRY_EXCEPTIONS")
        statuses = crawler.settings.getlist("RETRY_HTTP_CODES")
        return cls(
            tuple(load_object(error) for error in errors),
            frozenset(int(status) for status in statuses),
        )

    def process_request(self, request: Request) -> None:
        if is_robots_txt(request):
            request.meta.setdefault("give_up_log_level", logging.DEBUG)

    def process_response(self, request: Request, response: Response) -> Response:
        if not is_robots_txt(request):
            return response
        if response.status >= 500:
            return _disallowing_all(request, response)
        if response.status in self.retried_statuses:
            raise _not_fetched(request, f"HTTP {status_message(response.status)}")
        body = _readable(response)
        return response if body == response.body else response.replace(body=body)

    def process_exception(self, request: Request, exception: Exception) -> None:
        if is_robots_txt(request) and isinstance(exception, self.network_errors):
            raise _not_fetched(request, exception) from exception


class RobotsTxtEncodingMiddleware:
    """Downloader middleware before Scrapy's ``HttpCompressionMiddleware``: a robots.txt
    whose body is not the gzip or deflate its ``Content-Encoding`` header says (plain text,
    a server's misconfiguration) is read as sent, said in one line. Scrapy's decompression
    raised on it: ``RobotsTxtMiddleware`` logged an ERROR with a traceback naming the page
    that asked, not robots.txt, and fetched the host's pages as if it allowed all."""

    def process_response(self, request: Request, response: Response) -> Response:
        if not is_robots_txt(request):
            return response
        coding = b",".join(response.headers.getlist("Content-Encoding")).decode("latin-1")
        coding = coding.strip().lower()
        if coding not in ZLIB_CODINGS or _inflates(response.body):
            return response
        logger.warning(
            "%s is not the %s its Content-Encoding header says: read as sent", response.url, coding
        )
        headers = response.headers.copy()
        del headers["Content-Encoding"]
        return response.replace(headers=headers)


def _inflates(body: bytes) -> bool:
    """Whether ``body`` begins as the data Scrapy's decompression reads (:func:`inflate`)."""
    try:
        inflate(body, 1024)
    except zlib.error:
        return False
    return True


def _not_fetched(request: Request, reason: object) -> IgnoreRequest:
    """Says so, and returns what tells ``RobotsTxtMiddleware`` to allow all."""
    logger.warning(
        "Not fetched %s (the host's pages are fetched as if it allowed all): %s",
        request.url,
        reason,
    )
    return IgnoreRequest(f"robots.txt not fetched: {reason}")


def _disallowing_all(request: Request, response: Response) -> Response:
    """Says so, and returns the rules of a host that forbids everything: RFC 9309 asks a
    crawler to take a server error for robots.txt as complete disallow (the host may be
    overloaded, and its rules are unknown)."""
    logger.warning(
        "%s answered HTTP %s: the host's pages are not fetched (RFC 9309: a server error"
        " for robots.txt means complete disallow; ROBOTSTXT_OBEY=False fetches them)",
        request.url,
        status_message(response.status),
    )
    return response.replace(status=200, body=b"User-agent: *\nDisallow: /\n")


def _readable(response: Response) -> bytes:
    """The robots.txt up to ``READ_LIMIT`` (at a line's end), in UTF-8."""
    body = response.body
    if len(body) > READ_LIMIT:
        logger.info(
            "%s is %d KiB: only its first %d KiB are read",
            response.url,
            len(body) // 1024,
            READ_LIMIT // 1024,
        )
        line_end = max(body.rfind(b"\n", 0, READ_LIMIT), body.rfind(b"\r", 0, READ_LIMIT))
        body = body[: line_end + 1 if line_end >= 0 else READ_LIMIT]
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        if b"\0" not in body:  # UTF-16 without a byte order mark is valid UTF-8 too
            return body
    return decode(body, content_type(response))[1].encode()
