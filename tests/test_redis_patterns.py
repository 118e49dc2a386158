"""URL-template yields across the workers of a shared crawl, on a real redis-server."""

from __future__ import annotations

import logging
from itertools import count

from redis_server import RedisServer
from scrapy.settings import Settings

from topicspider.redis.patterns import SharedPatternStats
from topicspider.urlpatterns import template

_crawl_ids = count()

JUNK = template("http://a.cn/junk/1.html")
NEWS = template("http://a.cn/news/1.html")


def workers(redis_server: RedisServer, n: int = 2) -> list[SharedPatternStats]:
    """The template counts of ``n`` workers of one new crawl."""
    settings = Settings({"REDIS_URL": redis_server.url, "TOPIC_CRAWL_ID": f"tp{next(_crawl_ids)}"})
    return [SharedPatternStats.from_settings(settings, "topic") for _ in range(n)]


def test_a_template_one_worker_found_barren_is_barren_for_the_other(redis_server):
    first, second = workers(redis_server)
    for _ in range(30):
        first.record(JUNK, accepted=False)
    assert first.is_barren(JUNK)
    assert not second.is_barren(JUNK), "not before the first worker's counts are sent"
    first.sync()
    second.sync()  # the second worker looked JUNK up: it takes back the crawl's count
    assert second.is_barren(JUNK)


def test_yields_are_learned_from_every_workers_pages(redis_server):
    first, second = workers(redis_server)
    for accepted in (True, True, False):
        first.record(NEWS, accepted)
    second.record(NEWS, accepted=True)
    first.sync()
    second.sync()
    first.yield_of(NEWS)
    first.sync()
    both = first.yield_of(NEWS)
    assert both == second.yield_of(NEWS)
    assert both == (3 + first.prior * first.strength) / (4 + first.strength)
    state = redis_server.client()
    prefix = first.keys[0].rsplit(":", 1)[0]
    assert state.hget(f"{prefix}:fetched", NEWS) == b"4"
    assert state.hget(f"{prefix}:on_topic", NEWS) == b"3"


def test_counts_made_while_redis_is_away_are_sent_when_it_is_back(redis_server, caplog):
    first, second = workers(redis_server)
    redis_server.stop()
    try:
        with caplog.at_level(logging.WARNING):
            for _ in range(30):
                first.record(JUNK, accepted=False)
                first.sync()
            assert first.is_barren(JUNK), "its own view goes on"
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1, warnings
        assert "judged by this worker's pages alone" in warnings[0]
    finally:
        redis_server.start()
    first.sync()
    second.is_barren(JUNK)
    second.sync()
    assert second.is_barren(JUNK)
    first.sync()
    assert redis_server.client().hget(first.keys[0], JUNK) == b"30", "sent once"
