"""A MySQL server that accepts connections but never answers fails a crawl's start, and
``mysql-replay``, within ``MYSQL_CONNECT_TIMEOUT``, not ``MYSQL_TIMEOUT``; queries still
get ``MYSQL_TIMEOUT``. The server is a real MariaDB, stopped with SIGSTOP."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator

import pymysql
import pytest

from demo.mariadb import MariaDB
from tests.test_pipelines_mysql import assert_no_secret, crawl_command, scrapy, stats_from
from topicspider.mysql.connection import connect
from topicspider.mysql.url import MySQLUrl

#: Long enough that waiting for it would time the test out.
LONG = 300


@contextlib.contextmanager
def hung(mariadb: MariaDB) -> Iterator[None]:
    """The server stopped: its port still accepts connections, nothing answers."""
    os.kill(mariadb.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(mariadb.pid, signal.SIGCONT)


def test_a_hung_server_fails_within_the_connect_timeout(lost_mariadb):
    kwargs = MySQLUrl.parse(lost_mariadb.create_database("hung")).connect_kwargs()
    with hung(lost_mariadb):
        started = time.monotonic()
        with pytest.raises(pymysql.OperationalError, match="timed out"):
            connect(**kwargs, connect_timeout=1, read_timeout=LONG)
        assert time.monotonic() - started < 10


def test_queries_wait_the_read_timeout_not_the_connect_timeout(lost_mariadb):
    kwargs = MySQLUrl.parse(lost_mariadb.create_database("slow")).connect_kwargs()
    connection = connect(**kwargs, connect_timeout=1, read_timeout=LONG)
    with contextlib.closing(connection), connection.cursor() as cursor:
        cursor.execute("SELECT SLEEP(2) AS slept")
        assert cursor.fetchone() == (0,)


def test_a_crawl_and_a_replay_on_a_hung_server_stop_in_one_line(
    site, site_url, tmp_path, lost_mariadb
):
    mysql_url = lost_mariadb.create_database("crawl_hung")
    timeouts = ("-s", "MYSQL_CONNECT_TIMEOUT=1", "-s", f"MYSQL_TIMEOUT={LONG}")
    with hung(lost_mariadb):
        crawl = scrapy(
            *crawl_command(site, site_url, tmp_path, f"MYSQL_URL={mysql_url}"),
            *timeouts,
            timeout=60,
        )
        replay = scrapy(
            "mysql-replay",
            "-s",
            f"MYSQL_SPOOL_DIR={tmp_path / 'spool'}",
            *timeouts,
            env={"TOPICSPIDER_MYSQL_URL": mysql_url},
            timeout=60,
        )
    assert_no_secret(mysql_url, crawl.stdout, crawl.stderr, replay.stdout, replay.stderr)
    [error] = [line for line in crawl.stderr.splitlines() if "ERROR" in line]
    assert "Cannot use the MySQL database" in error
    assert "timed out" in error
    assert stats_from(crawl.stderr)["finish_reason"] == "mysql_unavailable"
    assert crawl.returncode == 1
    assert replay.returncode == 1
    assert "topicspider: error: MySQL at mysql://topicspider:***@127.0.0.1:" in replay.stderr
    assert "timed out" in replay.stderr
