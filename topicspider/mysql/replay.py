"""``scrapy mysql-replay``: write the rows waiting in the spool to the database.

Registered as the ``mysql-replay`` command by the ``scrapy.commands`` entry point in
``pyproject.toml`` (a module name cannot hold the hyphen).
"""

from __future__ import annotations

import sys
from contextlib import closing
from typing import TYPE_CHECKING, Any, ClassVar

import pymysql
from scrapy.commands import ScrapyCommand

from topicspider.exceptions import ConfigError, TopicSpiderError
from topicspider.mysql import schema
from topicspider.mysql.spool import Spool, read
from topicspider.mysql.url import MySQLUrl
from topicspider.pipelines.mysql import check_settings

if TYPE_CHECKING:
    import argparse


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}

    def short_desc(self) -> str:
        return "Write the rows waiting in MYSQL_SPOOL_DIR to the database at MYSQL_URL"

    def long_desc(self) -> str:
        return (
            "Write the pages and links a crawl could not store in MySQL (kept in "
            "MYSQL_SPOOL_DIR) to the database at MYSQL_URL, oldest first, deleting each spool "
            "file once the database has it. Safe to run twice: rows are upserted. Rows the "
            "database refuses for their data, or bigger than its max_allowed_packet, are kept "
            "in MYSQL_SPOOL_DIR/rejected.jsonl."
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.settings is not None
        try:
            if not self.settings.get("MYSQL_URL"):
                raise TopicSpiderError("MYSQL_URL is not set (nor TOPICSPIDER_MYSQL_URL)")
            check_settings(self.settings)
            url = MySQLUrl.parse(self.settings.get("MYSQL_URL"))
            spool = Spool(self.settings.get("MYSQL_SPOOL_DIR"))
            written = replay(
                spool,
                url,
                connect_timeout=self.settings.getfloat("MYSQL_CONNECT_TIMEOUT"),
                timeout=self.settings.getfloat("MYSQL_TIMEOUT"),
            )
        except TopicSpiderError as error:
            print(f"topicspider: error: {error}", file=sys.stderr)
            self.exitcode = 2 if isinstance(error, ConfigError) else 1
            return
        for row in written.refused:
            print(
                f"topicspider: MySQL at {url} refused {row}: {row.error}; "
                f"the row is kept in {spool.rejected.absolute()}",
                file=sys.stderr,
            )
        print(
            f"Replayed {written.counts[schema.PAGES]} pages and "
            f"{written.counts[schema.LINKS]} links from {spool.folder.absolute()} into {url}"
            + (
                f"; {len(written.refused)} refused, kept in {spool.rejected.absolute()}"
                if written.refused
                else ""
            )
        )


def replay(
    spool: Spool, url: MySQLUrl, *, connect_timeout: float = 5.0, timeout: float = 30.0
) -> schema.Written:
    """Write the spool's segments to the database, oldest first, deleting each once it is
    committed; return how many rows of each table were written, and the rows the database
    refused for their data or that are bigger than its ``max_allowed_packet``, which are
    kept in the spool's ``rejected.jsonl``."""
    segments = spool.open()
    written = schema.Written()
    try:
        connection = pymysql.connect(
            **url.connect_kwargs(),
            connect_timeout=connect_timeout,
            read_timeout=timeout,
            write_timeout=timeout,
        )
        with closing(connection):
            with connection.cursor() as cursor:
                schema.create_tables(cursor)
            for segment in segments:
                with connection.cursor() as cursor:
                    done = schema.write(cursor, read(segment.path))
                connection.commit()
                if done.refused:
                    spool.reject([row.as_record() for row in done.refused])
                segment.path.unlink()
                written.counts.update(done.counts)
                written.refused.extend(done.refused)
    except (pymysql.Error, schema.SchemaError, OSError) as exc:
        database = isinstance(exc, (pymysql.Error, schema.SchemaError))
        where = f"MySQL at {url} (MYSQL_URL)" if database else "The spool"
        raise TopicSpiderError(
            f"{where}: {exc}; replayed {written.counts[schema.PAGES]} pages, "
            f"the rest stays in {spool.folder.absolute()}"
        ) from None
    finally:
        spool.close()
    return written
