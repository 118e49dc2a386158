import random
import subprocess
import sys
import threading
from types import SimpleNamespace

import pytest
from scrapy import Request, Spider
from scrapy.core.downloader import Downloader, Slot
from scrapy.utils.test import get_crawler

from topicspider.pqueues import (
    LINKS_QUEUED_KEY,
    DiskQueue,
    FrontierError,
    MemoryQueue,
    ScorePriorityQueue,
    SpillQueue,
    score_of,
)


class QueueSpider(Spider):
    name = "queue-test"

    def parse(self, response):
        pass

    def parse_other(self, response):
        pass


@pytest.fixture
def crawler():
    crawler = get_crawler(QueueSpider)
    crawler.spider = QueueSpider()
    return crawler


def request(name: str, score: float | None = None, **kwargs) -> Request:
    meta = {} if score is None else {"topic_score": score}
    return Request(f"http://127.0.0.1/{name}", meta=meta, **kwargs)


def drain(queue) -> list[str]:
    urls = []
    while (item := queue.pop()) is not None:
        urls.append(item.url.rsplit("/", 1)[1])
    return urls


def spill_queue(crawler, limit: int) -> ScorePriorityQueue:
    return ScorePriorityQueue(SpillQueue(limit, crawler), crawler.request_fingerprinter)


@pytest.fixture(params=["memory", "disk", "spill"])
def queue(request, crawler, tmp_path):
    if request.param == "memory":
        pq = ScorePriorityQueue.from_crawler(crawler, MemoryQueue, "")
    elif request.param == "disk":
        pq = ScorePriorityQueue.from_crawler(crawler, DiskQueue, str(tmp_path / "q"))
    else:
        pq = spill_queue(crawler, 3)  # spills after every few pushes
    yield pq
    pq.close()


def test_float_scores_order_highest_first(queue):
    for name, score in [("low", 0.1), ("high", 0.9), ("mid", 0.5), ("mid2", 0.50001)]:
        queue.push(request(name, score))
    assert len(queue) == 4
    assert drain(queue) == ["high", "mid2", "mid", "low"]
    assert len(queue) == 0


def test_ties_break_first_in_first_out(queue):
    for i in range(20):
        queue.push(request(f"r{i}", 0.25))
    assert drain(queue) == [f"r{i}" for i in range(20)]


def test_seed_score_infinity_and_integer_priority_fallback(queue):
    queue.push(request("plain", priority=3))
    queue.push(request("seed", float("inf")))
    queue.push(request("scored", 2.5))
    assert drain(queue) == ["seed", "plain", "scored"]
    assert score_of(request("x", priority=-2)) == -2.0


def test_disk_queue_survives_close_and_reopen(crawler, tmp_path):
    key = str(tmp_path / "requests.queue")
    first = ScorePriorityQueue.from_crawler(crawler, DiskQueue, key)
    for i, score in enumerate([0.3, 0.7, 0.7, 0.1]):
        first.push(
            request(f"r{i}", score, callback=crawler.spider.parse_other, headers={"X-N": str(i)})
        )
    assert first.pop().url.endswith("r1")
    first.close()

    second = ScorePriorityQueue.from_crawler(crawler, DiskQueue, key)
    assert len(second) == 3
    restored = second.pop()
    assert restored.url.endswith("r2")
    assert restored.meta["topic_score"] == 0.7
    assert restored.headers["X-N"] == b"2"
    assert restored.callback == crawler.spider.parse_other
    second.push(request("late", 0.3))
    assert drain(second) == ["r0", "late", "r3"]
    second.close()


def test_a_request_pushed_again_while_in_flight_is_queued_again(queue, crawler):
    """A retry or a demoted copy (``dont_filter``) comes back before the engine is done
    with the first: it is queued, whatever the queue keeps of requests in flight."""
    queue.push(request("page", 0.5))
    first = queue.pop()
    queue.push(first.replace(dont_filter=True, meta={"topic_score": 0.2}))
    assert len(queue) == 1
    again = queue.pop()
    assert again.url == first.url
    assert again.meta["topic_score"] == 0.2


