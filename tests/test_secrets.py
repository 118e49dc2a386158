"""Passwords in ``REDIS_URL`` and ``MYSQL_URL`` never show: not on stderr, not in
``LOG_FILE`` (Scrapy's "Overridden settings" line included, as under scrapyd), not in the
dumped stats, the progress lines or the ``TOPIC_REPORT`` files; and a password Redis refuses
stops the crawl with one line naming the URL masked.

The servers are real: a redis-server with ``requirepass`` and an ACL user, the session's
MariaDB. The passwords hold characters a URL must quote.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from redis_server import RedisServer

from demo.crawl import topic_args
from demo.mariadb import free_port
from tests.test_spider import scrapy, start_scrapy

REDIS_PASSWORD = "R3d!s-k3y/p@ss:99#%"
USER, USER_PASSWORD = "crawler", "Us3r-k3y p@ss/wörd:7"
WRONG_PASSWORD = "Wr0ng-k3y/p@ss"


def secrets_of(password: str) -> list[str]:
    """The password, its form in a URL, and its start (a fragment is a leak too)."""
    return [password, quote(password, safe=""), password[:8]]


@pytest.fixture(scope="module")
def locked_redis(tmp_path_factory):
    """A redis-server that wants a password: ``requirepass``, and a user with its own."""
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    admin = server.client()
    admin.execute_command("ACL", "SETUSER", USER, "on", f">{USER_PASSWORD}", "~*", "&*", "+@all")
    admin.config_set("requirepass", REDIS_PASSWORD)
    yield server
    server.stop()


def redis_url(port: int, user: str, password: str | None) -> str:
    credentials = f"{user}:{quote(password, safe='')}@" if password is not None else ""
    return f"redis://{credentials}127.0.0.1:{port}/0"


def crawl_args(site_url: str, site, out: Path, *settings: str) -> list[str]:
    return topic_args(
        f"{site_url}{site.seed_path}",
        "sports",
        f"TOPIC_PAGES_DIR={out / 'pages'}",
        f"TOPIC_FETCH_LOG={out / 'fetch.jsonl'}",
        f"TOPIC_REPORT={out / 'report'}",
        f"MYSQL_SPOOL_DIR={out / 'spool'}",
        "TOPIC_PROGRESS_INTERVAL=0.2",
        "LOG_LEVEL=DEBUG",
        *settings,
    )


def assert_hidden(secrets: list[str], outputs: list[str], folder: Path) -> None:
    """No secret in the outputs, nor in any file under ``folder`` (logs, report, index)."""
    files = [path for path in folder.rglob("*") if path.is_file()]
    for secret in secrets:
        for output in outputs:
            assert secret not in output
        for path in files:
            assert secret.encode() not in path.read_bytes(), path


def assert_reported(log: str, out: Path) -> None:
    """What the secrets are looked for in was written: settings, progress, stats, report."""
    assert "Overridden settings:" in log
    assert "Progress: fetched" in log
    assert "Dumping Scrapy stats" in log
    assert (out / "report" / "report.md").is_file()
    assert (out / "report" / "report.json").is_file()


@pytest.mark.parametrize(
    ("user", "password", "log_file"), [("", REDIS_PASSWORD, False), (USER, USER_PASSWORD, True)]
)
def test_a_redis_crawl_never_shows_the_password(
    site, site_url, locked_redis, tmp_path, user, password, log_file
):
    crawl_id = f"secret-{user or 'default'}"
    settings = [
        f"REDIS_URL={redis_url(locked_redis.port, user, password)}",
        f"TOPIC_CRAWL_ID={crawl_id}",
    ]
    if log_file:
        settings.append(f"LOG_FILE={tmp_path / 'crawl.log'}")
    result = scrapy(*crawl_args(site_url, site, tmp_path, *settings))
    log = (tmp_path / "crawl.log").read_text("utf-8") if log_file else result.stderr
    assert result.returncode == 0, log[-3000:]
    assert f"Crawl '{crawl_id}' is finished" in log
    assert f"in Redis at 127.0.0.1:{locked_redis.port}/0" in log
    assert_reported(log, tmp_path)
    assert_hidden(secrets_of(password), [result.stdout, result.stderr], tmp_path)


@pytest.mark.parametrize(
    ("user", "password", "masked"),
    [
        ("", WRONG_PASSWORD, "redis://:***@"),
        (USER, WRONG_PASSWORD, f"redis://{USER}:***@"),
        ("", None, "redis://"),
    ],
)
def test_a_refused_password_stops_the_crawl_with_the_url_masked(
    site, site_url, locked_redis, tmp_path, user, password, masked
):
    log_file = tmp_path / "crawl.log"
    result = scrapy(
        *crawl_args(
            site_url,
            site,
            tmp_path,
            f"REDIS_URL={redis_url(locked_redis.port, user, password)}",
            f"LOG_FILE={log_file}",
        )
    )
    assert result.returncode == 2
    expected = (
        f"topicspider: error: Redis at {masked}127.0.0.1:{locked_redis.port}/0 (REDIS_URL)"
        " refused this worker ("
    )
    assert result.stderr.startswith(expected), result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert expected in log_file.read_text("utf-8")  # where a scrapyd user looks
    assert "Spider opened" not in log_file.read_text("utf-8")
    secrets = [*secrets_of(WRONG_PASSWORD), *secrets_of(REDIS_PASSWORD)]
    assert_hidden(secrets, [result.stdout, result.stderr], tmp_path)


def test_a_malformed_redis_url_is_one_line_without_the_password(site, site_url, tmp_path):
    # Unquoted, "/" ends the host part: urllib reads the password as a port number.
    unquoted = f"redis://:{REDIS_PASSWORD}@127.0.0.1:6379/0"
    result = scrapy(*crawl_args(site_url, site, tmp_path, f"REDIS_URL={unquoted}"))
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert errors == [
        "topicspider: error: REDIS_URL='redis://:***@127.0.0.1:6379/0':"
        " expected redis://[[user]:password@]host[:port][/db]"
    ]
    assert "Spider opened" not in result.stderr
    assert_hidden(secrets_of(REDIS_PASSWORD), [result.stdout, result.stderr], tmp_path)


def test_an_unreachable_redis_is_waited_for_without_showing_the_password(site, site_url, tmp_path):
    url = redis_url(free_port(), USER, REDIS_PASSWORD)  # nothing listens there
    log = tmp_path / "stderr.log"
    with log.open("w") as stderr:
        worker = start_scrapy(
            *crawl_args(site_url, site, tmp_path, f"REDIS_URL={url}"),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        deadline = time.monotonic() + 60
        while "is unavailable" not in log.read_text("utf-8"):
            assert worker.poll() is None, log.read_text("utf-8")[-3000:]
            assert time.monotonic() < deadline, "no warning that Redis is unavailable"
            time.sleep(0.1)
        worker.send_signal(signal.SIGINT)  # Ctrl-C: the worker stops waiting
        worker.wait(60)
    finally:
        worker.kill()
    assert "Connection refused" in log.read_text("utf-8")
    assert_hidden(secrets_of(REDIS_PASSWORD), [], tmp_path)


def test_a_mysql_crawl_never_shows_the_password(
    site, site_url, mysql_url, mysql_password, tmp_path
):
    log_file = tmp_path / "crawl.log"
    result = scrapy(
        *crawl_args(site_url, site, tmp_path, f"MYSQL_URL={mysql_url}", f"LOG_FILE={log_file}")
    )
    log = log_file.read_text("utf-8")
    assert result.returncode == 0, log[-3000:]
    assert "'mysql/stored':" in log
    assert_reported(log, tmp_path)
    assert_hidden(secrets_of(mysql_password), [result.stdout, result.stderr], tmp_path)
