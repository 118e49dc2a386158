"""``scrapy mysql-replay``: write the rows waiting in the spool to the database.

Registered as the ``mysql-replay`` command by the ``scrapy.commands`` entry point in
``pyproject.toml`` (a module name cannot hold the hyphen).
"""

from __future__ import annotations

import sys
from collections import Counter
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pymysql
from scrapy.commands import ScrapyCommand

from topicspider.charset import readable
from topicspider.exceptions import ConfigError, TopicSpiderError
from topicspider.mysql import schema
from topicspider.mysql.connection import connect
from topicspider.mysql.spool import SpoolInUse, read, spools
from topicspider.mysql.url import MySQLUrl
from topicspider.pipelines.mysql import check_settings

if TYPE_CHECKING:
    import argparse
    import os

    from topicspider.mysql.spool import Segment, Spool


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}

    def short_desc(self) -> str:
        return "Write the rows waiting in MYSQL_SPOOL_DIR to the database at MYSQL_URL"

    def long_desc(self) -> str:
        return (
            "Write the pages and links crawls could not store in MySQL (kept in "
            "MYSQL_SPOOL_DIR, and under scrapyd in MYSQL_SPOOL_DIR/<job id>) to the database "
            "at MYSQL_URL, oldest first, deleting each spool file once the database has it. "
            "A folder a running crawl holds is skipped: that crawl writes its rows. Safe to "
            "run twice: rows are upserted. Rows the database refuses for their data, or "
            "bigger than its max_allowed_packet, are kept in rejected.jsonl of their folder; "
            "--rejected writes those too, once the table or the server takes them."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "--rejected",
            action="store_true",
            help="also write the rows kept in rejected.jsonl (what is refused again stays there)",
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.settings is not None
        try:
            if not self.settings.get("MYSQL_URL"):
                raise ConfigError("MYSQL_URL is not set (nor TOPICSPIDER_MYSQL_URL)")
            check_settings(self.settings)
            url = MySQLUrl.parse(self.settings.get("MYSQL_URL"))
            root = Path(self.settings.get("MYSQL_SPOOL_DIR"))
            if not root.is_dir():  # a typo would be read as an empty spool
                raise ConfigError(f"MYSQL_SPOOL_DIR={str(root)!r}: no such folder")
            replayed = replay(
                root,
                url,
                connect_timeout=self.settings.getfloat("MYSQL_CONNECT_TIMEOUT"),
                timeout=self.settings.getfloat("MYSQL_TIMEOUT"),
                rejected=opts.rejected,
            )
        except TopicSpiderError as error:
            print(f"topicspider: error: {readable(str(error))}", file=sys.stderr)
            self.exitcode = 2 if isinstance(error, ConfigError) else 1
            return
        for folder in replayed.busy:
            print(
                f"topicspider: skipped {folder.absolute()}: a running crawl or replay holds "
                "it, and writes its rows",
                file=sys.stderr,
            )
        for row, kept_in in replayed.refused:
            print(
                f"topicspider: MySQL at {url} refused {row}: {row.error}; "
                f"the row is kept in {kept_in.absolute()}",
                file=sys.stderr,
            )
        jobs = [folder.name for folder in replayed.folders if folder != root]
        rejected = dict.fromkeys(str(kept_in.absolute()) for _, kept_in in replayed.refused)
        print(
            f"Replayed {replayed.counts[schema.PAGES]} pages and "
            f"{replayed.counts[schema.LINKS]} links from {root.absolute()}"
            + (f" (job folders {', '.join(jobs)})" if jobs else "")
            + f" into {url}"
            + (
                f"; {len(replayed.refused)} refused, kept in {', '.join(rejected)}"
                if replayed.refused
                else ""
            )
        )


@dataclass
class Replayed:
    """What :func:`replay` did."""

    #: Rows written, per table.
    counts: Counter[str] = field(default_factory=Counter)
    #: The rows the database refused for their data or their size, each with the
    #: ``rejected.jsonl`` it is kept in.
    refused: list[tuple[schema.Refused, Path]] = field(default_factory=list)
    #: The folders whose rows were written.
    folders: list[Path] = field(default_factory=list)
    #: The folders skipped: a running crawl or replay holds them, and writes their rows.
    busy: list[Path] = field(default_factory=list)


def replay(
    root: str | os.PathLike[str],
    url: MySQLUrl,
    *,
    connect_timeout: float = 5.0,
    timeout: float = 30.0,
    rejected: bool = False,
) -> Replayed:
    """Write the segments of the spool ``root`` and of each job folder in it to the
    database, all oldest first, as the crawls made them (a URL left by two crawls ends with
    the later one's row), deleting each once it is committed. Rows the database refuses
    for their data, or bigger than its ``max_allowed_packet``, go to the ``rejected.jsonl``
    of their folder; with ``rejected``, those files are written too, each as its folder's
    newest segment. Folders another process holds are skipped, in :attr:`Replayed.busy`."""
    replayed = Replayed()
    with ExitStack() as held:
        queue: list[tuple[Segment, Spool]] = []
        for spool in spools(Path(root)):
            try:
                found = spool.open()
            except SpoolInUse:
                replayed.busy.append(spool.folder)
                continue
            held.callback(spool.close)
            if rejected and (again := spool.requeue_rejected()):
                found.append(again)
            if found:
                replayed.folders.append(spool.folder)
                queue += [(segment, spool) for segment in found]
        queue.sort(key=lambda entry: entry[0].path.name)
        try:
            _write(queue, url, replayed, connect_timeout=connect_timeout, timeout=timeout)
        except (pymysql.Error, schema.SchemaError, OSError) as exc:
            database = isinstance(exc, (pymysql.Error, schema.SchemaError))
            where = f"MySQL at {url} (MYSQL_URL)" if database else "The spool"
            raise TopicSpiderError(
                f"{where}: {exc}; replayed {replayed.counts[schema.PAGES]} pages, "
                f"the rest stays in {Path(root).absolute()}"
            ) from None
    return replayed


def _write(
    queue: list[tuple[Segment, Spool]],
    url: MySQLUrl,
    replayed: Replayed,
    *,
    connect_timeout: float,
    timeout: float,
) -> None:
    connection = connect(
        **url.connect_kwargs(),
        connect_timeout=connect_timeout,
        read_timeout=timeout,
        write_timeout=timeout,
    )
    with closing(connection):
        with connection.cursor() as cursor:
            schema.create_tables(cursor)
        for segment, spool in queue:
            with connection.cursor() as cursor:
                done = schema.write(cursor, read(segment.path))
            connection.commit()
            if done.refused:
                spool.reject([row.as_record() for row in done.refused])
                replayed.refused += [(row, spool.rejected) for row in done.refused]
            segment.path.unlink()
            replayed.counts.update(done.counts)
