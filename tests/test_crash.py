"""kill -9 a crawl running with JOBDIR at a random moment, run the same command again:
it finishes, no accepted page is missing from the index or in it twice, and no page is
fetched twice except the ones in flight at the kill, or accepted and not yet stored; with
either dupefilter. A JOBDIR on a
full disk stops the crawl in one line and the resume loses no request; one that another
crawl holds, or that was made with other keywords, or whose frontier is damaged or cannot
be written, is refused in one line; so is a crawl without JOBDIR whose temporary
file cannot be written."""

from __future__ import annotations

import pickle
import random
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from urllib.parse import urlsplit

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

from demo.crawl import SCRAPY, topic_args
from tests.httpserver import Handler, serving
from tests.test_spider import (
    ONE_AT_A_TIME,
    ROOT,
    SCRAPY_ENV,
    crawl_command,
    paths,
    read_jsonl,
    scrapy,
    start_scrapy,
)
from topicspider.dupefilters import DurableRFPDupeFilter
from topicspider.fingerprints import SessionlessFingerprinter
from topicspider.pqueues import DiskQueue, FrontierError


@pytest.mark.parametrize(("seed", "dupefilter"), [(1, "exact"), (2, "bloom")])
def test_kill_9_and_resume(site, site_url, tmp_path, serial_crawl, seed, dupefilter):
    kill_after = random.Random(seed).randint(3, 25)
    out, jobdir = tmp_path / "out", tmp_path / "job"
    command = crawl_command(
        site_url,
        site,
        out,
        f"JOBDIR={jobdir}",
        *ONE_AT_A_TIME,
        "DOWNLOAD_DELAY=0.05",
        "TOPIC_DUPLICATE_DISTANCE=-1",  # so that every accepted page is stored
        f"TOPIC_DUPEFILTER={dupefilter}",
    )
    process = start_scrapy(*command, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    while len(read_jsonl(out / "fetch.jsonl")) < kill_after and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    before = paths(read_jsonl(out / "fetch.jsonl"))
    assert len(before) < len(serial_crawl), "the crawl ended before the kill"
    with sqlite3.connect(jobdir / "requests.queue" / "frontier.sqlite3") as frontier:
        rows = frontier.execute("SELECT request, taken FROM frontier").fetchall()
    queued = {urlsplit(pickle.loads(blob)["url"]).path for blob, _ in rows}
    # In flight, or accepted and not yet known stored (among the first, pages wait for the
    # threshold to settle): fetched again when the crawl resumes.
    taken = {urlsplit(pickle.loads(blob)["url"]).path for blob, taken in rows if taken}
    assert queued, "nothing was queued at the kill"

    resumed = scrapy(*command)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    rows = read_jsonl(out / "fetch.jsonl")
    fetched = paths(rows)
    twice = {path for path, n in Counter(fetched).items() if n > 1}
    assert twice <= taken, f"fetched twice, not taken at the kill: {twice - taken}"
    assert len(taken) <= 1 + 10, "more taken than the request in flight and the pages that wait"
    stored = paths(read_jsonl(out / "pages" / "index.jsonl"))
    assert len(stored) == len(set(stored)), "a page is in the index twice"
    accepted = {path for path, row in zip(fetched, rows, strict=True) if row["accepted"]}
    assert accepted == set(stored), "an accepted page is missing from the index"
    forbidden = set(site.disallowed)  # robots.txt: queued, then refused, never a page
    assert queued - forbidden <= set(fetched), (
        "a request queued (or in flight) at the kill was lost"
    )
    # What the crawl had learned (weights, URL templates) dies with kill -9, so the order after
    # the restart, and which off-topic paths stay within the tunnel, may differ from an
    # unbroken crawl's: compare with what was queued, not with a reference crawl.


def crawl_within(seconds: float, *args: str) -> subprocess.CompletedProcess:
    """`scrapy ARGS` run to its end, which must come within ``seconds`` (the crawls below
    used to retry for ever, or wait for each other)."""
    return subprocess.run(
        [*SCRAPY, *args], cwd=ROOT, env=SCRAPY_ENV, capture_output=True, text=True, timeout=seconds
    )


def our_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "[topicspider" in line and "ERROR" in line]


