"""The one item topicspider yields: an accepted, on-topic page."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field


def _base64(body: bytes) -> str:
    return base64.b64encode(body).decode("ascii")


@dataclass
class PageItem:
    url: str
    title: str
    #: Not in the repr, which Scrapy logs for every item it scrapes or drops.
    text: str = field(repr=False)
    #: Raw bytes, which JSON cannot hold: base64 in a feed that asks for them
    #: (``FEED_EXPORT_FIELDS``).
    body: bytes = field(repr=False, metadata={"serializer": _base64})
    charset: str
    relevance: float
    depth: int
    parent_url: str | None
    fetched_at: str
    #: Set by the filesystem pipeline: where ``body`` was written, relative to ``TOPIC_PAGES_DIR``.
    path: str | None = None