def test_a_retry_queued_on_disk_outlives_the_request_it_replaces(crawler, tmp_path):
    key = str(tmp_path / "requests.queue")
    first = ScorePriorityQueue.from_crawler(crawler, DiskQueue, key)
    first.push(request("page", 0.5))
    first.push(request("other", 0.4))
    in_flight = first.pop()
    first.push(in_flight.replace(dont_filter=True, meta={"topic_score": 0.3}))
    first.queue.settle(())  # the engine is done with the first request
    first.close()  # killed before the retry was fetched

    second = ScorePriorityQueue.from_crawler(crawler, DiskQueue, key)
    assert len(second) == 2
    assert drain(second) == ["other", "page"]
    second.close()


@pytest.mark.parametrize("kind", ["memory", "disk"])
def test_a_page_found_again_through_a_link_of_another_slot_moves_there(kind, crawler, tmp_path):
    """Found again, a page takes the better score and the slot its new request is in.
    Before, a frontier on disk kept the row in its old slot but counted it in the new one:
    a page was handed out twice, another never, and the crawl did not end."""
    made = MemoryQueue() if kind == "memory" else DiskQueue(tmp_path / "q", crawler)
    made.push(request("page", 0.2), "h#1", "page")
    made.push(request("other", 0.5), "h#2", "other")
    assert made.improve(request("page", 0.9), "h#2", "page")
    assert len(made) == 2
    assert made.peek("h#1") is None
    assert made.pop("h#1") is None
    assert [made.pop("h#2").url.rsplit("/", 1)[1] for _ in range(2)] == ["page", "other"]
    assert made.pop("h#2") is None
    assert len(made) == 0
    made.close()


def test_a_score_that_is_not_a_number_goes_last(queue):
    queue.push(request("nan", float("nan")))
    queue.push(request("low", -5.0))
    assert drain(queue) == ["low", "nan"]


def test_a_score_of_another_type_goes_last_instead_of_failing(queue):
    """A user's middleware may set the score to None or a word: such a request is queued,
    last, rather than raising in the scheduler and being lost."""
    queue.push(Request("http://127.0.0.1/none", meta={"topic_score": None}))
    queue.push(Request("http://127.0.0.1/word", meta={"topic_score": "high"}))
    queue.push(Request("http://127.0.0.1/huge", meta={"topic_score": 10**400}))  # no float
    queue.push(request("low", -5.0))
    queue.push(request("infinite-low", float("-inf")))
    assert drain(queue) == ["low", "none", "word", "huge", "infinite-low"]


def test_a_link_to_the_page_in_flight_is_no_rediscovery(queue):
    """The scheduler then drops it as seen, with the frontier in memory or on disk alike;
    before, on disk it counted as rediscovered and as going ahead of the slot's best."""
    queue.push(request("page", 0.5))
    queue.push(request("other", 0.4))
    assert queue.pop().url.endswith("/page")
    assert not queue.rescore(request("page", 0.9))
    assert drain(queue) == ["other"]


def test_a_request_that_does_not_pickle_is_refused_by_the_frontier_on_disk(crawler, tmp_path):
    """With ``ValueError``, as Scrapy's disk queues refuse it: the scheduler keeps it in
    memory. Before, pickle's own error got past the scheduler and the request was lost."""
    disk = DiskQueue(tmp_path / "q", crawler)
    locked = Request("http://127.0.0.1/locked", meta={"lock": threading.Lock()})
    with pytest.raises(ValueError, match="cannot be pickled"):
        disk.push(locked, "127.0.0.1", "locked")
    assert len(disk) == 0
    disk.push(request("page", 0.2), "127.0.0.1", "page")
    assert disk.improve(locked.replace(url="http://127.0.0.1/page"), "127.0.0.1", "page")
    assert disk.pop("127.0.0.1").meta["topic_score"] == 0.2  # kept as first queued
    disk.close()


def slot_queue(
    parse_backlog: int = 0, backlog_after: int = 0
) -> tuple[ScorePriorityQueue, set[Request], Downloader]:
    """A queue reading the two parts of an engine it needs, one connection per host: the
    requests in progress and the downloader (a real engine needs a running reactor; the
    end-to-end crawl tests cover that)."""
    crawler = get_crawler(QueueSpider, {"CONCURRENT_REQUESTS_PER_DOMAIN": 1})
    crawler.spider = QueueSpider()
    downloader = Downloader(crawler)
    in_progress: set[Request] = set()
    engine = SimpleNamespace(downloader=downloader, _slot=SimpleNamespace(inprogress=in_progress))
    queue = ScorePriorityQueue(
        MemoryQueue(),
        crawler.request_fingerprinter,
        engine,
        parse_backlog=parse_backlog,
        backlog_after=backlog_after,
        stats=crawler.stats,
    )
    return queue, in_progress, downloader


