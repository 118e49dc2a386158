"""The Redis client and the key prefix of a crawl, from settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry
from scrapy_redis.connection import get_redis

if TYPE_CHECKING:
    from redis import Redis
    from scrapy.settings import BaseSettings

__all__ = ["UNAVAILABLE", "address", "crawl_id", "get_client", "key_prefix"]

#: Errors meaning Redis cannot answer now (down, restarting, loading its data, unreachable):
#: workers wait and retry. Any other Redis error is a bug, and raised.
UNAVAILABLE = (RedisConnectionError, RedisTimeoutError)


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


def crawl_id(settings: BaseSettings, spider_name: str) -> str:
    """``TOPIC_CRAWL_ID``, or the spider's name: workers with the same id share one crawl."""
    return settings.get("TOPIC_CRAWL_ID") or spider_name


def key_prefix(settings: BaseSettings, spider_name: str) -> str:
    """The prefix of every Redis key of the crawl: ``topicspider:<crawl id>``."""
    return f"topicspider:{crawl_id(settings, spider_name)}"
