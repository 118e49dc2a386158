"""URL-template yields across the workers of a shared crawl, on a real redis-server."""

from __future__ import annotations

import logging

from redis_server import RedisServer, new_crawl

from topicspider.redis.learning import LearningSync
from topicspider.redis.patterns import SharedPatternStats
from topicspider.urlpatterns import template

JUNK = template("http://a.cn/junk/1.html")
NEWS = template("http://a.cn/news/1.html")


def workers(redis_server: RedisServer) -> list[tuple[SharedPatternStats, LearningSync]]:
    """The template counts of two workers of one new crawl, each with its sync."""
    server, prefix = new_crawl(redis_server)
    stats = [SharedPatternStats(server, prefix) for _ in range(2)]
    return [(worker, LearningSync(server, [worker])) for worker in stats]


def test_a_template_one_worker_found_barren_is_barren_for_the_other(redis_server):
    (first, first_sync), (second, second_sync) = workers(redis_server)
    for _ in range(30):
        first.record(JUNK, accepted=False)
    assert first.is_barren(JUNK)
    assert not second.is_barren(JUNK), "not before the first worker's counts are sent"
    first_sync.sync()
    second_sync.sync()  # the second worker looked JUNK up: it takes back the crawl's count
    assert second.is_barren(JUNK)


def test_yields_are_learned_from_every_workers_pages(redis_server):
    (first, first_sync), (second, second_sync) = workers(redis_server)
    for accepted in (True, True, False):
        first.record(NEWS, accepted)
    second.record(NEWS, accepted=True)
    first_sync.sync()
    second_sync.sync()
    first.yield_of(NEWS)
    first_sync.sync()
    both = first.yield_of(NEWS)
    assert both == second.yield_of(NEWS)
    assert both == (3 + first.prior * first.strength) / (4 + first.strength)
    state = redis_server.client()
    assert state.hget(first.keys[0], NEWS) == b"4"
    assert state.hget(first.keys[1], NEWS) == b"3"


def test_a_worker_that_counted_and_looked_up_nothing_makes_no_round_trip(redis_server, caplog):
    (_, sync), _ = workers(redis_server)
    redis_server.stop()
    try:
        with caplog.at_level(logging.WARNING):
            sync.sync()
        assert not caplog.records, "Redis was not asked, so its absence went unnoticed"
    finally:
        redis_server.start()