def test_requests_of_busy_slots_wait_for_room():
    """A slot with as many requests in progress (downloading or not yet parsed) as its
    concurrency gets nothing more; other slots still do."""
    queue, in_progress, _ = slot_queue()
    queue.push(request("busy-best", 0.9))
    other = Request("http://localhost/other", meta={"topic_score": 0.1})
    queue.push(other)
    in_flight = request("in-flight")
    in_progress.add(in_flight)
    assert queue.pop() is other
    assert queue.pop() is None
    assert len(queue) == 1
    in_progress.discard(in_flight)
    assert queue.pop().url.endswith("busy-best")


def test_a_slot_downloads_while_its_pages_are_parsed_up_to_the_backlog():
    """With TOPIC_PARSE_BACKLOG=1 a slot whose page is downloaded and being parsed starts
    its next download; with a second page parsing, or a download running, it waits."""
    queue, in_progress, downloader = slot_queue(parse_backlog=1)
    for name in ("a", "b", "c"):
        queue.push(request(name, 0.5))
    downloader.slots["127.0.0.1"] = slot = Slot(concurrency=1, delay=0)
    downloading = request("downloading")
    in_progress.add(downloading)
    slot.active.add(downloading)
    assert queue.pop() is None  # the one download the slot allows is running
    slot.active.discard(downloading)  # downloaded; its page is being parsed
    assert queue.pop().url.endswith("/a")
    parsing_too = request("parsing-too")
    in_progress.add(parsing_too)
    assert queue.pop() is None  # two pages in progress: the download and the backlog of 1
    in_progress.clear()
    assert queue.pop().url.endswith("/b")


def test_the_backlog_waits_for_pages_that_change_no_choice():
    """TOPIC_PARSE_BACKLOG_AFTER=2: a slot downloads while its page is parsed only once the
    last two pages judged sent no link ahead of its best queued request; a link that goes
    ahead starts the count again."""
    queue, in_progress, downloader = slot_queue(parse_backlog=1, backlog_after=2)
    queue.push(request("a", 0.5))
    queue.push(request("b", 0.4))
    downloader.slots["127.0.0.1"] = Slot(concurrency=1, delay=0)
    in_progress.add(request("parsing"))
    assert queue.pop() is None  # no page judged yet: the crawl's start chooses late
    queue.page_judged()
    queue.page_judged()
    assert queue.pop().url.endswith("/a")
    assert queue.stats.get_value("topic/chosen_early") == 1
    queue.push(request("tied", 0.4))  # behind the best (ties go first in, first out)
    assert queue.pop().url.endswith("/b")
    queue.push(request("ahead", 0.9))
    queue.push(request("behind", 0.1))
    assert queue.pop() is None
    queue.page_judged()
    assert queue.pop() is None
    queue.page_judged()
    assert queue.pop().url.endswith("/ahead")


def test_a_queued_request_raised_ahead_of_the_best_counts_as_a_changed_choice():
    queue, in_progress, downloader = slot_queue(parse_backlog=1, backlog_after=1)
    queue.push(request("best", 0.5))
    queue.push(request("next", 0.4))
    queue.push(request("raised", 0.2))
    downloader.slots["127.0.0.1"] = Slot(concurrency=1, delay=0)
    in_progress.add(request("parsing"))
    queue.page_judged()
    assert not queue.rescore(request("fetched-before", 0.9))  # not queued: no choice changed
    assert queue.pop().url.endswith("/best")
    assert queue.rescore(request("raised", 0.8))  # ahead of "next"
    assert queue.pop() is None
    queue.page_judged()
    assert queue.pop().url.endswith("/raised")


