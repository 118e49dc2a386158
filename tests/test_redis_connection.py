"""REDIS_URL in messages: the password masked, whatever the URL's mistakes. A URL Redis
cannot serve stops a worker before its crawl. Redis refusing commands for a while (a failed
save, missing replicas, a long script) is an outage."""

from __future__ import annotations

import doctest
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis
from redis_server import RedisServer, new_crawl, page_url
from scrapy.settings import Settings

from topicspider import settings as project_settings
from topicspider.exceptions import ConfigError
from topicspider.keywords import load_keywords
from topicspider.redis import connection
from topicspider.redis.connection import UNAVAILABLE, key_prefix, masked_url
from topicspider.redis.crawl import CrawlRecord, check_settings
from topicspider.redis.learning import LearningSync
from topicspider.redis.patterns import SharedPatternStats
from topicspider.redis.simhashes import SharedSimHashIndex

ROOT = Path(__file__).resolve().parent.parent


def test_doctests():
    assert doctest.testmod(connection).failed == 0


@pytest.mark.parametrize(
    "url",
    [
        "redis://:hunter2-pw@127.0.0.1:6379/0",
        "redis://user:hunter2-pw@127.0.0.1:6379/0",
        "rediss://user:hunter2%2Fpw@[::1]:6379/0",
        "unix://:hunter2-pw@/run/redis.sock?db=1",
        "redis://:hunter2/pw@127.0.0.1/0",
        "redis://:hunter2#pw@127.0.0.1/0",
        "redis://:hunter2@pw@127.0.0.1/0",
        "redis://:x://hunter2-pw@127.0.0.1/0",
        "redis://hunter2-pw@127.0.0.1/0",
        "redis://hunter2/pw:x@127.0.0.1/0",
        ":hunter2-pw@127.0.0.1:6379",
    ],
)
def test_no_part_of_the_password_shows(url):
    shown = masked_url(url)
    assert "hunter2" not in shown
    assert "***@" in shown
    assert shown.endswith(url.rpartition("@")[2])


@pytest.mark.parametrize("name", ["news:cn", "news*", "news?", "news[12]", "news cn", "新闻"])
def test_a_crawl_id_a_key_pattern_would_misread_is_refused(name):
    """Before: crawl ``news:cn`` had keys ``topicspider:news:cn:*``, which the pattern that
    deletes crawl ``news``, ``topicspider:news:*``, matches too; a glob character in an id
    makes its own pattern match other crawls' keys."""
    with pytest.raises(ConfigError) as refused:
        key_prefix(Settings({"TOPIC_CRAWL_ID": name}), "topic")
    assert str(refused.value) == (
        f"TOPIC_CRAWL_ID={name!r}: expected letters, digits, '.', '_' and '-' only (it names"
        " the crawl's Redis keys, topicspider:<id>:*)"
    )


def test_a_crawl_id_defaults_to_the_spider_name():
    settings = Settings()
    settings.setmodule(project_settings)
    assert key_prefix(settings, "topic") == "topicspider:topic"
    settings.set("TOPIC_CRAWL_ID", "news_2024.v-2")
    assert key_prefix(settings, "topic") == "topicspider:news_2024.v-2"


def refusal(url: str, **others: str) -> str:
    """Why a worker with this ``REDIS_URL`` (and other settings) does not start."""
    settings = Settings()
    settings.setmodule(project_settings)
    settings.setdict({"REDIS_URL": url, **others})
    with pytest.raises(ConfigError) as refused:
        check_settings(settings, "topic", load_keywords("sports"))
    return str(refused.value)


@contextmanager
def password_required(server: RedisServer) -> Iterator[None]:
    """``requirepass``: Redis asks every new connection for a password."""
    admin = redis.Redis(host="127.0.0.1", port=server.port, single_connection_client=True)
    admin.config_set("requirepass", "hunter2-pw")
    try:
        yield
    finally:
        admin.config_set("requirepass", "")
        admin.close()


