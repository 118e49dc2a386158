"""The link-score mix across the workers of a shared crawl, on a real redis-server."""

from __future__ import annotations

import numpy as np
from redis_server import new_crawl

from topicspider.redis.learning import LearningSync
from topicspider.redis.mix import SharedBestFirst
from topicspider.relevance import BestFirst

PRIOR = {"anchor": 0.6, "parent": 0.4, "pattern": 0.2}


def pages(n: int, seed: int) -> list[tuple[tuple[float, ...], float]]:
    """(link-score terms, relevance of the page the link led to): the relevance follows the
    parent page's, not the anchor's."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        anchor, parent, pattern = rng.random(3)
        relevance = 0.5 * parent + 0.05 * rng.random()
        out.append(((float(anchor), float(parent), float(pattern), 0.0), float(relevance)))
    return out


def test_every_worker_scores_links_with_the_mix_learned_from_all_pages(redis_server):
    server, prefix = new_crawl(redis_server)
    first, second = (SharedBestFirst(server, prefix, PRIOR, warmup=50) for _ in range(2))
    alone = BestFirst(PRIOR, adaptive=True, warmup=50)
    judged = pages(60, seed=1)
    for i, (features, relevance) in enumerate(judged):
        (first if i % 3 else second).learn(features, relevance)
        alone.learn(features, relevance)
    first_only = first.weights.copy()
    for worker in first, second, first:
        LearningSync(server, [worker]).sync()
    assert np.allclose(first.weights, alone.weights)
    assert np.allclose(second.weights, alone.weights)
    assert not np.allclose(first_only, alone.weights), "40 of 60 pages weigh less than 60"
    assert alone.weights[1] > alone.weights[0], "the parent's term gained on the anchor's"
    assert float(redis_server.client().hget(first.keys[0], "pages")) == 60


def test_a_worker_that_judged_nothing_yet_takes_the_crawls_mix(redis_server):
    server, prefix = new_crawl(redis_server)
    first = SharedBestFirst(server, prefix, PRIOR, warmup=10)
    for features, relevance in pages(40, seed=2):
        first.learn(features, relevance)
    LearningSync(server, [first]).sync()
    newcomer = SharedBestFirst(server, prefix, PRIOR, warmup=10)
    assert np.allclose(newcomer.weights, newcomer.prior)
    LearningSync(server, [newcomer]).sync()
    assert np.allclose(newcomer.weights, first.weights)
    assert newcomer.weights_by_name() == first.weights_by_name()