def test_a_page_whose_links_are_queued_no_longer_holds_its_slot():
    """The engine keeps a request in progress until its item is stored; once the spider has
    queued the page's links, the slot's next choice cannot gain from waiting any longer."""
    queue, in_progress, _ = slot_queue()
    queue.push(request("next", 0.5))
    parsed = request("parsed")
    in_progress.add(parsed)
    assert queue.pop() is None
    parsed.meta[LINKS_QUEUED_KEY] = True
    assert queue.pop().url.endswith("/next")


def test_best_request_across_slots(queue):
    queue.push(request("a", 0.2))
    queue.push(Request("http://localhost/b", meta={"topic_score": 0.8}))
    queue.push(request("c", 0.5))
    assert [queue.pop().url for _ in range(3)] == [
        "http://localhost/b",
        "http://127.0.0.1/c",
        "http://127.0.0.1/a",
    ]


def test_spill_keeps_memory_bounded(crawler):
    queue = spill_queue(crawler, 10)
    for i in range(1000):
        queue.push(request(f"r{i}", i % 7 / 7))
        assert len(queue.queue._entries) <= 10
    assert len(queue) == 1000
    assert crawler.stats.get_value("topic/queue/spilled") >= 990
    popped = [score_of(queue.pop()) for _ in range(1000)]
    assert popped == sorted(popped, reverse=True)
    assert len(queue) == 0
    assert queue.pop() is None
    queue.close()


@pytest.mark.parametrize("seed", range(4))
def test_spill_pops_in_exactly_the_memory_queue_order(crawler, seed):
    """Random pushes, rescores and pops over three slots: a SpillQueue with a tiny limit
    hands out the same requests in the same order as the all-memory queue."""
    rng = random.Random(seed)
    reference = ScorePriorityQueue(MemoryQueue(), crawler.request_fingerprinter)
    spilling = spill_queue(crawler, rng.choice([1, 2, 5, 16]))
    hosts = ["127.0.0.1", "localhost", "127.0.0.2"]
    for _ in range(3000):
        action = rng.random()
        if action < 0.6:
            url = f"http://{rng.choice(hosts)}/p{rng.randrange(400)}"
            score = rng.choice([0.1, 0.2, 0.5, rng.random()])
            for queue in (reference, spilling):
                new = Request(url, meta={"topic_score": score})
                if not queue.rescore(new):
                    queue.push(new)
        else:
            expected, got = reference.pop(), spilling.pop()
            assert (got and (got.url, score_of(got))) == (
                expected and (expected.url, score_of(expected))
            )
        assert len(spilling) == len(reference)
    assert crawler.stats.get_value("topic/queue/spilled")
    assert drain(spilling) == drain(reference)
    spilling.close()


def test_with_many_slots_each_request_goes_to_disk_about_once(crawler):
    """Pops take each slot's best; a refill of a whole batch per slot overflowed memory and
    the next spill wrote most of it back (3000 requests on 100 hosts: 18,639 writes)."""
    queue = spill_queue(crawler, 100)
    rng = random.Random(0)
    for i in range(3000):
        queue.push(
            Request(f"http://h{rng.randrange(100)}.test/p{i}", meta={"topic_score": rng.random()})
        )
    popped = [score_of(queue.pop()) for _ in range(3000)]
    assert popped == sorted(popped, reverse=True)
    assert crawler.stats.get_value("topic/queue/spilled") < 1.5 * 3000
    queue.close()


def test_rescoring_reaches_spilled_requests(crawler):
    queue = spill_queue(crawler, 4)
    for i in range(20):
        queue.push(request(f"r{i}", 0.5))
    queue.push(request("late", 0.1))
    assert queue.queue._disk_length > 0
    assert queue.rescore(request("late", 0.05))  # lower: still queued, unchanged
    assert queue.rescore(request("late", 0.9))  # higher: now first
    assert not queue.rescore(request("unknown", 0.9))
    assert drain(queue) == ["late"] + [f"r{i}" for i in range(20)]
    queue.close()


def test_requests_that_cannot_be_serialized_stay_in_memory(crawler):
    queue = spill_queue(crawler, 2)
    queue.push(
        Request("http://127.0.0.1/local", callback=lambda r: None, meta={"topic_score": 0.0})
    )
    for i in range(10):
        queue.push(request(f"r{i}", 0.5))
    assert drain(queue) == [f"r{i}" for i in range(10)] + ["local"]
    queue.close()


