"""Near-duplicates across the workers of a shared crawl, on a real redis-server."""

from __future__ import annotations

import logging
import random

from redis_server import RedisServer, new_crawl, page_url

from topicspider.redis.simhashes import SharedSimHashIndex
from topicspider.simhash import SimHashIndex


def workers(redis_server: RedisServer, distance: int = 3, n: int = 2) -> list[SharedSimHashIndex]:
    """The SimHash indexes of ``n`` workers of one new crawl."""
    server, prefix = new_crawl(redis_server)
    return [SharedSimHashIndex.like(SimHashIndex(distance), server, prefix) for _ in range(n)]


def flip(fingerprint: int, *bits: int) -> int:
    for bit in bits:
        fingerprint ^= 1 << bit
    return fingerprint


def test_a_page_near_one_another_worker_stored_is_not_stored_again(redis_server):
    first, second = workers(redis_server)
    page = 0x9F3A_5C21_7E04_B6D8
    assert first.add_if_new(page, page_url())
    # 3 bits apart, in three of the four 16-bit blocks: only the fourth block is shared.
    assert not second.add_if_new(flip(page, 0, 20, 40), page_url())
    assert not second.add_if_new(page, page_url())
    assert second.add_if_new(flip(page, 0, 20, 40, 60), page_url())  # 4 bits: another page
    assert not first.add_if_new(
        flip(page, 0, 20, 40, 60, 61), page_url()
    )  # near what the second stored


def test_the_distance_is_the_settings(redis_server):
    (exact,) = workers(redis_server, distance=0, n=1)
    page = 0x0123_4567_89AB_CDEF
    assert exact.add_if_new(page, page_url())
    assert exact.add_if_new(flip(page, 63), page_url())
    assert not exact.add_if_new(page, page_url())


def test_many_pages_each_found_by_its_near_duplicate_and_nothing_else(redis_server):
    first, second = workers(redis_server)
    rng = random.Random(7)
    pages = [rng.getrandbits(64) for _ in range(2000)]
    assert all(first.add_if_new(page, page_url()) for page in pages)
    assert not any(
        second.add_if_new(flip(page, *rng.sample(range(64), 3)), page_url()) for page in pages
    )
    # Random 64-bit SimHashes are ~32 bits apart: none is near another by chance.
    assert all(second.add_if_new(rng.getrandbits(64), page_url()) for _ in range(2000))


def test_while_redis_is_away_a_worker_compares_with_its_own_pages(redis_server, caplog):
    first, second = workers(redis_server)
    stored, later = 0xAAAA_0000_FFFF_1234, 0x5555_FFFF_0000_4321
    assert first.add_if_new(stored, page_url())
    redis_server.stop()
    try:
        with caplog.at_level(logging.WARNING):
            assert not first.add_if_new(flip(stored, 5), page_url())  # its own: known without Redis
            assert second.add_if_new(flip(stored, 5), page_url())  # the other worker's: not known
            assert second.add_if_new(later, page_url())
            assert not second.add_if_new(flip(later, 1), page_url())
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1, warnings
        assert "compared with those this worker stored alone" in warnings[0]
    finally:
        redis_server.start()
    assert not first.add_if_new(flip(stored, 9), page_url()), "Redis kept what was added before"
    assert first.add_if_new(flip(later, 2), page_url()), (
        "what was stored while it was away is the worker's"
    )


def test_a_crawl_gone_from_redis_is_not_made_again(redis_server):
    """Redis restarted without its data: the worker stores pages as new, and its scheduler
    stops it; before, its adds made ``P:simhash:<k>`` again, for a crawl nobody runs."""
    (worker,) = workers(redis_server, n=1)
    client = redis_server.client()
    client.flushall()
    page = 0x1234_5678_9ABC_DEF0
    assert worker.add_if_new(page, page_url())
    assert not worker.add_if_new(flip(page, 3), page_url()), "compared with the worker's own pages"
    assert client.keys("*") == []


def test_a_page_fetched_again_is_no_near_duplicate_of_itself(redis_server):
    """A worker killed between adding a page's SimHash and storing the page: another got
    its request back and fetched it again. Before, the page was taken for a near-duplicate
    of itself, and stored by no one."""
    killed, other, third = workers(redis_server, n=3)
    page, url = 0x9F3A_5C21_7E04_B6D8, "http://127.0.0.1/p/35.html"
    assert killed.add_if_new(page, url)
    assert other.add_if_new(flip(page, 7), url), "fetched again, a date on it changed"
    assert not third.add_if_new(flip(page, 9), page_url()), "another page with that text is one"
