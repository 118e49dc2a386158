"""``make bench`` and ``make bench-frontier`` run to their summary line.

Their figures are measured by running them, never asserted here; these runs are small
so that a change to the code they drive cannot break them unnoticed.
"""

import json
import subprocess
import sys
from pathlib import Path

from benchmarks.site import write_site

ROOT = Path(__file__).resolve().parent.parent


def run(module: str, *args: str) -> list[dict]:
    result = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def test_bench_compares_the_three_crawls_and_times_the_scoring(tmp_path):
    site = write_site(tmp_path / "site", 300)
    *crawls, summary = run(
        "benchmarks.bench", "--site", str(site), "--pages", "60", "--runs", "1", "--sample", "50"
    )
    assert sorted(crawl["kind"] for crawl in crawls) == ["plain", "topic", "topic_redis"]
    assert all(crawl["pages"] >= 60 for crawl in crawls)
    for figure in ("topic_pages_per_s", "redis_pages_per_s", "extract_ms_per_page"):
        assert summary[figure] > 0
    assert summary["score_ms_per_page"] > 0


def test_bench_frontier_measures_dedup_and_both_queues():
    *_, summary = run(
        "benchmarks.frontier",
        *("--urls", "20000", "--queued", "5000", "--spilled", "5000", "--limit", "1000"),
    )
    assert set(summary["bytes_per_seen_url"]) == {"exact", "bloom"}
    assert set(summary["bytes_per_queued_request"]) == {"memory", "spill"}
