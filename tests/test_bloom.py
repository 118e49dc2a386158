"""The Bloom filter: sizing, no false negatives, the false-positive rate it promises,
saving and loading, and Redis-backed bits shared by two filters (a real redis-server).
The shared filter of a crawl in Redis is tested in test_redis_queue.py and test_redis_crawl.py."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest
import redis

from topicspider.bloom import BloomFilter, LocalBits, RedisBits, optimal_size


def items(prefix: str, count: int) -> list[bytes]:
    return [f"{prefix}-{i}".encode() for i in range(count)]


def test_optimal_size_meets_the_memory_target():
    bits, hashes = optimal_size(10_000_000, 0.001)
    assert hashes == 10
    assert bits / 10_000_000 / 8 < 1.81  # bytes per URL; the target is 4
    with pytest.raises(ValueError, match="error rate"):
        optimal_size(10, 1.5)
    with pytest.raises(ValueError, match="capacity"):
        optimal_size(0, 0.01)


def test_no_false_negatives_and_the_promised_false_positive_rate():
    bloom = BloomFilter.local(20_000, 0.01)
    added = items("in", 20_000)
    assert not any(bloom.add(item) for item in added[:10])  # fresh filter: nothing seen
    for item in added[10:]:
        bloom.add(item)
    assert all(item in bloom for item in added)
    assert all(bloom.add(item) for item in added)
    assert bloom.count <= 20_000
    false_positives = sum(item in bloom for item in items("out", 20_000)) / 20_000
    assert 0.004 < false_positives < 0.02
    assert bloom.false_positive_rate() == pytest.approx(0.01, rel=0.2)


def test_a_filter_in_a_file_keeps_bits_size_and_count_without_a_close(tmp_path):
    """A filter opened from a file has every bit and its count in the file as they are
    set: a process killed before it could close leaves them to the next one."""
    path = tmp_path / "requests.bloom"
    bloom = BloomFilter.open(path, 1000, 0.001)
    for item in items("a", 500):
        bloom.add(item)
    reopened = BloomFilter.open(path, 10, 0.5)  # as the next process would, before any close
    assert (reopened.bits.size, reopened.hashes, reopened.count) == (
        bloom.bits.size,
        bloom.hashes,
        bloom.count,
    )
    assert all(item in reopened for item in items("a", 500))
    assert not any(item in reopened for item in items("b", 50))
    bloom.close()
    reopened.close()


def test_a_saved_filter_opens_and_a_broken_file_is_refused(tmp_path):
    bloom = BloomFilter.local(1000, 0.001)
    for item in items("a", 100):
        bloom.add(item)
    path = tmp_path / "requests.bloom"
    bloom.save(path)
    opened = BloomFilter.open(path, 1000, 0.001)
    assert opened.count == 100
    assert all(item in opened for item in items("a", 100))
    opened.close()
    for broken in (b"", b"not a filter" * 10, path.read_bytes()[:-1]):
        path.write_bytes(broken)
        with pytest.raises(ValueError, match="not a Bloom filter"):
            BloomFilter.open(path, 1000, 0.001)


def test_a_filter_from_a_file_knows_the_capacity_it_was_sized_for(tmp_path):
    """A file keeps its size when the capacity settings change: what it holds is its own."""
    path = tmp_path / "requests.bloom"
    for capacity, error_rate in [(100, 0.001), (10_000, 0.01), (1_000_000, 0.001)]:
        BloomFilter.local(capacity, error_rate).save(path)
        opened = BloomFilter.open(path, 1, 0.5)
        assert opened.capacity == pytest.approx(capacity, rel=0.06)
        opened.close()


def test_local_bits_check_their_length():
    with pytest.raises(ValueError, match="do not hold"):
        LocalBits(100, bytearray(3))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def redis_client(tmp_path_factory) -> Iterator[redis.Redis]:
    """A real redis-server on a free port in a temporary folder, stopped afterwards."""
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    folder = tmp_path_factory.mktemp("redis")
    port = _free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
    )
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)
    deadline = time.monotonic() + 10
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise
            time.sleep(0.05)
    yield client
    client.close()
    process.terminate()
    process.wait(10)


def commands_processed(client: redis.Redis) -> int:
    return client.info("stats")["total_commands_processed"]


def test_redis_bits_are_shared_between_filters(redis_client):
    size, hashes = optimal_size(10_000, 0.001)
    first = BloomFilter(RedisBits(redis_client, "test:shared", size), hashes)
    second = BloomFilter(RedisBits(redis_client, "test:shared", size), hashes)
    assert not first.add(b"page-1")
    assert second.add(b"page-1")  # another worker sees it
    assert b"page-1" in second
    assert b"page-2" not in second
    assert redis_client.strlen("test:shared") <= (size + 7) // 8


def test_recently_seen_items_are_answered_without_asking_redis(redis_client):
    size, hashes = optimal_size(10_000, 0.001)
    bloom = BloomFilter(RedisBits(redis_client, "test:cache", size), hashes, cache_size=2)
    for item in (b"a", b"b"):
        bloom.add(item)
    before = commands_processed(redis_client)
    assert bloom.add(b"a")
    assert bloom.add(b"b")
    assert b"a" in bloom
    # The INFO before counts as one command: nothing else was sent.
    assert commands_processed(redis_client) - before == 1
    bloom.add(b"c")  # evicts the least recently seen, a
    before = commands_processed(redis_client)
    assert bloom.add(b"a")  # still seen, now asked of Redis
    assert commands_processed(redis_client) - before == 2


def test_redis_bits_refuse_more_than_a_redis_string_holds(redis_client):
    with pytest.raises(ValueError, match="at most"):
        RedisBits(redis_client, "test:big", 2**33)


def test_a_filter_the_disk_has_no_room_for_leaves_no_file_behind(small_fs):
    """Before, a full disk left a ``.part`` file of the bits written so far."""
    folder = small_fs("64k")
    path = folder / "requests.bloom"
    with pytest.raises(OSError, match="No space left"):
        BloomFilter.local(1_000_000, 0.001).save(path)  # 1.8 MB
    assert list(folder.iterdir()) == []
