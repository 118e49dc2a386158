"""Syncing what workers learn with the crawl, while Redis is there and while it is away."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from redis_server import LossyLink, new_crawl
from scrapy.settings import Settings

from topicspider.redis.connection import get_client
from topicspider.redis.learning import LearningSync
from topicspider.redis.mix import SharedBestFirst
from topicspider.redis.patterns import SharedPatternStats
from topicspider.redis.thresholds import SharedAdaptiveThreshold
from topicspider.urlpatterns import template

JUNK = template("http://a.cn/junk/1.html")


class Worker:
    """A worker's three learners and their sync."""

    def __init__(self, server, prefix: str) -> None:
        self.patterns = SharedPatternStats(server, prefix)
        self.threshold = SharedAdaptiveThreshold(server, prefix, 0.5, 0.05, 0.7, 10)
        self.mix = SharedBestFirst(server, prefix, {"anchor": 0.6, "parent": 0.4}, warmup=5)
        self.sync = LearningSync(server, [self.patterns, self.threshold, self.mix])

    def judge(self, relevance: float, features: tuple[float, ...]) -> None:
        self.patterns.record(JUNK, accepted=False)
        self.threshold.observe(relevance)
        self.mix.learn(features, relevance)


def test_what_is_learned_while_redis_is_away_is_sent_once_when_it_is_back(redis_server, caplog):
    server, prefix = new_crawl(redis_server)
    first, second = Worker(server, prefix), Worker(server, prefix)
    redis_server.stop()
    try:
        with caplog.at_level(logging.WARNING):
            for i in range(30):
                first.judge(0.2 + 0.01 * i, (0.1 * (i % 5), 0.01 * i, 0.0, 0.0))
                first.sync.sync()
        warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1, warnings
        assert (
            "URL-template yields, the threshold, the link-score mix are learned from this "
            "worker's pages alone until it is back"
        ) in warnings[0]
        assert first.patterns.is_barren(JUNK), "its own view goes on"
        bar = first.threshold.value
        assert bar > 0.3
        learned = first.mix.weights.copy()
        assert not np.allclose(learned, first.mix.prior)
    finally:
        redis_server.start()
    first.sync.sync()
    second.patterns.is_barren(JUNK)
    second.sync.sync()
    assert second.patterns.is_barren(JUNK)
    assert second.threshold.value == bar
    assert np.allclose(second.mix.weights, learned)
    first.sync.sync()
    client = redis_server.client()
    assert client.hget(first.patterns.keys[0], JUNK) == b"30", "sent once"
    assert float(client.hget(first.mix.keys[0], "pages")) == 30
    assert np.allclose(first.mix.weights, learned)


def test_closing_sends_what_was_learned_since_the_last_sync(redis_server):
    server, prefix = new_crawl(redis_server)
    first, second = Worker(server, prefix), Worker(server, prefix)
    first.sync.start()
    first.judge(0.3, (0.2, 0.3, 0.0, 0.0))
    first.sync.close()
    second.sync.sync()
    assert max(second.threshold.best) == 0.3
    assert float(redis_server.client().hget(second.mix.keys[0], "pages")) == 1


def test_a_crawl_gone_from_redis_is_not_made_again_by_what_its_workers_learn(redis_server):
    """Redis restarted without its data: a worker's next syncs, before its scheduler notices,
    used to make the crawl's thresholds, mix and templates again, for a crawl nobody runs."""
    server, prefix = new_crawl(redis_server)
    worker = Worker(server, prefix)
    worker.judge(0.4, (0.2, 0.3, 0.0, 0.0))
    worker.sync.sync()
    client = redis_server.client()
    assert client.keys(f"{prefix}:*")
    client.flushall()
    worker.judge(0.5, (0.3, 0.4, 0.0, 0.0))
    worker.sync.sync()
    assert client.keys(f"{prefix}:*") == []
    assert max(worker.threshold.best) == 0.5, "it goes on learning from its own pages"


def test_a_sync_whose_answer_was_lost_is_counted_once(redis_server, caplog):
    """Redis ran the sync but its answer was lost on the way: the worker took it for an
    outage and sent it again. Before, those pages were counted twice in the template
    yields, the link-score mix and the best pages."""
    _, prefix = new_crawl(redis_server)
    link = LossyLink(redis_server)
    settings = Settings({"REDIS_URL": link.url, "REDIS_PARAMS": {"socket_timeout": 0.3}})
    worker = Worker(get_client(settings), prefix)
    admin = redis_server.client()
    for relevance in (0.3, 0.4, 0.5):
        worker.judge(relevance, (relevance, 0.2, 0.0, 0.0))
    link.lose_next.set()
    with caplog.at_level(logging.WARNING):
        worker.sync.sync()
    assert "learned from this worker's pages alone until it is back" in caplog.text
    assert admin.hget(worker.patterns.keys[0], JUNK) == b"3", "Redis ran it"
    for relevance in (0.9, 0.2):  # one learned while the answer was lost, one after
        worker.judge(relevance, (relevance, 0.2, 0.0, 0.0))
        worker.sync.sync()
    link.close()

    assert admin.hget(worker.patterns.keys[0], JUNK) == b"5"
    assert float(admin.hget(worker.mix.keys[0], "pages")) == 5
    best = [score for _, score in admin.zrange(worker.threshold.key, 0, -1, withscores=True)]
    assert best == pytest.approx([0.2, 0.3, 0.4, 0.5, 0.9])
    assert worker.mix._correlation.n == 5, "its own view holds each page once"