def test_a_url_redis_cannot_serve_stops_the_worker_before_its_crawl(redis_server):
    """A database Redis does not have, a path that is no database number, a password Redis
    asks for and the URL does not give, a user Redis's ACL does not let run scripts: one
    line each, before the crawl. Before, the first and the last stopped the worker with
    tracebacks, the second crawled in database 0, and the third said ``HELLO must be called
    with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option
    can be used…``."""
    at = f"127.0.0.1:{redis_server.port}"
    assert refusal(f"redis://{at}/99") == (
        f"Redis at redis://{at}/99 (REDIS_URL) refused this worker (DB index is out of range);"
        " the crawl does not start"
    )
    assert refusal(f"redis://:hunter2-pw@{at}/crawl2") == (
        f"REDIS_URL='redis://:***@{at}/crawl2': the path is a database number, as in"
        " redis://host:6379/0"
    )
    with password_required(redis_server):
        assert refusal(f"redis://{at}/0") == (
            f"Redis at redis://{at}/0 (REDIS_URL) refused this worker (it asks for a password,"
            " and REDIS_URL gives none); the crawl does not start"
        )
    admin = redis_server.client()
    admin.execute_command("ACL", "SETUSER", "noscripts", "on", ">pw", "~*", "+@all", "-@scripting")
    try:
        assert refusal(f"redis://noscripts:pw@{at}/0") == (
            f"Redis at redis://noscripts:***@{at}/0 (REDIS_URL) refused this worker (this user"
            " has no permissions to run the 'evalsha' command); the crawl does not start"
        )
    finally:
        admin.execute_command("ACL", "DELUSER", "noscripts")


def test_a_url_or_parameters_that_do_not_parse_are_said_in_one_line():
    """Before, a host cut short gave a traceback, and bad ``REDIS_PARAMS`` were told as
    ``REDIS_URL``'s fault."""
    assert refusal("redis://[::1/0") == "REDIS_URL='redis://[::1/0': Invalid IPv6 URL"
    assert refusal("redis://127.0.0.1:1/0", REDIS_PARAMS="nope") == (
        "REDIS_PARAMS='nope': expected a JSON object"
    )
    # Before, each of these was a traceback, the last two only at the first command.
    for given in ("[1, 2]", "5"):
        assert refusal("redis://127.0.0.1:1/0", REDIS_PARAMS=given) == (
            f"REDIS_PARAMS={given!r}: expected a JSON object"
        )
    negative = '{"socket_timeout": -1}'
    assert refusal("redis://127.0.0.1:1/0", REDIS_PARAMS=negative) == (
        f"REDIS_PARAMS={negative!r}: socket_timeout is seconds, more than 0"
    )
    unknown = '{"bogus": 1}'
    assert refusal("redis://127.0.0.1:1/0", REDIS_PARAMS=unknown) == (
        f"REDIS_PARAMS={unknown!r}: got an unexpected keyword argument 'bogus'"
    )


def test_a_dupefilter_class_that_does_not_load_is_said_in_one_line():
    """Before, ``ModuleNotFoundError`` then ``RuntimeError: Engine slot not assigned``, exit
    status 1 (review of the README)."""
    assert refusal("redis://127.0.0.1:1/0", REDIS_DUPEFILTER_CLASS="no.such.Class") == (
        "REDIS_DUPEFILTER_CLASS='no.such.Class': cannot be loaded (No module named 'no')"
    )
    assert refusal("redis://127.0.0.1:1/0", REDIS_DUPEFILTER_CLASS="os.sep") == (
        "REDIS_DUPEFILTER_CLASS='os.sep': cannot be loaded (not a class)"
    )


