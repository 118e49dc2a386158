"""The adaptive threshold across the workers of a shared crawl, on a real redis-server."""

from __future__ import annotations

from redis_server import RedisServer, new_crawl

from topicspider.redis.learning import LearningSync
from topicspider.redis.thresholds import SharedAdaptiveThreshold
from topicspider.thresholds import AdaptiveThreshold


def workers(
    redis_server: RedisServer, top: int = 10
) -> list[tuple[SharedAdaptiveThreshold, LearningSync]]:
    """The thresholds of two workers of one new crawl, each with its sync: at most 0.5,
    at least 0.05, 0.7 of the median of the ``top`` best."""
    server, prefix = new_crawl(redis_server)
    thresholds = [SharedAdaptiveThreshold(server, prefix, 0.5, 0.05, 0.7, top) for _ in range(2)]
    return [(worker, LearningSync(server, [worker])) for worker in thresholds]


def test_a_worker_that_found_few_good_pages_is_held_to_the_crawls_bar(redis_server):
    (first, first_sync), (second, second_sync) = workers(redis_server)
    for _ in range(10):
        first.observe(0.4)
    second.observe(0.1)
    assert first.value == 0.7 * 0.4
    assert second.value == 0.05, "alone, its few pages set the lowest bar"
    first_sync.sync()
    second_sync.sync()
    assert second.value == first.value == 0.7 * 0.4
    first_sync.sync()
    assert first.value == 0.7 * 0.4, "the second worker's page is not among the best ten"


def test_the_bar_is_that_of_the_best_pages_of_all_workers(redis_server):
    (first, first_sync), (second, second_sync) = workers(redis_server)
    alone = AdaptiveThreshold(0.5, 0.05, 0.7, 10)
    pages = [0.1, 0.3, 0.2, 0.3, 0.6, 0.25, 0.3, 0.15, 0.35, 0.3, 0.3, 0.05, 0.45]
    for i, relevance in enumerate(pages):
        (first if i % 2 else second).observe(relevance)
        alone.observe(relevance)
    for sync in first_sync, second_sync, first_sync:
        sync.sync()
    assert first.value == second.value == alone.value
    best = redis_server.client().zrange(first.key, 0, -1, withscores=True)
    assert sorted(score for _, score in best) == sorted(pages)[-10:], "equal ones all count"


def test_the_bar_never_goes_down(redis_server):
    (first, first_sync), _ = workers(redis_server)
    for _ in range(10):
        first.observe(0.4)
    first_sync.sync()
    redis_server.client().delete(first.key)  # say, a crawl deleted and started again
    first.observe(0.1)
    first_sync.sync()
    assert first.value == 0.7 * 0.4


def test_workers_with_another_top_keep_their_best_apart(redis_server):
    server, prefix = new_crawl(redis_server)
    ten = SharedAdaptiveThreshold(server, prefix, 0.5, 0.05, 0.7, 10)
    three = SharedAdaptiveThreshold(server, prefix, 0.5, 0.05, 0.7, 3)
    for relevance in (0.1, 0.2, 0.3, 0.4):
        ten.observe(relevance)
        three.observe(relevance)
    LearningSync(server, [ten, three]).sync()
    assert ten.key != three.key
    client = redis_server.client()
    assert (client.zcard(ten.key), client.zcard(three.key)) == (4, 3)
    assert three.value == 0.7 * 0.3
