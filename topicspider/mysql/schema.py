"""The two tables, their upserts, and the rows that go into them.

A row is first a *record*: a JSON-ready dict, which the spool can keep while the database is
away. :func:`write` turns records into query parameters — never into SQL text — and upserts
them on the table's unique key, so writing a record twice changes nothing.
"""

from __future__ import annotations

import hashlib
import math
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from pymysql.cursors import Cursor

PAGES = "pages"
LINKS = "links"

_OPTIONS = "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci"

CREATE_TABLES = (
    f"""CREATE TABLE IF NOT EXISTS {PAGES} (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    url_hash BINARY(20) NOT NULL COMMENT 'UNHEX(SHA1(url))',
    url TEXT NOT NULL,
    title TEXT NOT NULL,
    relevance DOUBLE NOT NULL,
    depth INT UNSIGNED NOT NULL,
    `charset` VARCHAR(64) NOT NULL,
    path TEXT NULL COMMENT 'the raw page, relative to TOPIC_PAGES_DIR',
    `text` MEDIUMTEXT NOT NULL COMMENT 'extracted body text',
    parent_url TEXT NULL,
    fetched_at DATETIME NOT NULL COMMENT 'UTC',
    crawl_id VARCHAR(255) NOT NULL,
    UNIQUE KEY url_hash (url_hash),
    KEY crawl_id (crawl_id)
) {_OPTIONS}""",
    f"""CREATE TABLE IF NOT EXISTS {LINKS} (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    page_url_hash BINARY(20) NOT NULL COMMENT 'UNHEX(SHA1(page_url))',
    url_hash BINARY(20) NOT NULL COMMENT 'UNHEX(SHA1(url))',
    page_url TEXT NOT NULL COMMENT 'the page the link is on',
    url TEXT NOT NULL,
    anchor TEXT NOT NULL,
    score DOUBLE NULL COMMENT 'the link score it was queued with',
    followed BOOLEAN NOT NULL,
    discovered_at DATETIME NOT NULL COMMENT 'UTC',
    crawl_id VARCHAR(255) NOT NULL,
    UNIQUE KEY page_link (page_url_hash, url_hash),
    KEY url_hash (url_hash),
    KEY crawl_id (crawl_id)
) {_OPTIONS}""",
)


@dataclass(frozen=True)
class Table:
    """A table's record fields, the URL fields that get a hash column, and its upsert."""

    name: str
    fields: tuple[str, ...]
    hashed: tuple[str, ...]
    #: Fields that identify the row; the upsert leaves them alone.
    key: tuple[str, ...]

    @property
    def columns(self) -> tuple[str, ...]:
        return (*(f"{name}_hash" for name in self.hashed), *self.fields)

    @property
    def upsert(self) -> str:
        columns = ", ".join(f"`{name}`" for name in self.columns)
        values = ", ".join(["%s"] * len(self.columns))
        updates = ", ".join(
            f"`{name}` = VALUES(`{name}`)" for name in self.fields if name not in self.key
        )
        return (
            f"INSERT INTO `{self.name}` ({columns}) VALUES ({values}) "
            f"ON DUPLICATE KEY UPDATE {updates}"
        )

    def parameters(self, record: Mapping[str, Any]) -> tuple[Any, ...]:
        hashes = (
            hashlib.sha1(record[name].encode(), usedforsecurity=False).digest()
            for name in self.hashed
        )
        return (*hashes, *(record[name] for name in self.fields))


TABLES = {
    PAGES: Table(
        PAGES,
        fields=(
            "url",
            "title",
            "relevance",
            "depth",
            "charset",
            "path",
            "text",
            "parent_url",
            "fetched_at",
            "crawl_id",
        ),
        hashed=("url",),
        key=("url",),
    ),
    LINKS: Table(
        LINKS,
        fields=("page_url", "url", "anchor", "score", "followed", "discovered_at", "crawl_id"),
        hashed=("page_url", "url"),
        key=("page_url", "url"),
    ),
}


def create_tables(cursor: Cursor) -> None:
    for statement in CREATE_TABLES:
        cursor.execute(statement)


def write(cursor: Cursor, records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Upsert ``records`` (each ``{"table": name, "row": {...}}``), batched per table with
    ``executemany``; return how many rows of each table were sent. The caller commits."""
    rows: dict[str, list[tuple[Any, ...]]] = {name: [] for name in TABLES}
    for record in records:
        table = TABLES[record["table"]]
        rows[table.name].append(table.parameters(record["row"]))
    for name, parameters in rows.items():
        if parameters:
            cursor.executemany(TABLES[name].upsert, parameters)
    return {name: len(parameters) for name, parameters in rows.items()}


def page_record(item: Mapping[str, Any], crawl_id: str) -> dict[str, Any]:
    """The ``pages`` record of an accepted page (a :class:`~topicspider.items.PageItem`)."""
    return {
        "table": PAGES,
        "row": {
            "url": clean(item["url"]),
            "title": clean(item["title"] or ""),
            "relevance": float(item["relevance"]),
            "depth": int(item["depth"]),
            "charset": clean(item["charset"]),
            "path": clean(item.get("path")),
            "text": clean(item["text"] or ""),
            "parent_url": clean(item.get("parent_url")),
            "fetched_at": utc_datetime(item.get("fetched_at")),
            "crawl_id": crawl_id,
        },
    }


def link_records(
    page_url: str, links: Iterable[Mapping[str, Any]], crawl_id: str
) -> list[dict[str, Any]]:
    """The ``links`` records of the out-links sent with ``links_discovered``."""
    now = utc_datetime()
    page_url = clean(page_url)
    return [
        {
            "table": LINKS,
            "row": {
                "page_url": page_url,
                "url": clean(link["url"]),
                "anchor": clean(link.get("anchor") or ""),
                "score": _finite(link.get("score")),
                "followed": bool(link.get("followed", True)),
                "discovered_at": now,
                "crawl_id": crawl_id,
            },
        }
        for link in links
    ]


def clean(text: str | None) -> str | None:
    """``text`` as UTF-8 can carry it: surrogate pairs joined, lone surrogates as U+FFFD.

    >>> clean("a\\ud83d\\ude00b\\udc00")
    'a😀b\\ufffd'
    """
    if text is None:
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def utc_datetime(iso: str | None = None) -> str:
    """An ISO 8601 time (UTC if it names no zone) as a UTC ``DATETIME`` literal; now if
    ``iso`` is missing or unreadable.

    >>> utc_datetime("2024-05-01T14:00:00+02:00")
    '2024-05-01 12:00:00'
    """
    moment = datetime.now(timezone.utc)
    with suppress(ValueError, TypeError):
        moment = datetime.fromisoformat(iso)  # type: ignore[arg-type]
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _finite(score: Any) -> float | None:
    return float(score) if isinstance(score, (int, float)) and math.isfinite(score) else None
