"""The two tables, their upserts, and the rows that go into them.

A row is first a *record*: a JSON-ready dict, which the spool can keep while the database is
away. :func:`write` turns records into query parameters — never into SQL text — cut to what
their columns hold, and upserts them on the table's unique key, so writing a record twice
changes nothing. A row the database still refuses for its data, or that is too big to send
at all, is returned, not written, and does not hold back the others.

Tables an older version made are not changed: :func:`create_tables` says which columns they
lack and the ``ALTER TABLE`` that adds them.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import pymysql
from pymysql.constants import ER

from topicspider.exceptions import TopicSpiderError

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from pymysql.cursors import Cursor

PAGES = "pages"
LINKS = "links"

#: The most a ``TEXT`` and a ``MEDIUMTEXT`` column hold, in bytes (of utf8mb4).
TEXT_BYTES = 65_535
MEDIUMTEXT_BYTES = 16_777_215
#: The most ``crawl_id``, a ``VARCHAR(255)``, holds, in characters.
CRAWL_ID_CHARS = 255

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
    #: When the row's values were had: an upsert keeps the newer row (a spool replayed after
    #: a later crawl stored the page wrote the older one over it).
    newest: str
    #: Text fields and the most their column holds: bytes (``TEXT``, ``MEDIUMTEXT``)…
    max_bytes: Mapping[str, int] = field(default_factory=dict)
    #: …or characters (``VARCHAR``).
    max_chars: Mapping[str, int] = field(default_factory=dict)

    @property
    def columns(self) -> tuple[str, ...]:
        return (*(f"{name}_hash" for name in self.hashed), *self.fields)

    @property
    def upsert(self) -> str:
        values = ", ".join(["%s"] * len(self.columns))
        return f"{self.insert} VALUES ({values}) ON DUPLICATE KEY UPDATE {self.updates}"

    @property
    def insert(self) -> str:
        columns = ", ".join(f"`{name}`" for name in self.columns)
        return f"INSERT INTO `{self.name}` ({columns})"

    @property
    def updates(self) -> str:
        # MySQL assigns left to right, each seeing those before: ``newest`` goes last.
        updated = [name for name in self.fields if name not in (*self.key, self.newest)]
        return ", ".join(
            f"`{name}` = IF(VALUES(`{self.newest}`) >= `{self.newest}`, VALUES(`{name}`), `{name}`)"
            for name in (*updated, self.newest)
        )

    def parameters(self, record: Mapping[str, Any]) -> tuple[Any, ...]:
        """The upsert's parameters for ``record``: each text cut to what its column holds,
        the hashes of the URLs whole — two URLs that differ only past what their column
        holds are two rows, not one overwriting the other."""
        hashes = (
            hashlib.sha1(record[name].encode(), usedforsecurity=False).digest()
            for name in self.hashed
        )
        return (*hashes, *(self.fit(name, record[name]) for name in self.fields))

    def fit(self, name: str, value: Any) -> Any:
        """``value`` of field ``name``, cut to what its column holds (strict SQL mode would
        refuse the row)."""
        if name in self.max_bytes:
            return cut(value, self.max_bytes[name])
        if name in self.max_chars and value is not None:
            return value[: self.max_chars[name]]
        return value


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
        newest="fetched_at",
        max_bytes={
            "url": TEXT_BYTES,
            "title": TEXT_BYTES,
            "path": TEXT_BYTES,
            "text": MEDIUMTEXT_BYTES,
            "parent_url": TEXT_BYTES,
        },
        max_chars={"charset": 64, "crawl_id": CRAWL_ID_CHARS},
    ),
    LINKS: Table(
        LINKS,
        fields=("page_url", "url", "anchor", "score", "followed", "discovered_at", "crawl_id"),
        hashed=("page_url", "url"),
        key=("page_url", "url"),
        newest="discovered_at",
        max_bytes={"page_url": TEXT_BYTES, "url": TEXT_BYTES, "anchor": TEXT_BYTES},
        max_chars={"crawl_id": CRAWL_ID_CHARS},
    ),
}


class SchemaError(TopicSpiderError):
    """Tables the crawl cannot write into; the message says what to do."""


class CreateDenied(SchemaError):
    """Tables missing that the account may not create. Without this a MySQL error about
    ``CREATE`` said nothing of what the crawl needs."""

    def __init__(self, tables: Iterable[str]) -> None:
        tables = list(tables)
        super().__init__(
            f"this account may not create the missing table{'s' * (len(tables) > 1)}"
            f" {' and '.join(tables)}: grant it CREATE on the database, or run one crawl as"
            " an account that may (once they exist the crawl needs SELECT, INSERT and UPDATE)"
        )


class OlderTables(SchemaError):
    """Tables made by an older version, or by hand, that the upserts cannot use: a column
    they write missing (every write would fail, and be retried, as if the database were
    away), a unique key they rely on missing (every write would add a row), a column they
    leave out that takes no default (every row refused)."""

    def __init__(
        self,
        missing: Mapping[str, list[str]],
        keys: Mapping[str, list[str]] | None = None,
        unfilled: Mapping[str, list[str]] | None = None,
    ) -> None:
        keys, unfilled = keys or {}, unfilled or {}
        lacks = [
            f"{table} has no column{'s' * (len(columns) > 1)} {' and '.join(columns)}"
            for table, columns in missing.items()
        ]
        lacks += [
            f"{table} has no unique key {' and '.join(names)}" for table, names in keys.items()
        ]
        lacks += [
            f"{table} has {' and '.join(columns)} NOT NULL without a default, which the crawl"
            " does not fill"
            for table, columns in unfilled.items()
        ]
        fixes = [f'"{add_columns(table, columns)}"' for table, columns in missing.items()]
        for table, names in keys.items():
            hashes = [column for column in TABLES[table].columns if column.endswith("_hash")]
            if set(hashes) & set(missing.get(table, ())):  # rows already there get theirs
                fixes.append(f'"{fill_hashes(table)}"')
            fixes.append(f'"{add_unique_keys(table, names)}"')
        fixes += [
            f"give {table}.{column} a default or let it be NULL"
            for table, columns in unfilled.items()
            for column in columns
        ]
        super().__init__(
            f"the tables were made by an older topicspider, or by hand: {', '.join(lacks)}:"
            f" run {', then '.join(fixes)}, or use a new database"
        )


def create_tables(cursor: Cursor) -> None:
    """Create the tables that do not exist; raise :class:`OlderTables` if one that does
    lacks a column the upserts write or a unique key they rely on, or has a column they
    leave out that takes no default.

    Only a missing table is created: an account that may write but not ``CREATE`` (a
    database's owner made the tables) is refused ``CREATE TABLE IF NOT EXISTS`` even for a
    table that exists. Only the tables that were there are checked: those made here are
    as :data:`CREATE_TABLES` has them."""
    cursor.execute(
        "SELECT TABLE_NAME, COLUMN_NAME, IS_NULLABLE, COLUMN_DEFAULT, EXTRA"
        " FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN %s",
        (tuple(TABLES),),
    )
    columns = [(table.lower(), column.lower(), *rest) for table, column, *rest in cursor.fetchall()]
    found = {table for table, *_ in columns}
    existing = [name for name in TABLES if name in found]
    absent = [name for name in TABLES if name not in found]
    try:
        for name, statement in zip(TABLES, CREATE_TABLES, strict=True):
            if name in absent:
                cursor.execute(statement)
    except pymysql.MySQLError as exc:
        if exc.args[0] == ER.TABLEACCESS_DENIED_ERROR:
            raise CreateDenied(absent) from exc
        raise
    if not existing:  # made here, as CREATE_TABLES has them
        return
    present = {(table, column) for table, column, *_ in columns}
    missing = {
        name: [column for column in TABLES[name].columns if (name, column) not in present]
        for name in existing
    }
    unfilled: dict[str, list[str]] = {}
    for table, column, nullable, default, extra in columns:
        if (
            column not in TABLES[table].columns
            and nullable == "NO"
            and default is None
            and "auto_increment" not in extra.lower()
        ):
            unfilled.setdefault(table, []).append(column)
    cursor.execute(
        "SELECT TABLE_NAME, INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS"
        " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN %s AND NON_UNIQUE = 0"
        " ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX",
        (tuple(TABLES),),
    )
    unique: dict[tuple[str, str], list[str]] = {}
    for table, index, column in cursor.fetchall():
        unique.setdefault((table.lower(), index), []).append(column.lower())
    keyed = {(table, tuple(key_columns)) for (table, _), key_columns in unique.items()}
    keys = {
        name: [key for key, wanted in unique_keys(name).items() if (name, wanted) not in keyed]
        for name in existing
    }
    missing = {table: names for table, names in missing.items() if names}
    keys = {table: names for table, names in keys.items() if names}
    if missing or keys or unfilled:
        raise OlderTables(missing, keys, unfilled)
    check_privileges(cursor)


def check_privileges(cursor: Cursor) -> None:
    """Raise :class:`SchemaError` if the account may not run the upserts: each is run on no
    row (``SELECT … WHERE FALSE``), which the server checks as it would a row's. Before, an
    account with ``SELECT`` alone crawled to the end, every write retried as an outage."""
    for table in TABLES.values():
        nulls = ", ".join(["NULL"] * len(table.columns))
        try:
            cursor.execute(
                f"{table.insert} SELECT {nulls} FROM DUAL WHERE FALSE"
                f" ON DUPLICATE KEY UPDATE {table.updates}"
            )
        except pymysql.MySQLError as exc:
            if exc.args[0] in (ER.TABLEACCESS_DENIED_ERROR, ER.COLUMNACCESS_DENIED_ERROR):
                raise SchemaError(
                    f"{exc.args[1]}: grant the account SELECT, INSERT and UPDATE on the database"
                ) from exc
            raise


def unique_keys(table: str) -> dict[str, tuple[str, ...]]:
    """The unique keys :data:`CREATE_TABLES` gives ``table``, by name: their columns."""
    create = dict(zip(TABLES, CREATE_TABLES, strict=True))[table]
    return {
        name: tuple(column.strip(" `") for column in columns.split(","))
        for name, columns in re.findall(r"UNIQUE KEY (\w+) \(([^)]*)\)", create)
    }


def fill_hashes(table: str) -> str:
    """The ``UPDATE`` that gives the rows already in ``table`` their URL hashes.

    >>> fill_hashes(LINKS)
    'UPDATE `links` SET `page_url_hash` = UNHEX(SHA1(`page_url`)), `url_hash` = UNHEX(SHA1(`url`))'
    """
    sets = ", ".join(f"`{name}_hash` = UNHEX(SHA1(`{name}`))" for name in TABLES[table].hashed)
    return f"UPDATE `{table}` SET {sets}"


def add_unique_keys(table: str, names: Iterable[str]) -> str:
    """The ``ALTER TABLE`` that adds the unique keys ``names`` to ``table``.

    >>> add_unique_keys(PAGES, ["url_hash"])
    'ALTER TABLE `pages` ADD UNIQUE KEY `url_hash` (`url_hash`)'
    """
    keys = unique_keys(table)
    adds = ", ".join(
        f"ADD UNIQUE KEY `{name}` ({', '.join(f'`{column}`' for column in keys[name])})"
        for name in names
    )
    return f"ALTER TABLE `{table}` {adds}"


def add_columns(table: str, columns: Iterable[str]) -> str:
    """The ``ALTER TABLE`` that adds ``columns`` to ``table`` as :data:`CREATE_TABLES`
    defines them.

    >>> add_columns(LINKS, ["anchor", "followed"])
    'ALTER TABLE `links` ADD COLUMN `anchor` TEXT NOT NULL, ADD COLUMN `followed` BOOLEAN NOT NULL'
    """
    create = dict(zip(TABLES, CREATE_TABLES, strict=True))[table]
    definitions = dict(re.findall(r"^ +`?(\w+)`? (.+?),?$", create, re.MULTILINE))
    adds = ", ".join(f"ADD COLUMN `{column}` {definitions[column]}" for column in columns)
    return f"ALTER TABLE `{table}` {adds}"


#: Error codes that say a row's data is bad, not that the database is away; pymysql raises
#: some of them as ``OperationalError`` or ``InternalError``.
REFUSED_DATA = frozenset(
    {
        ER.BAD_NULL_ERROR,
        ER.WARN_NULL_TO_NOTNULL,
        ER.WARN_DATA_OUT_OF_RANGE,
        ER.WARN_DATA_TRUNCATED,
        ER.TRUNCATED_WRONG_VALUE,
        ER.INVALID_CHARACTER_STRING,
        ER.NO_DEFAULT_FOR_FIELD,
        ER.TRUNCATED_WRONG_VALUE_FOR_FIELD,
        ER.ILLEGAL_VALUE_FOR_TYPE,
        ER.DATA_TOO_LONG,
        ER.WRONG_VALUE_FOR_TYPE,
        ER.DATETIME_FUNCTION_OVERFLOW,
        ER.CONSTRAINT_FAILED,  # MariaDB's CHECK constraints
        3819,  # MySQL's CHECK constraints
    }
)


def refuses(error: BaseException) -> bool:
    """Whether ``error`` is the database refusing a row for its data: sending the row again
    would fail again.

    >>> refuses(pymysql.err.DataError(1406, "Data too long for column 'title' at row 1"))
    True
    >>> refuses(pymysql.err.OperationalError(2013, "Lost connection to server during query"))
    False
    """
    if isinstance(error, (pymysql.err.DataError, pymysql.err.IntegrityError)):
        return True
    return isinstance(error, pymysql.Error) and bool(error.args) and error.args[0] in REFUSED_DATA


def too_big(size: int, max_packet: int) -> str:
    """Why a row whose upsert takes ``size`` bytes is not sent, in the server's words."""
    return str(
        pymysql.err.OperationalError(
            ER.NET_PACKET_TOO_LARGE,
            "Got a packet bigger than 'max_allowed_packet' bytes: its upsert takes "
            f"{size} bytes, the server's max_allowed_packet is {max_packet}",
        )
    )


@dataclass
class Refused:
    """A record the database refused, and why."""

    record: Mapping[str, Any]
    error: str

    def __str__(self) -> str:
        """What the row is, by its URL: ``the page URL`` or ``the link URL on PAGE_URL``."""
        record = self.record if isinstance(self.record, dict) else {}
        row = record.get("row") if isinstance(record.get("row"), dict) else {}
        if record.get("table") == LINKS:
            return f"the link {row.get('url')} on {row.get('page_url')}"
        return f"the page {row.get('url')}"

    def as_record(self) -> dict[str, Any]:
        """The record with the database's error, as the spool's ``rejected.jsonl`` keeps it."""
        if isinstance(self.record, dict):
            return {**self.record, "error": self.error}
        return {"record": self.record, "error": self.error}


@dataclass
class Written:
    """What :func:`write` did: rows written per table, and the records refused."""

    counts: Counter[str] = field(default_factory=Counter)
    refused: list[Refused] = field(default_factory=list)


def write(cursor: Cursor, records: Iterable[Mapping[str, Any]]) -> Written:
    """Upsert ``records`` (each ``{"table": name, "row": {...}}``), batched per table with
    ``executemany``, in statements that fit the server's ``max_allowed_packet``. The caller
    commits.

    A row whose upsert alone does not fit that packet is left out, in
    :attr:`Written.refused` — sent, it would make the server drop the connection, which
    looks like an outage, every time; so are records that are not rows of the schema. If
    the database refuses a row for its data (:func:`refuses`), that table's batch is sent
    again one row at a time — InnoDB undoes just the failed statement — and the rows it
    refuses are left out too. Any other error is raised: the database may take the rows
    later."""
    written = Written()
    cursor.execute("SELECT @@max_allowed_packet")
    [max_packet] = cursor.fetchone()
    # A packet (a command byte and the statement) must be shorter than max_allowed_packet,
    # or the server drops the connection: error 1153, or 2006 when the drop comes first.
    max_statement = max_packet - 2
    cursor.max_stmt_length = min(cursor.max_stmt_length, max_statement)
    batches: dict[str, list[tuple[Mapping[str, Any], tuple[Any, ...]]]] = {
        name: [] for name in TABLES
    }
    for record in records:
        try:
            table = TABLES[record["table"]]
            parameters = table.parameters(record["row"])
        except (KeyError, TypeError, AttributeError) as error:
            written.refused.append(Refused(record, f"not a row of the schema ({error!r})"))
            continue
        size = len(cursor.mogrify(table.upsert, parameters).encode(cursor.connection.encoding))
        if size > max_statement:
            written.refused.append(Refused(record, too_big(size, max_packet)))
        else:
            batches[table.name].append((record, parameters))
    for name, batch in batches.items():
        if not batch:
            continue
        upsert = TABLES[name].upsert
        try:
            cursor.executemany(upsert, [parameters for _, parameters in batch])
        except pymysql.Error as error:
            if not refuses(error):
                raise
        else:
            written.counts[name] += len(batch)
            continue
        for record, parameters in batch:
            try:
                cursor.execute(upsert, parameters)
            except pymysql.Error as error:
                if not refuses(error):
                    raise
                written.refused.append(Refused(record, str(error)))
            else:
                written.counts[name] += 1
    return written


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


def cut(text: str | None, max_bytes: int) -> str | None:
    """``text`` cut to at most ``max_bytes`` bytes of UTF-8, between two characters.

    >>> cut("足球比赛", 8)
    '足球'
    """
    if text is None or len(text) * 4 <= max_bytes:
        return text
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[:max_bytes].decode("utf-8", "ignore")


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