def test_a_crawl_that_spills_fetches_in_the_all_memory_order(site, site_url, tmp_path):
    """The demo crawl with a frontier of two requests in memory fetches the same pages
    in the same order as with every request in memory."""
    from test_spider import ONE_AT_A_TIME, crawl_command, paths, read_jsonl, scrapy_side_by_side

    memory, spill = scrapy_side_by_side(
        crawl_command(
            site_url,
            site,
            tmp_path / "memory",
            *ONE_AT_A_TIME,
            "SCHEDULER_MEMORY_QUEUE=topicspider.pqueues.MemoryQueue",
        ),
        crawl_command(
            site_url,
            site,
            tmp_path / "spill",
            *ONE_AT_A_TIME,
            "SCHEDULER_MEMORY_QUEUE=topicspider.pqueues.SpillQueue",
            "TOPIC_QUEUE_MEMORY_LIMIT=2",
        ),
    )
    assert memory.returncode == 0, memory.stderr[-2000:]
    assert spill.returncode == 0, spill.stderr[-2000:]
    assert "'topic/queue/spilled'" in spill.stderr
    expected = paths(read_jsonl(tmp_path / "memory" / "fetch.jsonl"))
    assert len(expected) > 20
    assert paths(read_jsonl(tmp_path / "spill" / "fetch.jsonl")) == expected


def test_a_damaged_frontier_is_refused_naming_its_file(crawler, tmp_path):
    """A frontier file cut short or overwritten (a power cut, a copy that stopped) is not
    read as an empty frontier, which would end the crawl at once as if it were done."""
    key = tmp_path / "requests.queue"
    first = DiskQueue(key, crawler)
    first.push(request("page", 0.5), "127.0.0.1", "f1")
    first.close()
    file = key / "frontier.sqlite3"
    whole = file.read_bytes()
    for damaged in (b"", b"not a database" * 1000, whole[: len(whole) // 2]):
        file.write_bytes(damaged)
        with pytest.raises(
            FrontierError, match=f"{file}.*(empty or damaged|not a database|malformed)"
        ):
            DiskQueue(key, crawler).close()


SPILL_ON_A_FULL_DISK = """
import sys
from pathlib import Path
from scrapy import Request, Spider
from scrapy.utils.test import get_crawler
from topicspider.pqueues import FrontierError, ScorePriorityQueue, SpillQueue, score_of

crawler = get_crawler(Spider)
crawler.spider = Spider("spill")
queue = ScorePriorityQueue(SpillQueue(50, crawler), crawler.request_fingerprinter)
pushed = []
try:
    for i in range(100_000):
        queue.push(Request(f"http://127.0.0.1/{i}?{'x' * 500}", meta={"topic_score": i % 97 / 97}))
        pushed.append(i)
except FrontierError as error:
    print("FrontierError:", error)
Path(sys.argv[1]).unlink()  # room again
popped = []
while (got := queue.pop()) is not None:
    popped.append((-score_of(got), int(got.url.rsplit("/", 1)[1].split("?")[0])))
print(len(pushed), len(popped), popped == sorted(popped), set(pushed) <= {i for _, i in popped})
"""


def test_a_full_temporary_folder_is_an_error_and_leaves_the_spilled_requests_whole(small_fs):
    """The spill file lives in TMPDIR: when it is full the queue raises ``FrontierError``
    (the scheduler stops the crawl on it), and what it had spilled is still there, in
    order, once there is room again (without a journal the failed write damaged it)."""
    folder = small_fs("8m")
    filler = folder / "filler"
    filler.write_bytes(bytes(8 * 2**20 - 300_000))  # SQLite's cache holds 2 MB more
    result = subprocess.run(
        [sys.executable, "-c", SPILL_ON_A_FULL_DISK, str(filler)],
        env={"SQLITE_TMPDIR": str(folder), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "FrontierError: Cannot use the frontier's temporary file (TMPDIR)" in result.stdout, (
        result.stdout + result.stderr[-2000:]
    )
    pushed, popped, in_order, all_there = result.stdout.split("\n")[-2].split()
    assert int(pushed) > 1000, "the disk filled before the queue spilled much"
    assert int(popped) >= int(pushed)
    assert in_order == "True"
    assert all_there == "True"
