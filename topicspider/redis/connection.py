"""The Redis client and the key prefix of a crawl, from settings."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import (
    MasterDownError,
    OutOfMemoryError,
    ReadOnlyError,
    TryAgainError,
)
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry
from scrapy_redis.connection import get_redis

if TYPE_CHECKING:
    from redis import Redis
    from scrapy.settings import BaseSettings

__all__ = [
    "UNAVAILABLE",
    "Outage",
    "address",
    "crawl_id",
    "get_client",
    "key_prefix",
    "masked_url",
]

logger = logging.getLogger(__name__)

MASK = "***"

#: Errors meaning Redis cannot answer now (down, restarting, loading its data, unreachable)
#: or cannot take writes now (``maxmemory`` reached, a replica after a failover, its master
#: down): workers wait and retry. Any other Redis error is a bug, and raised. redis-py's
#: ``AuthenticationError`` is a ``ConnectionError`` too: a refused password stops a worker
#: before its crawl (``crawl.check_settings``); later, as when the password is changed
#: mid-crawl, the worker waits for it to be accepted again.
UNAVAILABLE = (
    RedisConnectionError,
    RedisTimeoutError,
    OutOfMemoryError,
    ReadOnlyError,
    MasterDownError,
    TryAgainError,
)


class Outage:
    """What a component does without Redis, said once per outage, not on every call."""

    def __init__(self, meanwhile: str) -> None:
        self.meanwhile = meanwhile
        self.away = False

    def started(self, error: Exception) -> None:
        if not self.away:
            logger.warning("Redis is unavailable (%s): %s", error, self.meanwhile)
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
    """``TOPIC_CRAWL_ID``, or the spider's name: workers with the same id share one crawl."""
    return settings.get("TOPIC_CRAWL_ID") or spider_name


def key_prefix(settings: BaseSettings, spider_name: str) -> str:
    """The prefix of every Redis key of the crawl: ``topicspider:<crawl id>``."""
    return f"topicspider:{crawl_id(settings, spider_name)}"
