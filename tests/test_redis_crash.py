"""kill -9 a Redis-backed crawl at a random moment, run the same command again (seeds and
all): it resumes the crawl in Redis, finishes, no accepted page is missing from the index or
in it twice, and no page is fetched twice except the ones the killed worker had leased.

The fixture site keeps an access log, so every fetch counts, parsed or not.
"""

from __future__ import annotations

import random
import re
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from redis_server import RedisServer, leased_paths, request_path
from scrapy import Request, Spider
from scrapy.utils.test import get_crawler

from demo.site import serve
from tests.test_spider import crawl_command, paths, read_jsonl, scrapy, start_scrapy
from topicspider.redis.connection import get_client
from topicspider.redis.crawl import CrawlRecord
from topicspider.redis.queue import RedisFrontier

#: Four download slots of one connection each, one request per slot every 0.2 s: up to four
#: requests leased at once, and a crawl of the site lasts a few seconds. A lease of 2 s, so
#: that the rerun gets the dead worker's requests back soon.
SETTINGS = [
    "TOPIC_SLOT_POLICY=aphash",
    "TOPIC_SLOTS=4",
    "CONCURRENT_REQUESTS_PER_DOMAIN=1",
    "DOWNLOAD_DELAY=0.2",
    "REDIS_LEASE=2",
    "TOPIC_DUPLICATE_DISTANCE=-1",  # so that every accepted page is stored
    "TELNETCONSOLE_ENABLED=False",
]


@pytest.fixture
def logged_site(site, tmp_path):
    """The fixture site served with an access log; returns (base URL, access log path)."""
    log = tmp_path / "access.log"
    server, url = serve(site.root, access_log=log)
    yield url, log
    server.shutdown()
    server.server_close()


def fetched_paths(access_log: Path) -> list[str]:
    """Pages fetched, in order (robots.txt is each process's own)."""
    if not access_log.exists():
        return []
    fetched = [line.split()[1] for line in access_log.read_text("utf-8").splitlines()]
    return [path for path in fetched if path != "/robots.txt"]


def lines(path: Path) -> int:
    """Whole lines in a file another process appends to (its last one may be half written)."""
    return path.read_bytes().count(b"\n") if path.exists() else 0


def command(site_url, site, out: Path, redis: RedisServer, crawl_id: str) -> list[str]:
    return crawl_command(
        site_url, site, out, f"REDIS_URL={redis.url}", f"TOPIC_CRAWL_ID={crawl_id}", *SETTINGS
    )


def request_paths(redis: RedisServer, crawl_id: str) -> tuple[set[str], set[str]]:
    """What the crawl holds in Redis: the paths of all its requests (queued or leased), and
    of the leased ones (popped by a worker, not acknowledged)."""
    state = redis.client()
    prefix = f"topicspider:{crawl_id}"
    every = {request_path(blob) for blob in state.hvals(f"{prefix}:req")}
    leased = set()
    for key in state.scan_iter(f"{prefix}:inflight:*"):
        leased |= leased_paths(state, prefix, key)
    return every, leased


def assert_clean(result: subprocess.CompletedProcess, crawl_id: str) -> None:
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert "ERROR" not in result.stderr, result.stderr[-3000:]
    assert f"Crawl '{crawl_id}' is finished" in result.stderr, result.stderr[-3000:]


@pytest.fixture(scope="module")
def unbroken(site, redis_server, tmp_path_factory):
    """The pages an uninterrupted crawl with the same command stores."""
    out = tmp_path_factory.mktemp("unbroken")
    server, url = serve(site.root)
    try:
        result = scrapy(*command(url, site, out, redis_server, "unbroken"))
    finally:
        server.shutdown()
        server.server_close()
    assert_clean(result, "unbroken")
    return set(paths(read_jsonl(out / "pages" / "index.jsonl")))


def kill_9(
    process: subprocess.Popen, rng: random.Random, holding: bool, redis: RedisServer, crawl_id: str
) -> None:
    """SIGKILL at a random moment, or, if ``holding``, at one when the worker holds leases
    (stopped first, so that what it holds cannot change between the look and the kill)."""
    deadline = time.monotonic() + 60
    while holding:
        assert process.poll() is None, "the crawl ended before the kill"
        assert time.monotonic() < deadline, "the worker never held a request"
        process.send_signal(signal.SIGSTOP)
        if request_paths(redis, crawl_id)[1]:
            break
        process.send_signal(signal.SIGCONT)
        time.sleep(rng.uniform(0, 0.05))
    else:
        time.sleep(rng.uniform(0, 0.3))  # fetching, parsing, storing or waiting
    process.send_signal(signal.SIGKILL)