def assert_stopped(result: subprocess.CompletedProcess, message: str, reason: str) -> None:
    """The crawl stopped with one error line, saying ``message``, and exit status 1."""
    [error] = our_errors(result.stderr)
    assert message in error
    assert f"'finish_reason': '{reason}'" in result.stderr, result.stderr[-3000:]
    assert result.returncode == 1
    assert "Traceback" not in result.stderr, result.stderr


def queued_paths(jobdir) -> set[str]:
    with sqlite3.connect(jobdir / "requests.queue" / "frontier.sqlite3") as frontier:
        return {
            urlsplit(pickle.loads(blob)["url"]).path
            for (blob,) in frontier.execute("SELECT request FROM frontier")
        }


def test_a_full_disk_stops_the_crawl_in_one_line_and_the_resume_loses_nothing(
    site, site_url, tmp_path, small_fs
):
    disk = small_fs("16m")
    filler = disk / "filler"
    filler.write_bytes(bytes(16 * 2**20 - 100_000))  # room for a few links only
    out, jobdir = tmp_path / "out", disk / "job"
    command = crawl_command(site_url, site, out, f"JOBDIR={jobdir}", *ONE_AT_A_TIME)
    full = crawl_within(90, *command)
    assert "'finish_reason': 'jobdir_error'" in full.stderr, full.stderr[-3000:]
    assert full.returncode == 1
    frontier = jobdir / "requests.queue" / "frontier.sqlite3"
    [error] = our_errors(full.stderr)
    assert f"Cannot use the frontier {frontier} (JOBDIR): database or disk is full" in error
    assert "the same command resumes it" in error
    # Every link written down as seen is queued or fetched: one that is neither would be
    # dropped as a duplicate when found again, and never fetched.
    seen_set = DurableRFPDupeFilter(str(jobdir), fingerprinter=SessionlessFingerprinter())
    seen = {path for path in site.pages if seen_set.knows(Request(f"{site_url}{path}"))}
    seen_set.close("checked")
    fetched = set(paths(read_jsonl(out / "fetch.jsonl")))
    assert seen - site.disallowed <= queued_paths(jobdir) | fetched, "a request was lost"

    filler.unlink()
    resumed = crawl_within(120, *command)
    assert "'finish_reason': 'finished'" in resumed.stderr, resumed.stderr[-3000:]
    assert seen - site.disallowed <= set(paths(read_jsonl(out / "fetch.jsonl")))


def test_a_frontier_that_failed_keeps_the_requests_in_flight_for_the_resume(tmp_path, small_fs):
    """Once a write failed, the requests taken are not settled: their pages' links may not
    all be queued, so they are fetched again when the crawl resumes."""
    crawler = get_crawler()
    disk = small_fs("16m")
    queue = DiskQueue(disk / "requests.queue", crawler)
    queue.push(Request("http://127.0.0.1/in-flight"), "127.0.0.1", "f0")
    in_flight = queue.pop("127.0.0.1")
    filler = disk / "filler"
    filler.write_bytes(bytes(16 * 2**20 - 100_000))

    def fill() -> None:
        for i in range(1, 10_000):
            queue.push(Request(f"http://127.0.0.1/{i}?{'x' * 500}"), "127.0.0.1", f"f{i}")

    with pytest.raises(FrontierError, match="database or disk is full"):
        fill()
    filler.unlink()  # room again, but the links the page in flight found may be lost
    queue.settle(())  # the engine is done with it
    queue.close()
    resumed = DiskQueue(disk / "requests.queue", crawler)
    assert in_flight.url in {resumed.pop("127.0.0.1").url for _ in range(len(resumed))}
    resumed.close()


