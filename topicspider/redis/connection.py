"""The Redis client and the key prefix of a crawl, from settings."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from redis._parsers import BaseParser
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import (
    MasterDownError,
    OutOfMemoryError,
    ReadOnlyError,
    ResponseError,
    TryAgainError,
)
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry
from scrapy_redis.connection import get_redis

from topicspider.exceptions import ConfigError

if TYPE_CHECKING:
    from redis import Redis
    from scrapy.settings import BaseSettings

__all__ = [
    "CRAWL_ID",
    "UNAVAILABLE",
    "BusyScriptError",
    "NoReplicasError",
    "Outage",
    "PersistenceError",
    "address",
    "crawl_id",
    "explain",
    "get_client",
    "key_prefix",
    "masked_url",
    "names_a_database",
]

logger = logging.getLogger(__name__)

MASK = "***"
#: A crawl id: nothing a key pattern reads as a glob (``* ? [ ]``) or that ends a crawl's
#: prefix (``:``), so that ``topicspider:<id>:*`` matches that crawl's keys and no other's.
CRAWL_ID = re.compile(r"[A-Za-z0-9._-]+")


class PersistenceError(ResponseError):
    """``MISCONF``: Redis failed to save its data to disk and takes no writes until it can."""

    advice = (
        "MISCONF: it failed to save its data to disk, a full disk or a failing snapshot or"
        " append-only file, and takes no writes; free disk space or fix what the Redis log"
        " reports, and after a failed snapshot run BGSAVE"
    )


class NoReplicasError(ResponseError):
    """``NOREPLICAS``: fewer replicas than ``min-replicas-to-write`` are connected."""

    advice = (
        "NOREPLICAS: fewer replicas than its min-replicas-to-write are connected, and it takes"
        " no writes; reconnect the replicas or lower min-replicas-to-write"
    )


class BusyScriptError(ResponseError):
    """``BUSY``: a script has run longer than ``busy-reply-threshold``; Redis answers
    nothing else until it ends."""

    advice = (
        "BUSY: a script has run longer than busy-reply-threshold and Redis answers nothing"
        " else until it ends; wait, or end it with SCRIPT KILL"
    )


# redis-py raises these codes as a plain ResponseError, as it does a bug. Its table of error
# codes is the only hook that every reply parser and pipeline goes through (a parser of our
# own conflicts with redis-py's choice of parser by protocol); the table is shared by every
# client in the process, and to others these are still ResponseErrors.
BaseParser.EXCEPTION_CLASSES.update(
    MISCONF=PersistenceError, NOREPLICAS=NoReplicasError, BUSY=BusyScriptError
)

#: Errors meaning Redis cannot answer now (down, restarting, loading its data, unreachable,
#: running a long script) or cannot take writes now (``maxmemory`` reached, its disk full,
#: too few replicas, a replica after a failover, its master down): workers wait and retry.
#: Any other Redis error is a bug, and raised. redis-py's ``AuthenticationError`` is a
#: ``ConnectionError`` too: a refused password stops a worker before its crawl
#: (``crawl.check_settings``); later, as when the password is changed mid-crawl, the worker
#: waits for it to be accepted again.
UNAVAILABLE = (
    RedisConnectionError,
    RedisTimeoutError,
    OutOfMemoryError,
    PersistenceError,
    NoReplicasError,
    BusyScriptError,
    ReadOnlyError,
    MasterDownError,
    TryAgainError,
)


def explain(error: Exception) -> str:
    """Why Redis is unavailable, for the warning: what the operator must do when Redis's own
    message only points to its log."""
    return getattr(error, "advice", None) or str(error)


class Outage:
    """What a component does without Redis, said once per outage, not on every call."""

    def __init__(self, meanwhile: str) -> None:
        self.meanwhile = meanwhile
        self.away = False

    def started(self, error: Exception) -> None:
        if not self.away:
            logger.warning("Redis is unavailable (%s): %s", explain(error), self.meanwhile)
        self.away = True

    def ended(self) -> None:
        self.away = False


def get_client(settings: BaseSettings) -> Redis:
    """A client for ``REDIS_URL`` with the ``REDIS_PARAMS`` keyword arguments.

    Unlike scrapy-redis's ``get_redis_from_settings`` (whose defaults wait 30 s and retry on
    timeout), nothing is retried inside redis-py: a retried script might run twice, and the
    scheduler already retries the whole operation without blocking the crawl. No connection
    is made here; the first command connects.
    """
    params = {"retry": Retry(NoBackoff(), 0), **settings.getdict("REDIS_PARAMS")}
    return get_redis(url=settings.get("REDIS_URL"), **params)


def names_a_database(url: str) -> bool:
    """Whether the path of a ``redis://`` URL is a database number, or empty (database 0).
    redis-py takes any other path for database 0, so that crawls meant for two databases
    would share one.

    >>> names_a_database("redis://:p/w@redis-host:6379/3"), names_a_database("redis://h")
    (True, True)
    >>> names_a_database("redis://redis-host/crawl2"), names_a_database("redis://h/1/2")
    (False, False)
    >>> names_a_database("redis://h/3/"), names_a_database("unix:///run/redis.sock?db=2")
    (True, True)
    """
    scheme, _, rest = url.partition("://")
    if scheme not in ("redis", "rediss"):
        return True
    path = urlsplit("//" + rest.rpartition("@")[2]).path
    return re.fullmatch(r"/?(\d+/?)?", path) is not None


def address(server: Redis) -> str:
    """``host:port/db`` of a client, for log lines (a URL may hold a password)."""
    kwargs = server.connection_pool.connection_kwargs
    where = kwargs.get("path") or f"{kwargs.get('host')}:{kwargs.get('port')}"
    return f"{where}/{kwargs.get('db', 0)}"


def masked_url(url: str) -> str:
    """``REDIS_URL`` for messages: the password replaced by ``***``, the user name kept.

    Everything up to the last ``@`` counts as credentials, so a password with unquoted
    ``/``, ``#`` or ``@`` does not show either.

    >>> masked_url("redis://crawler:s%40cret@127.0.0.1:6379/0")
    'redis://crawler:***@127.0.0.1:6379/0'
    >>> masked_url("redis://:se/cr@t@redis-host/1")
    'redis://:***@redis-host/1'
    >>> masked_url("redis://secret@redis-host/1"), masked_url("redis://redis-host/1")
    ('redis://***@redis-host/1', 'redis://redis-host/1')
    >>> masked_url("redis://:a://b@redis-host"), masked_url("crawler:secret@redis-host")
    ('redis://:***@redis-host', 'crawler:***@redis-host')
    """
    head, at, host = url.rpartition("@")
    if not at:
        return url
    scheme, sep, credentials = head.partition("://")
    if not sep:
        scheme, credentials = "", head
    user, colon, _ = credentials.partition(":")
    shown = f"{user}:{MASK}" if colon and not set(user) & set("/?#") else MASK
    return f"{scheme}{sep}{shown}@{host}"


def crawl_id(settings: BaseSettings, spider_name: str) -> str:
    """``TOPIC_CRAWL_ID``, or the spider's name: workers with the same id share one crawl.
    Raise ``ConfigError`` for an id that is not ``CRAWL_ID``: deleting crawl ``news`` by
    key pattern would also delete a crawl ``news:cn``."""
    name = settings.get("TOPIC_CRAWL_ID") or spider_name
    if not CRAWL_ID.fullmatch(name):
        raise ConfigError(
            f"TOPIC_CRAWL_ID={name!r}: expected letters, digits, '.', '_' and '-' only (it names"
            " the crawl's Redis keys, topicspider:<id>:*)"
        )
    return name


def key_prefix(settings: BaseSettings, spider_name: str) -> str:
    """The prefix of every Redis key of the crawl: ``topicspider:<crawl id>``."""
    return f"topicspider:{crawl_id(settings, spider_name)}"
