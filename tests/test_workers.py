"""Analysis worker processes: the same verdicts as on the reactor thread, and a worker that
dies loses no page."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.processes import children_of
from tests.test_analysis import KEYWORDS, PAGE
from tests.test_spider import (
    ONE_AT_A_TIME,
    ROOT,
    crawl_command,
    paths,
    read_jsonl,
    scrapy,
    start_scrapy,
)
from topicspider.analysis import Analyzer


def send(stream, message) -> None:
    data = pickle.dumps(message)
    stream.write(len(data).to_bytes(4, "big") + data)
    stream.flush()


def receive(stream):
    size = int.from_bytes(stream.read(4), "big")
    return pickle.loads(stream.read(size))


def test_a_worker_answers_in_order_reports_errors_and_exits_at_end_of_input():
    worker = subprocess.Popen(
        [sys.executable, "-m", "topicspider.workers"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        send(worker.stdin, {"keywords": KEYWORDS})
        send(worker.stdin, (7, ("http://127.0.0.1/a.html", PAGE.encode(), "text/html")))
        send(worker.stdin, (8, ("http://127.0.0.1/b.html", None, "text/html")))  # not bytes
        send(worker.stdin, (9, ("http://127.0.0.1/c.html", PAGE.encode(), "text/html")))
        first, broken, last = (receive(worker.stdout) for _ in range(3))
        worker.stdin.close()
        assert worker.wait(timeout=30) == 0
    finally:
        worker.kill()
    expected = Analyzer(KEYWORDS).analyze("http://127.0.0.1/a.html", PAGE.encode(), "text/html")
    assert first == (7, expected, None)
    assert broken[0] == 8
    assert broken[1] is None
    assert "Error" in broken[2]
    assert last[0] == 9
    assert last[1].relevance == expected.relevance
    assert "Traceback" in worker.stderr.read().decode()


def crawl(site_url, site, out: Path, *settings: str):
    result = scrapy(*crawl_command(site_url, site, out, *ONE_AT_A_TIME, *settings))
    assert result.returncode == 0, result.stderr[-3000:]
    return read_jsonl(out / "fetch.jsonl"), read_jsonl(out / "pages" / "index.jsonl")


def test_pages_judged_in_a_worker_as_on_the_reactor_thread(site, site_url, tmp_path):
    in_worker, stored_by_worker = crawl(site_url, site, tmp_path / "worker")
    inline, stored_inline = crawl(site_url, site, tmp_path / "inline", "TOPIC_ANALYSIS_PROCESSES=0")
    assert [(r["url"], r["relevance"], r["accepted"]) for r in in_worker] == [
        (r["url"], r["relevance"], r["accepted"]) for r in inline
    ]
    assert paths(stored_by_worker) == paths(stored_inline)
    assert set(paths(stored_inline)) >= site.on_topic - set(site.disallowed)


def test_a_worker_killed_with_a_page_in_hand_loses_nothing(site, site_url, serial_crawl, tmp_path):
    out = tmp_path / "out"
    command = crawl_command(site_url, site, out, *ONE_AT_A_TIME, "DOWNLOAD_DELAY=0.05")
    process = start_scrapy(*command, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(read_jsonl(out / "fetch.jsonl")) < 5 and time.monotonic() < deadline:
            time.sleep(0.02)
        (worker,) = children_of(process.pid, "topicspider.workers")
        os.kill(worker, signal.SIGSTOP)  # the next page waits in its hands
        time.sleep(1.5)
        os.kill(worker, signal.SIGKILL)
        _, log = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 0, log[-3000:]
    assert "An analysis worker died analyzing" in log
    assert "topic/skipped/analysis_failed" not in log
    rows = read_jsonl(out / "fetch.jsonl")
    assert set(paths(rows)) == serial_crawl
    stored = paths(read_jsonl(out / "pages" / "index.jsonl"))
    assert sorted(stored) == sorted(paths(row for row in rows if row["accepted"]))
