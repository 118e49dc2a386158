"""Analysis worker processes: the same verdicts as on the reactor thread, and a worker that
dies loses no page. The crawl's children (workers and page writer) outlive a Ctrl-C or SIGTERM
sent to the whole process group, and exit once the crawl is gone."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from demo.crawl import SCRAPY, topic_args
from tests.httpserver import Handler, serving
from tests.processes import children_of
from tests.test_analysis import KEYWORDS, PAGE
from tests.test_spider import (
    ONE_AT_A_TIME,
    ROOT,
    SCRAPY_ENV,
    crawl_command,
    paths,
    read_jsonl,
    scrapy_side_by_side,
    start_scrapy,
)
from tests.test_spider_focus import page
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
        [sys.executable, "-m", "topicspider.analysis"],
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


def crawls(site_url, site, runs: dict[Path, tuple[str, ...]]) -> list[tuple[list, list]]:
    """One crawl per folder, with its settings, all run at once: each one's fetch log and
    index."""
    results = scrapy_side_by_side(
        *(
            crawl_command(site_url, site, out, *ONE_AT_A_TIME, *settings)
            for out, settings in runs.items()
        )
    )
    for result in results:
        assert result.returncode == 0, result.stderr[-3000:]
    return [
        (read_jsonl(out / "fetch.jsonl"), read_jsonl(out / "pages" / "index.jsonl")) for out in runs
    ]


def test_pages_judged_in_a_worker_as_on_the_reactor_thread(site, site_url, tmp_path):
    (in_worker, stored_by_worker), (inline, stored_inline) = crawls(
        site_url,
        site,
        {tmp_path / "worker": (), tmp_path / "inline": ("TOPIC_ANALYSIS_PROCESSES=0",)},
    )
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
        (worker,) = children_of(process.pid, "topicspider.analysis")
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


def crawl_with(tmp_path: Path, sitecustomize: str, culprit: str, *settings: str):
    """Crawl a home page linking to ``culprit`` and eight football articles, with a
    ``sitecustomize`` on the path of every process of the crawl."""
    article = page("足球比赛", f"<p>{'昨晚的足球比赛非常精彩，主队连进两球锁定胜局。' * 3}</p>")
    links = f'<a href="/{culprit}">足球比赛</a>' + "".join(
        f'<p><a href="/a{n}.html">足球比赛报道{n}</a></p>' for n in range(1, 9)
    )

    class Site(Handler):
        def do_GET(self) -> None:
            if self.path == "/robots.txt":
                self.send(b"", status=404)
            elif self.path == "/":
                self.send(page("足球比赛首页", links).encode())
            else:
                self.send(article.encode())

    (tmp_path / "custom").mkdir()
    (tmp_path / "custom" / "sitecustomize.py").write_text(sitecustomize)
    out = tmp_path / "out"
    with serving(Site) as url:
        crawl = subprocess.run(
            [
                *SCRAPY,
                *topic_args(
                    f"{url}/",
                    "足球:3,比赛:2",
                    f"TOPIC_PAGES_DIR={out / 'pages'}",
                    f"TOPIC_FETCH_LOG={out / 'fetch.jsonl'}",
                    "TOPIC_DUPLICATE_DISTANCE=-1",  # the articles are alike
                    "CONCURRENT_REQUESTS_PER_DOMAIN=8",
                    *settings,
                ),
            ],
            cwd=ROOT,
            env={**SCRAPY_ENV, "PYTHONPATH": f"{tmp_path / 'custom'}{os.pathsep}{ROOT}"},
            capture_output=True,
            text=True,
            timeout=240,
        )
    return url, crawl.returncode, crawl.stderr, paths(read_jsonl(out / "pages" / "index.jsonl"))


#: Loaded by every Python process of the crawl it is on the path of: its analysis worker,
#: handed the poisoned page, dies a second later, as one the kernel's OOM killer stops.
POISON = """
import os, signal, time
import topicspider.analysis as analysis

def analyze(self, url, *args, _analyze=analysis.Analyzer.analyze, **kwargs):
    if "poison" in url:
        time.sleep(1)
        os.kill(os.getpid(), signal.SIGKILL)
    return _analyze(self, url, *args, **kwargs)

analysis.Analyzer.analyze = analyze
"""


def test_a_page_that_kills_two_workers_fails_alone(tmp_path):
    """The pages waiting behind it in the worker's hands go to the next worker with their
    try intact. Before, each of them had used one, and those behind it again when it killed
    the second worker failed with it: on-topic pages lost."""
    url, returncode, log, stored = crawl_with(tmp_path, POISON, "poison.html")
    assert returncode == 0, log[-3000:]
    assert log.count("An analysis worker died analyzing") == 1
    assert f"Could not analyze {url}/poison.html" in log
    assert "'topic/skipped/analysis_failed': 1," in log
    assert {f"/a{n}.html" for n in range(1, 9)} <= set(stored)


#: As POISON, but the worker handed the page never finishes it.
HANG = """
import time
import topicspider.analysis as analysis

def analyze(self, url, *args, _analyze=analysis.Analyzer.analyze, **kwargs):
    if "hang" in url:
        time.sleep(3600)
    return _analyze(self, url, *args, **kwargs)