@pytest.mark.parametrize(("seed", "holding"), [(1, False), (2, False), (3, True), (4, True)])
def test_kill_9_and_resume_with_the_same_command(
    site, logged_site, redis_server, unbroken, tmp_path, seed, holding
):
    url, access_log = logged_site
    rng = random.Random(seed)
    stored_at_kill = rng.randint(1, 10)
    crawl_id = f"crash-{seed}"
    out = tmp_path / "out"
    args = command(url, site, out, redis_server, crawl_id)
    index = out / "pages" / "index.jsonl"
    process = start_scrapy(*args, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while lines(index) < stored_at_kill:
            assert process.poll() is None, "the crawl ended before the kill"
            assert time.monotonic() < deadline, "no page was stored"
            time.sleep(0.01)
        kill_9(process, rng, holding, redis_server, crawl_id)
    finally:
        process.kill()
    assert process.wait(timeout=30) == -signal.SIGKILL, "the crawl ended before the kill"
    waiting, leased = request_paths(redis_server, crawl_id)
    assert waiting, "nothing was queued or in flight at the kill"

    resumed = scrapy(*args)  # the same command, seeds included
    assert_clean(resumed, crawl_id)
    assert f"Joined crawl '{crawl_id}'" in resumed.stderr, "the crawl started again from scratch"
    if leased:
        assert "requests of workers whose lease ran out" in resumed.stderr

    fetched = fetched_paths(access_log)
    twice = {path for path, n in Counter(fetched).items() if n > 1}
    assert twice <= leased, f"fetched twice, and not in flight at the kill: {twice - leased}"
    forbidden = set(site.disallowed)  # robots.txt: queued, then refused, never fetched
    assert waiting - forbidden <= set(fetched), "a request queued or leased at the kill was lost"
    stored = paths(read_jsonl(index))
    assert len(stored) == len(set(stored)), "a page is in the index twice"
    rows = read_jsonl(out / "fetch.jsonl")
    accepted = {path for path, row in zip(paths(rows), rows, strict=True) if row["accepted"]}
    assert accepted == set(stored), "an accepted page is missing from the index"
    assert unbroken <= set(stored), "a page the uninterrupted crawl stores is missing"
    state = redis_server.client()
    assert int(state.get(f"topicspider:{crawl_id}:active")) == 0
    assert not state.zcard(f"topicspider:{crawl_id}:workers")


def test_a_page_is_acknowledged_only_with_the_last_of_its_links(redis_server):
    """More links than one round trip takes: the page that found them stays leased until
    the last of them is in Redis, so a worker killed in between loses no link (the page is
    fetched again instead)."""
    crawler = get_crawler(Spider, {"REDIS_URL": redis_server.url})
    prefix = "topicspider:many-links"
    CrawlRecord(redis_server.client(), prefix, "many-links").join("", 1, None, has_seeds=True)
    frontier = RedisFrontier(
        get_client(crawler.settings),
        Spider("many-links"),
        prefix,
        worker="w",
        partitions=1,
        worker_partitions=[0],
        slot_of=lambda request: "a.test",
        fingerprint=lambda request: crawler.request_fingerprinter.fingerprint(request).hex(),
        slot_concurrency=1,
        dupefilter_key=f"{prefix}:dupefilter",
    )
    frontier.heartbeat(60)
    frontier.push(Request("http://a.test/", meta={"topic_score": 1.0}))
    frontier.step(wanted=1)
    page = frontier.pop()
    for n in range(frontier.MAX_PUSHES + 1):
        frontier.push(Request(f"http://a.test/{n}", meta={"topic_score": 0.5}))
    state = redis_server.client()

    frontier.step(done=[page])
    assert frontier.pending == 1
    assert state.hlen(f"{prefix}:inflight:w") == 1, "acknowledged before all its links were sent"
    step = frontier.step(done=[page])
    assert (frontier.pending, step.acked, step.queued) == (0, 1, frontier.MAX_PUSHES + 1)
    assert not state.hlen(f"{prefix}:inflight:w")
    frontier.server.close()


def test_accepted_pages_a_full_pages_folder_lost_are_fetched_by_the_next_worker(
    site, redis_server, tmp_path, small_fs
):
    """Before, the worker acknowledged their requests as their items left it, and the
    crawl's seen-set held them: no worker fetched them again."""
    server, url = serve(site.root)
    pages = small_fs("20k")
    run = [*command(url, site, tmp_path, redis_server, "refetch"), "-s", f"TOPIC_PAGES_DIR={pages}"]
    try:
        first = scrapy(*run)
        assert "'finish_reason': 'pages_dir_error'" in first.stderr, first.stderr[-3000:]
        listed = re.search(r"accepted pages were not stored, .*: ([^;\n]*)", first.stderr)
        assert listed, first.stderr[-3000:]
        lost = set(listed[1].split())
        assert "; they go back to the crawl in Redis, for a worker to fetch again" in first.stderr
        subprocess.run(["mount", "-o", "remount,size=10m", str(pages)], check=True)
        second = scrapy(*run)
    finally:
        server.shutdown()
        server.server_close()
    assert_clean(second, "refetch")
    assert lost <= {row["url"] for row in read_jsonl(pages / "index.jsonl")}
