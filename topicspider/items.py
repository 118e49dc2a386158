"""The one item topicspider yields: an accepted, on-topic page."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PageItem:
    url: str
    title: str
    #: Not in the repr, which Scrapy logs for every item it scrapes or drops.
    text: str = field(repr=False)
    body: bytes = field(repr=False)
    charset: str
    relevance: float
    depth: int
    parent_url: str | None
    fetched_at: str
    #: Set by the filesystem pipeline: where ``body`` was written, relative to ``TOPIC_PAGES_DIR``.
    path: str | None = None
