"""Query parameters that change nothing, learned once for every worker of a shared crawl, on a
real redis-server."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from redis_server import RedisServer, new_crawl

from topicspider.redis.learning import LearningSync
from topicspider.redis.parameters import SharedDroppedParameters

if TYPE_CHECKING:
    from redis import Redis

STORY = "http://a.cn/s{n}.html"


def worker(server: Redis, prefix: str) -> tuple[SharedDroppedParameters, LearningSync]:
    """A worker's dropped parameters, with its sync."""
    learned = SharedDroppedParameters(server, prefix)
    return learned, LearningSync(server, [learned])


def workers(redis_server: RedisServer) -> list[tuple[SharedDroppedParameters, LearningSync]]:
    """Two workers of one new crawl."""
    server, prefix = new_crawl(redis_server)
    return [worker(server, prefix) for _ in range(2)]


def show_from_index_changes_nothing(worker: SharedDroppedParameters) -> None:
    """Two stories that name their address without the headline list's ``?from=index``."""
    for n in (1, 2):
        worker.learn(f"{STORY.format(n=n)}?from=index", STORY.format(n=n))


def test_a_parameter_one_worker_learned_is_dropped_by_every_worker(redis_server):
    (first, first_sync), (second, second_sync) = workers(redis_server)
    headline = f"{STORY.format(n=9)}?from=index"
    show_from_index_changes_nothing(first)
    assert first.address(headline) == STORY.format(n=9)
    assert second.address(headline) == headline, "not before the first worker's sync"
    first_sync.sync()
    second_sync.sync()
    assert second.address(headline) == STORY.format(n=9)
    assert second.address("http://b.cn/s9.html?from=index") == "http://b.cn/s9.html?from=index"
    assert redis_server.client().smembers(first.keys[0]) == {b"a.cn\tfrom=index"}


def test_a_worker_that_joins_later_takes_what_the_crawl_learned(redis_server):
    server, prefix = new_crawl(redis_server)
    first, first_sync = worker(server, prefix)
    show_from_index_changes_nothing(first)
    first_sync.sync()
    late, late_sync = worker(server, prefix)
    late_sync.sync()
    assert late.address(f"{STORY.format(n=5)}?from=index&page=2") == f"{STORY.format(n=5)}?page=2"


def test_while_redis_is_away_a_worker_learns_alone_and_sends_it_when_back(redis_server, caplog):
    (first, first_sync), (second, second_sync) = workers(redis_server)
    redis_server.stop()
    try:
        with caplog.at_level(logging.WARNING):
            show_from_index_changes_nothing(first)
            first_sync.sync()
        assert first.address(f"{STORY.format(n=9)}?from=index") == STORY.format(n=9)
        assert "the query parameters that change nothing" in caplog.text
    finally:
        redis_server.start()
    first_sync.sync()
    second_sync.sync()
    assert second.address(f"{STORY.format(n=9)}?from=index") == STORY.format(n=9)