analysis.Analyzer.analyze = analyze
"""


def test_a_page_a_worker_never_finishes_fails_alone_at_the_timeout(tmp_path):
    """Before, the worker was waited on for good: the crawl never ended."""
    url, returncode, log, stored = crawl_with(
        tmp_path, HANG, "hang.html", "TOPIC_ANALYSIS_TIMEOUT=3"
    )
    assert returncode == 0, log[-3000:]
    assert log.count("The analysis worker took over 3 s on one request; killing it") == 1
    assert f"Could not analyze {url}/hang.html: the analysis worker took over 3 s on it" in log
    assert "'topic/skipped/analysis_failed': 1," in log
    assert {f"/a{n}.html" for n in range(1, 9)} <= set(stored)


def slow_site(delay: float) -> type[Handler]:
    """Chinese football pages 0.html to 199.html, each answered after ``delay`` seconds and
    linking to five others; ``in_hand`` counts the requests being answered."""

    class SlowSite(Handler):
        in_hand = 0
        lock = threading.Lock()

        def do_GET(self) -> None:
            if self.path == "/robots.txt":
                self.send(b"", status=404)
                return
            with self.lock:
                SlowSite.in_hand += 1
            try:
                time.sleep(delay)
                n = int(self.path.strip("/").removesuffix(".html") or 0)
                links = "".join(
                    f'<a href="/{(n * 7 + k) % 200}.html">足球比赛{k}</a>' for k in range(5)
                )
                page = (
                    f"<html><head><meta charset='utf-8'><title>足球比赛 {n}</title></head>"
                    f"<body><p>第{n}场足球比赛：球迷看主队进球，联赛冠军。</p>{links}</body></html>"
                )
                self.send(page.encode(), "text/html; charset=utf-8")
            finally:
                with self.lock:
                    SlowSite.in_hand -= 1

    return SlowSite


def group_members(pgid: int) -> list[int]:
    """Process ids of the live (not zombie) processes of process group ``pgid``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            state, _, group = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue
        if int(group) == pgid and state != "Z":
            found.append(int(entry.name))
    return found


def start_slow_crawl(seed: str, out: Path) -> subprocess.Popen:
    """A crawl of the slow site in a process group of its own (as a shell starts a job),
    its log in ``out/log``; every page above the fixed threshold is stored."""
    command = topic_args(
        seed,
        "足球:3,比赛:2",
        f"TOPIC_PAGES_DIR={out / 'pages'}",
        f"TOPIC_FETCH_LOG={out / 'fetch.jsonl'}",
        "TOPIC_THRESHOLD_MODE=fixed",
        "TOPIC_THRESHOLD=0.05",
        "TOPIC_DUPLICATE_DISTANCE=-1",
        "CONCURRENT_REQUESTS_PER_DOMAIN=4",
        "LOG_LEVEL=INFO",
        "TOPIC_PROGRESS_INTERVAL=0",
    )
    out.mkdir()
    with open(out / "log", "w") as log:
        return start_scrapy(*command, stderr=log, start_new_session=True)


def wait_for(condition, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_to_the_process_group_stores_every_page_in_flight(tmp_path, signum):
    """A terminal sends Ctrl-C to the crawl and its children alike; the children stay until
    the crawl has finished the requests in flight and closed them."""
    site = slow_site(1.0)
    with serving(site) as url:
        out = tmp_path / "out"
        process = start_slow_crawl(f"{url}/0.html", out)
        try:
            wait_for(lambda: len(read_jsonl(out / "fetch.jsonl")) >= 3 and site.in_hand >= 2)
            fetched_before = len(read_jsonl(out / "fetch.jsonl"))
            os.killpg(process.pid, signum)
            assert process.wait(timeout=120) == 0
            wait_for(lambda: not group_members(process.pid), 15)
        finally:
            if process.poll() is None or group_members(process.pid):
                os.killpg(process.pid, signal.SIGKILL)
    log = (out / "log").read_text()
    assert "shutting down gracefully" in log
    assert "page writer exited" not in log
    assert "Traceback" not in log
    assert "KeyboardInterrupt" not in log
    rows = read_jsonl(out / "fetch.jsonl")
    assert len(rows) > fetched_before, "the requests in flight were not finished"
    stored = paths(read_jsonl(out / "pages" / "index.jsonl"))
    assert sorted(stored) == sorted(paths(row for row in rows if row["accepted"]))
    assert stored, "no page was accepted"


def test_children_exit_when_the_crawl_is_killed(tmp_path):
    """kill -9 leaves the children no one to close them: they see the end of their input."""
    with serving(slow_site(1.0)) as url:
        process = start_slow_crawl(f"{url}/0.html", tmp_path / "out")
        try:
            wait_for(lambda: len(children_of(process.pid, "topicspider.")) == 2)
            os.killpg(process.pid, signal.SIGINT)  # what the children ignore ...
            process.kill()  # ... and the crawl dies of at once
            process.wait(timeout=30)
            wait_for(lambda: not group_members(process.pid), 15)
        finally:
            if group_members(process.pid):
                os.killpg(process.pid, signal.SIGKILL)
