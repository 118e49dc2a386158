"""An HTTP status as the crawl's log lines say it."""

from __future__ import annotations

from http import HTTPStatus

from scrapy.utils.response import response_status_message

__all__ = ["status_message"]


def status_message(status: int) -> str:
    """``429 Too Many Requests``: Scrapy's ``response_status_message`` reads Twisted's
    table, which lacks 429 (RFC 6585) and 451, the statuses a crawler is throttled or
    refused with, and says ``429 Unknown Status``."""
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return response_status_message(status)