def wait_for(condition, what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def snapshot(client: redis.Redis) -> str:
    """Start a ``BGSAVE`` and wait for it: ``ok`` or ``err``."""
    client.bgsave()
    wait_for(lambda: not client.info("persistence")["rdb_bgsave_in_progress"], "the snapshot")
    return client.info("persistence")["rdb_last_bgsave_status"]


@contextmanager
def failing_snapshots(server: RedisServer) -> Iterator[None]:
    """``MISCONF``: Redis takes no write while its last snapshot failed, as on a full disk
    (``stop-writes-on-bgsave-error yes``, the default). Here a folder is in the way of the
    snapshot's file; as root, a read-only folder would not stop it, and Redis 7 refuses
    ``CONFIG SET dir``. Snapshots are turned on for the while (tests/redis_server.py)."""
    client = server.client()
    in_the_way = server.directory / client.config_get("dbfilename")["dbfilename"]
    (in_the_way / "folder").mkdir(parents=True)
    client.config_set("save", "3600 1")
    try:
        assert snapshot(client) == "err"
        yield
    finally:
        shutil.rmtree(in_the_way)
        assert snapshot(client) == "ok"
        client.config_set("save", "")
        in_the_way.unlink()


@contextmanager
def missing_replicas(server: RedisServer) -> Iterator[None]:
    """``NOREPLICAS``: fewer replicas than ``min-replicas-to-write`` are connected."""
    client = server.client()
    client.config_set("min-replicas-to-write", 1)
    try:
        yield
    finally:
        client.config_set("min-replicas-to-write", 0)


@contextmanager
def busy_script(server: RedisServer, seconds: float = 3) -> Iterator[None]:
    """``BUSY``: another client's script runs longer than ``busy-reply-threshold``; Redis
    answers nothing else until it ends."""
    client = server.client()
    threshold = client.config_get("busy-reply-threshold")["busy-reply-threshold"]
    client.config_set("busy-reply-threshold", 100)
    spin = """
    local start = redis.call('TIME')[1]
    while redis.call('TIME')[1] - start < tonumber(ARGV[1]) do end
    """
    running = threading.Thread(target=lambda: server.client().eval(spin, 0, seconds))
    running.start()

    def refused() -> bool:
        try:
            client.exists("probe")
        except redis.ResponseError:
            return True
        return False

    try:
        wait_for(refused, "Redis to be busy")
        yield
    finally:
        running.join()
        client.config_set("busy-reply-threshold", threshold)


REFUSALS = {
    "MISCONF": (failing_snapshots, "failed to save its data to disk", "free disk space"),
    "NOREPLICAS": (missing_replicas, "min-replicas-to-write", "reconnect the replicas"),
    "BUSY": (busy_script, "busy-reply-threshold", "SCRIPT KILL"),
}


@pytest.mark.parametrize("code", sorted(REFUSALS))
def test_redis_refusing_commands_for_a_while_is_waited_out(redis_server, code, caplog):
    """Before, these came as plain ``ResponseError``: the worker's heartbeat, its learning
    and its near-duplicate check stopped for the rest of the crawl at the first one."""
    refusal, cause, remedy = REFUSALS[code]
    server, prefix = new_crawl(redis_server)
    patterns = SharedPatternStats(server, prefix)
    sync = LearningSync(server, [patterns])
    simhashes = SharedSimHashIndex(server, prefix, 3)
    record = CrawlRecord(server, prefix, "refused")
    with caplog.at_level(logging.WARNING), refusal(redis_server):
        with pytest.raises(UNAVAILABLE):  # the scheduler waits these out
            record.add_domains(["example.com"])
        patterns.record("/a/<n>", accepted=True)
        sync.sync()
        sync.sync()
        assert simhashes.add_if_new(0xABCDEF, page_url())
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 2, warnings  # one per component, not one per call
    for warning in warnings:
        assert f"Redis is unavailable ({code}: " in warning
        assert cause in warning
        assert remedy in warning
    sync.sync()
    assert server.hget(f"{prefix}:fetched", "/a/<n>") == b"1", "sent once it is back"
    assert simhashes.add_if_new(0x123456, page_url())
    other = SharedSimHashIndex(server, prefix, 3)
    assert not other.add_if_new(0x123456 ^ 1, page_url()), "stored in the crawl's once it is back"
    record.add_domains(["example.com"])
    assert record.domains() == ["example.com"]


def test_redis_url_from_the_environment_keeps_the_password_off_the_command_line(redis_server):
    """Under scrapyd a ``-d setting=REDIS_URL=…`` went into scrapyd's log and ``ps`` whole,
    password and all; the environment variable is how ``MYSQL_URL`` avoids it."""
    url = redis_server.url.replace("redis://", "redis://:s3cret@")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOPICSPIDER_REDIS_URL": url}
    shown = subprocess.run(
        [sys.executable, "-m", "scrapy", "settings", "--get", "REDIS_URL"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.strip() == url
