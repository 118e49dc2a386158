"""``make bench-frontier``: memory per seen URL (dedup) and per queued request (frontier).

Each figure is measured in a fresh child process as the growth of its resident
memory (``VmRSS``) while the structure fills, so C allocations (SQLite, the bit
array) count as well as Python objects.

- Dedup: 10,000,000 synthetic URLs, SHA-1 fingerprinted as Scrapy's fingerprinter
  does, added to Scrapy's ``RFPDupeFilter`` set (``exact``) and to the Bloom filter
  (``bloom``, ``TOPIC_BLOOM_CAPACITY`` = the URL count, 0.1%).
- Frontier: requests as the topic spider makes them, pushed through
  ``ScorePriorityQueue`` into ``MemoryQueue`` (all in memory) and ``SpillQueue``
  (``TOPIC_QUEUE_MEMORY_LIMIT``). Fewer than 10 million (the memory queue would
  need tens of GB): the count is in the output, the figures are per request.
  For the spill queue, ``marginal`` is the memory per request past the limit.

The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import subprocess
import sys
from collections.abc import Callable

URLS = 10_000_000
QUEUED = 300_000  # the memory queue needs 1.5 kB each
SPILLED = 1_000_000


def rss() -> int:
    """Resident memory of this process in bytes."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def url(i: int) -> str:
    return f"http://site{i % 997}.example.com/section/{i // 997 % 50}/page-{i}.html"


def fingerprint(i: int) -> bytes:
    """A fingerprint of Scrapy's kind: 20 bytes of SHA-1 over the request."""
    return hashlib.sha1(  # noqa: S324 (Scrapy's fingerprint is SHA-1 too)
        f'{{"method":"GET","url":"{url(i)}","body":""}}'.encode()
    ).digest()


def measure_dedup(kind: str, count: int) -> dict:
    from scrapy.dupefilters import RFPDupeFilter

    from topicspider.bloom import BloomFilter

    gc.collect()
    before = rss()
    if kind == "exact":
        seen = RFPDupeFilter()._fingerprints  # what request_seen adds to
        add: Callable[[bytes], object] = seen.add
    else:
        bloom = BloomFilter.local(count, 0.001)
        add = bloom.add
    for i in range(count):
        add(fingerprint(i))
    gc.collect()
    return {"bytes_per_seen_url": round((rss() - before) / count, 2)}


def measure_queue(kind: str, count: int, limit: int) -> dict:
    from scrapy import Request, Spider
    from scrapy.utils.test import get_crawler

    from topicspider import settings as project_settings
    from topicspider.pqueues import MemoryQueue, ScorePriorityQueue, SpillQueue

    settings = {
        name: getattr(project_settings, name) for name in dir(project_settings) if name.isupper()
    }
    crawler = get_crawler(Spider, {**settings, "TOPIC_QUEUE_MEMORY_LIMIT": limit})
    crawler.spider = Spider("frontier")
    queue_cls = MemoryQueue if kind == "memory" else SpillQueue
    queue = ScorePriorityQueue.from_crawler(crawler, queue_cls, "")
    gc.collect()
    before = rss()
    half = None
    parent = url(0)
    for i in range(count):
        if i % 10 == 0:
            parent = url(i + 1_000_000_000)
        score = (i * 7919 % 10_007) / 10_007
        meta = {"topic_score": score, "topic_tunnel": 0, "topic_parent": parent, "depth": 3}
        queue.push(Request(url(i), meta=meta))
        if i + 1 == count // 2:
            gc.collect()
            half = rss()
    gc.collect()
    after = rss()
    assert len(queue) == count
    result = {
        "bytes_per_queued_request": round((after - before) / count, 1),
        "growth_mb_at_half": round((half - before) / 2**20, 1),
        "growth_mb": round((after - before) / 2**20, 1),
    }
    if kind == "spill":
        db = queue.queue._db
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        result["disk_bytes_per_spilled_request"] = round(
            pages * page_size / queue.queue._disk_length, 1
        )
        result["memory_limit"] = limit
    queue.close()
    return result


def child(*args: str) -> dict:
    output = subprocess.run(
        [sys.executable, "-m", "benchmarks.frontier", *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(output.splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=URLS, help="URLs for the dedup figures")
    parser.add_argument("--queued", type=int, default=QUEUED, help="requests, memory queue")
    parser.add_argument("--spilled", type=int, default=SPILLED, help="requests, spill queue")
    parser.add_argument("--limit", type=int, default=None, help="TOPIC_QUEUE_MEMORY_LIMIT")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # run in a child process
    args = parser.parse_args(argv)
    if args.limit is None:
        from topicspider.settings import TOPIC_QUEUE_MEMORY_LIMIT

        args.limit = TOPIC_QUEUE_MEMORY_LIMIT

    if args.measure in ("exact", "bloom"):
        print(json.dumps(measure_dedup(args.measure, args.urls)))
        return
    if args.measure in ("memory", "spill"):
        count = args.queued if args.measure == "memory" else args.spilled
        print(json.dumps(measure_queue(args.measure, count, args.limit)))
        return

    common = ["--urls", str(args.urls), "--limit", str(args.limit)]
    common += ["--queued", str(args.queued), "--spilled", str(args.spilled)]
    seen, queued = {}, {}
    for kind in ("exact", "bloom"):
        figures = child("--measure", kind, *common)
        seen[kind] = figures["bytes_per_seen_url"]
        print(json.dumps({"dedup": kind, "urls": args.urls, **figures}), flush=True)
    for kind, count in (("memory", args.queued), ("spill", args.spilled)):
        figures = child("--measure", kind, *common)
        queued[kind] = figures
        print(json.dumps({"queue": kind, "requests": count, **figures}), flush=True)
    spill = queued["spill"]
    print(
        json.dumps(
            {
                "urls": args.urls,
                "bytes_per_seen_url": seen,
                "bytes_per_queued_request": {
                    k: v["bytes_per_queued_request"] for k, v in queued.items()
                },
                "queued_requests_measured": {"memory": args.queued, "spill": args.spilled},
                "note": (
                    f"queues measured with fewer than {args.urls} requests: the memory queue grows"
                    f" {queued['memory']['bytes_per_queued_request']:.0f} B per request"
                    f" ({queued['memory']['bytes_per_queued_request'] * args.urls / 2**30:.1f} GiB"
                    f" for {args.urls}); the spill queue keeps {args.limit} in memory and grew"
                    f" {spill['growth_mb_at_half']} MB at {args.spilled // 2} requests,"
                    f" {spill['growth_mb']} MB at {args.spilled}, the rest on disk at"
                    f" {spill['disk_bytes_per_spilled_request']:.0f} B per request"
                ),
            }
        )
    )


if __name__ == "__main__":
    main()
