"""``scrapy mysql-replay``: write the rows waiting in the spool to the database.

Registered as the ``mysql-replay`` command by the ``scrapy.commands`` entry point in
``pyproject.toml`` (a module name cannot hold the hyphen).
"""

from __future__ import annotations

import sys
from collections import Counter
from contextlib import closing
from typing import TYPE_CHECKING, Any, ClassVar

import pymysql
from scrapy.commands import ScrapyCommand

from topicspider.exceptions import TopicSpiderError
from topicspider.mysql import schema
from topicspider.mysql.spool import Spool, read
from topicspider.mysql.url import MySQLUrl

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
            "file once the database has it. Safe to run twice: rows are upserted."
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.settings is not None
        try:
            if not self.settings.get("MYSQL_URL"):
                raise TopicSpiderError("MYSQL_URL is not set (nor TOPICSPIDER_MYSQL_URL)")
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
            self.exitcode = 1
            return
        print(
            f"Replayed {written[schema.PAGES]} pages and {written[schema.LINKS]} links "
            f"from {spool.folder.absolute()} into {url}"
        )


def replay(
    spool: Spool, url: MySQLUrl, *, connect_timeout: float = 5.0, timeout: float = 30.0
) -> Counter[str]:
    """Write the spool's segments to the database, oldest first, deleting each once it is
    committed; return how many rows of each table were written."""
    segments = spool.open()
    written: Counter[str] = Counter()
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
                    counts = schema.write(cursor, read(segment.path))
                connection.commit()
                segment.path.unlink()
                written.update(counts)
    except pymysql.Error as exc:
        raise TopicSpiderError(
            f"MySQL at {url} (MYSQL_URL): {exc}; replayed {written[schema.PAGES]} pages, "
            f"the rest stays in {spool.folder.absolute()}"
        ) from None
    finally:
        spool.close()
    return written