def test_a_jobdir_another_crawl_holds_is_refused(site, site_url, tmp_path):
    jobdir = tmp_path / "job"
    slow = ("DOWNLOAD_DELAY=0.2", *ONE_AT_A_TIME)
    first = start_scrapy(
        *crawl_command(site_url, site, tmp_path / "first", f"JOBDIR={jobdir}", *slow),
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not read_jsonl(tmp_path / "first" / "fetch.jsonl") and time.monotonic() < deadline:
        time.sleep(0.05)
    second = crawl_within(
        60, *crawl_command(site_url, site, tmp_path / "second", f"JOBDIR={jobdir}", *slow)
    )
    assert our_errors(second.stderr) == [
        line for line in second.stderr.splitlines() if "another crawl is using it" in line
    ]
    assert f"Cannot use JOBDIR {jobdir}: another crawl is using it" in second.stderr
    assert "'finish_reason': 'jobdir_error'" in second.stderr
    assert second.returncode == 1
    assert not read_jsonl(tmp_path / "second" / "fetch.jsonl")
    assert not (jobdir / "spider.state").exists(), "the refused crawl wrote the other's state"
    first.send_signal(signal.SIGINT)  # the running crawl pauses, as it would have anyway
    _, stderr = first.communicate(timeout=120)
    assert "'finish_reason': 'shutdown'" in stderr, stderr[-3000:]
    assert (jobdir / "spider.state").exists()
    fetched = paths(read_jsonl(tmp_path / "first" / "fetch.jsonl"))
    assert len(fetched) == len(set(fetched))


def test_a_jobdir_started_with_other_keywords_is_refused(site, site_url, tmp_path):
    """Its queued requests were scored with its own keywords, and what it learned of
    relevance too: resumed with others it would go on fetching the old topic's pages."""
    jobdir = tmp_path / "job"
    first = scrapy(
        *crawl_command(site_url, site, tmp_path, f"JOBDIR={jobdir}", "CLOSESPIDER_PAGECOUNT=6")
    )
    assert first.returncode == 0, first.stderr[-2000:]
    fetched = read_jsonl(tmp_path / "fetch.jsonl")
    other = scrapy(
        *crawl_command(site_url, site, tmp_path, f"JOBDIR={jobdir}", keywords="旅游:3,景点:2")
    )
    assert_stopped(other, f"JOBDIR {jobdir} was started with other keywords:", "jobdir_error")
    assert f"Resume it with -a keywords={jobdir / 'keywords.txt'}" in other.stderr
    assert read_jsonl(tmp_path / "fetch.jsonl") == fetched
    same = scrapy(
        *crawl_command(
            site_url, site, tmp_path, f"JOBDIR={jobdir}", keywords=str(jobdir / "keywords.txt")
        )
    )
    assert "'finish_reason': 'finished'" in same.stderr, same.stderr[-2000:]
    assert len(read_jsonl(tmp_path / "fetch.jsonl")) > len(fetched) + 10


def test_a_damaged_jobdir_is_refused_in_one_line(site, site_url, tmp_path):
    """A frontier file cut to nothing was read as an empty frontier: the crawl ended at once,
    'finished'. An ``active.json`` cut short (Scrapy writes it at close) stopped every start
    with tracebacks; the queue keeps its own state and does not read it. A ``spider.state``
    cut short is said in a warning, and the crawl resumes without what it learned."""
    jobdir = tmp_path / "job"
    command = crawl_command(site_url, site, tmp_path, f"JOBDIR={jobdir}")
    first = scrapy(*command, "-s", "CLOSESPIDER_PAGECOUNT=6")
    assert first.returncode == 0, first.stderr[-2000:]
    queue = jobdir / "requests.queue"
    (queue / "active.json").write_text("")
    cut = scrapy(*command, "-s", "CLOSESPIDER_PAGECOUNT=8")
    assert "Traceback" not in cut.stderr, cut.stderr[-3000:]
    assert "'finish_reason': 'closespider_pagecount'" in cut.stderr

    (jobdir / "spider.state").write_bytes(b"\x80\x04")  # cut short by a full disk
    state_cut = scrapy(*command, "-s", "CLOSESPIDER_PAGECOUNT=10")
    assert "Traceback" not in state_cut.stderr, state_cut.stderr[-3000:]
    assert "Cannot read the spider's state in" in state_cut.stderr
    assert "'finish_reason': 'closespider_pagecount'" in state_cut.stderr

    (queue / "frontier.sqlite3").write_bytes(b"")
    emptied = scrapy(*command)
    message = f"Cannot use the frontier {queue / 'frontier.sqlite3'} (JOBDIR)"
    assert_stopped(emptied, message, "jobdir_error")


def test_a_read_only_jobdir_is_refused_in_one_line(site, site_url, tmp_path, small_fs):
    disk = small_fs("4m")
    jobdir = disk / "job"
    command = crawl_command(site_url, site, tmp_path, f"JOBDIR={jobdir}")
    first = scrapy(*command, "-s", "CLOSESPIDER_PAGECOUNT=6")
    assert first.returncode == 0, first.stderr[-2000:]
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    read_only = scrapy(*command)
    message = f"Cannot use JOBDIR {jobdir}: [Errno 30] Read-only file system"
    assert_stopped(read_only, message, "jobdir_error")
    assert "Engine slot not assigned" not in read_only.stderr


def test_a_jobdir_that_cannot_be_made_is_refused_in_one_line(site, site_url, tmp_path, small_fs):
    """Scrapy's SpiderState made the folder as the spider opened: a traceback of forty
    lines, ``Task exception was never retrieved``."""
    disk = small_fs("4m")
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    (tmp_path / "seeds.txt").write_text("a file, not a folder")
    for jobdir, reason in (
        (tmp_path / "seeds.txt" / "job", "[Errno 20] Not a directory"),
        (disk / "job", "[Errno 30] Read-only file system"),
    ):
        result = scrapy(*crawl_command(site_url, site, tmp_path, f"JOBDIR={jobdir}"))
        assert result.returncode == 2, result.stderr[-2000:]
        assert result.stderr.endswith(
            f"\ntopicspider: error: Cannot use JOBDIR {jobdir}: {reason}\n"
        )
        assert "Traceback" not in result.stderr


class ManyLinks(Handler):
    """Pages of a thousand long links on topic each: a few of them spill more than the 2 MB
    SQLite keeps in its cache before it writes its temporary file."""

    def do_GET(self) -> None:
        page = self.path.split("?")[0].rstrip("/")
        links = "".join(
            f'<li><a href="{page}/{i}?{"q" * 1500}">足球比赛 {i}</a></li>' for i in range(1000)
        )
        self.send(f"<title>足球</title><p>足球比赛新闻</p><ul>{links}</ul>".encode())


def test_a_full_temporary_folder_stops_a_crawl_without_jobdir_in_one_line(tmp_path, small_fs):
    disk = small_fs("4m")
    (disk / "filler").write_bytes(bytes(4 * 2**20 - 50_000))
    with serving(ManyLinks) as url:
        result = subprocess.run(
            [
                *SCRAPY,
                *topic_args(
                    f"{url}/",
                    "足球:3,比赛:2",
                    f"TOPIC_PAGES_DIR={tmp_path / 'pages'}",
                    "TOPIC_QUEUE_MEMORY_LIMIT=10",
                    "TOPIC_PROGRESS_INTERVAL=0",
                    "LOG_LEVEL=INFO",
                ),
            ],
            cwd=ROOT,
            env={**SCRAPY_ENV, "SQLITE_TMPDIR": str(disk)},
            capture_output=True,
            text=True,
            timeout=120,
        )
    message = "Cannot use the frontier's temporary file (TMPDIR): database or disk is full"
    assert_stopped(result, message, "frontier_error")
