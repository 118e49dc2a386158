"""kill -9 a crawl running with JOBDIR at a random moment, run the same command again:
it finishes, no accepted page is missing from the index or in it twice, and no page is
fetched twice except the ones in flight at the kill; with either dupefilter."""

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

from tests.test_spider import (
    ONE_AT_A_TIME,
    crawl_command,
    paths,
    read_jsonl,
    scrapy,
    start_scrapy,
)


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
        queued = {
            urlsplit(pickle.loads(blob)["url"]).path
            for (blob,) in frontier.execute("SELECT request FROM frontier")
        }
    assert queued, "nothing was queued at the kill"

    resumed = scrapy(*command)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    rows = read_jsonl(out / "fetch.jsonl")
    fetched = paths(rows)
    twice = [path for path, n in Counter(fetched).items() if n > 1]
    assert len(twice) <= 1, f"fetched twice, more than the request in flight: {twice}"
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
