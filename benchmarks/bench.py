"""``make bench``: topicspider's crawl against a plain Scrapy crawl of the same local site.

Serves the generated benchmark site (:mod:`benchmarks.site`) with nginx, then runs,
alternating, the plain spider (:mod:`benchmarks.plain`), ``scrapy crawl topic`` with
the project's default settings, and the same as one worker of a crawl in Redis
(``REDIS_URL``: a redis-server the bench starts on a free 127.0.0.1 port and stops after),
each for the same number of pages, each in its own process (pages/s from the crawl's own
stats, peak RSS from the kernel, Redis's CPU time from its ``INFO``). Scoring cost per
page is the spider's ``topic/scoring_seconds`` stat if it keeps one, else timed offline
on pages of the same site. The last line printed is one JSON object.

``--site DIR --keywords NAME`` runs the same crawls on a folder of your own pages (its
``index.html`` is the seed) instead of the generated site. ``--profile`` instead runs one
topic crawl under cProfile and prints where its time goes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from benchmarks.nginx import serve
from benchmarks.site import write_site
from tests.redis_server import RedisServer  # the tests' throwaway redis-server

ROOT = Path(__file__).resolve().parent.parent
RUN_DIR = ROOT / ".run"
KEYWORDS = "sports"


def crawl(
    kind: str,
    url: str,
    pages: int,
    workdir: Path,
    python_args: Sequence[str] = (),
    settings: Sequence[str] = (),
    keywords: str = KEYWORDS,
) -> dict:
    """Run one crawl (``plain`` or ``topic``) in a child process with extra ``NAME=value``
    settings; return its pages/s, CPU time per page, peak RSS and stats."""
    stats_file = workdir / f"{kind}-stats.json"
    common = [
        "-s", f"CLOSESPIDER_PAGECOUNT={pages}",
        "-s", "STATS_CLASS=benchmarks.stats.JsonStatsCollector",
        "-s", f"BENCH_STATS_FILE={stats_file}",
        "-s", f"LOG_FILE={workdir / f'{kind}.log'}",
    ]  # fmt: skip
    if kind == "plain":
        command = ["runspider", str(ROOT / "benchmarks" / "plain.py"), "-a", f"seeds={url}"]
    else:
        command = ["crawl", "topic", "-a", f"seeds={url}", "-a", f"keywords={keywords}"]
        common += ["-s", f"TOPIC_PAGES_DIR={workdir / 'pages'}"]
    for setting in settings:
        common += ["-s", setting]
    process = subprocess.Popen(
        [sys.executable, *python_args, "-m", "scrapy", *command, *common], cwd=ROOT
    )
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise RuntimeError(f"{kind} crawl failed ({process.returncode}); see {workdir}")
    stats = json.loads(stats_file.read_text())
    fetched = stats.get("response_received_count", 0)
    elapsed = stats["elapsed_time_seconds"]
    return {
        "kind": kind,
        "pages": fetched,
        "seconds": round(elapsed, 2),
        "pages_per_s": round(fetched / elapsed, 1),
        "cpu_ms_per_page": round(1000 * stats["bench/cpu_seconds"] / fetched, 3),
        "worker_cpu_ms_per_page": round(
            1000 * stats.get("bench/worker_cpu_seconds", 0.0) / fetched, 3
        ),
        "rss_mb": round(usage.ru_maxrss / 1024, 1),
        "load": round(os.getloadavg()[0], 2),
        "stats": stats,
    }


@contextlib.contextmanager
def redis_server(folder: Path) -> Iterator[RedisServer]:
    """A redis-server on a free 127.0.0.1 port with its files in ``folder``, stopped on exit."""
    folder.mkdir()
    server = RedisServer(folder)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def redis_cpu_seconds(server: RedisServer) -> float:
    cpu = server.client().info("cpu")
    return cpu["used_cpu_user"] + cpu["used_cpu_sys"]


def score_cost(site: Path, sample: int, keywords: str) -> dict[str, float]:
    """Milliseconds per page to extract text and links, and to score the page and its links,
    timed offline over ``sample`` pages of the site with a fresh scorer."""
    from topicspider import settings
    from topicspider.keywords import load_keywords
    from topicspider.relevance import BestFirst, LinkCandidate, Relevance, link_text
    from topicspider.text import extract_page, parse_html

    relevance = Relevance(load_keywords(keywords))
    strategy = BestFirst(
        {
            "anchor": settings.TOPIC_ANCHOR_WEIGHT,
            "parent": settings.TOPIC_PARENT_WEIGHT,
            "pattern": settings.TOPIC_PATTERN_WEIGHT,
        },
    )
    files = sorted(site.rglob("*.html"), key=lambda path: path.stat().st_ino)[:sample]
    extract = score = 0.0
    for path in files:
        started = time.perf_counter()
        page = extract_page(
            parse_html(path.read_bytes()),
            f"http://127.0.0.1/{path.relative_to(site).as_posix()}",
            context_chars=settings.TOPIC_CONTEXT_CHARS,
            max_chars=settings.TOPIC_MAX_TEXT_CHARS,
        )
        extracted = time.perf_counter()
        page_relevance = relevance.page(page.title, page.body)
        for link in page.links.values():
            anchor = relevance.text(link_text(link))
            strategy.score(LinkCandidate(anchor, 1, page_relevance, navigation=link.navigation))
        score += time.perf_counter() - extracted
        extract += extracted - started
    return {
        "extract_ms_per_page": round(1000 * extract / len(files), 3),
        "score_ms_per_page": round(1000 * score / len(files), 3),
    }


def profile(url: str, pages: int, workdir: Path, top: int, keywords: str) -> None:
    """One topic crawl under cProfile (kept in ``.run/topic.prof``): the top functions
    by own and by cumulative time, and topicspider's own functions."""
    output = RUN_DIR / "topic.prof"
    python_args = ["-m", "cProfile", "-o", str(output)]
    crawl("topic", url, pages, workdir, python_args=python_args, keywords=keywords)
    views = [("tottime", top), ("cumulative", top), ("cumulative", "/topicspider/")]
    for order, restriction in views:
        print(f"--- {restriction} by {order} ---", flush=True)
        pstats.Stats(str(output)).sort_stats(order).print_stats(restriction, top)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=3000, help="pages per crawl")
    parser.add_argument("--runs", type=int, default=2, help="crawls of each kind")
    parser.add_argument("--site-pages", type=int, default=20_000)
    parser.add_argument("--site", type=Path, help="a folder of pages to crawl instead")
    parser.add_argument("--keywords", default=KEYWORDS, help="the topic crawl's keywords")
    parser.add_argument("--sample", type=int, default=1000, help="pages timed offline")
    parser.add_argument(
        "--spill-limit",
        type=int,
        default=0,
        help="also crawl with TOPIC_QUEUE_MEMORY_LIMIT set to this (topic_spill)",
    )
    parser.add_argument("--profile", action="store_true", help="profile one topic crawl")
    parser.add_argument("--top", type=int, default=30, help="functions shown by --profile")
    args = parser.parse_args(argv)

    site = args.site or write_site(RUN_DIR / "bench-site", args.site_pages)
    if not (site / "index.html").is_file():
        parser.error(f"--site {site}: no index.html to start from")
    RUN_DIR.mkdir(exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="bench-", dir=RUN_DIR) as tmp,
        serve(site, Path(tmp) / "nginx") as url,
    ):
        if args.profile:
            profile(url, args.pages, Path(tmp), args.top, args.keywords)
            return
        with redis_server(Path(tmp) / "redis") as redis:
            results = run_crawls(args, url, Path(tmp), redis)
    report(args, results, score_cost(site, args.sample, args.keywords))


def run_crawls(
    args: argparse.Namespace, url: str, tmp: Path, redis: RedisServer
) -> dict[str, list[dict]]:
    """``args.runs`` rounds of one crawl of each kind; each crawl's figures, by kind."""
    kinds: dict[str, list[str]] = {
        "plain": [],
        "topic": [],
        "topic_redis": [f"REDIS_URL={redis.url}"],
    }
    if args.spill_limit:
        kinds["topic_spill"] = [
            "SCHEDULER_MEMORY_QUEUE=topicspider.pqueues.SpillQueue",
            f"TOPIC_QUEUE_MEMORY_LIMIT={args.spill_limit}",
        ]
    results: dict[str, list[dict]] = {kind: [] for kind in kinds}
    for run in range(args.runs):
        for kind, settings in kinds.items():
            workdir = tmp / f"{kind}-{run}"
            workdir.mkdir()
            if kind == "topic_redis":  # a new crawl each time, not the last one resumed
                settings = [*settings, f"TOPIC_CRAWL_ID=bench-{run}"]
            redis_cpu = redis_cpu_seconds(redis)
            result = crawl(
                kind.split("_")[0],
                url,
                args.pages,
                workdir,
                settings=settings,
                keywords=args.keywords,
            )
            result["kind"] = kind
            stats = result.pop("stats")
            if kind != "plain":
                result["accepted"] = stats.get("topic/accepted", 0)
                if "topic/scoring_seconds" in stats:  # if the spider times its scoring
                    result["score_ms_per_page"] = round(
                        1000 * stats["topic/scoring_seconds"] / result["pages"], 3
                    )
                result["spilled"] = stats.get("topic/queue/spilled", 0)
            if kind == "topic_redis":
                result["redis_server_cpu_ms_per_page"] = round(
                    1000 * (redis_cpu_seconds(redis) - redis_cpu) / result["pages"], 3
                )
            results[kind].append(result)
            print(json.dumps(result), flush=True)
    return results


def report(args: argparse.Namespace, results: dict[str, list[dict]], cost: dict) -> None:
    """Print the summary line: means over the runs of each kind, and their ratios."""

    def mean(kind: str, figure: str, digits: int) -> float:
        return round(statistics.mean(r[figure] for r in results[kind]), digits)

    in_crawl = [r["score_ms_per_page"] for r in results["topic"] if "score_ms_per_page" in r]
    if in_crawl:  # the crawl's own figure wins over the offline one
        cost["score_ms_per_page_offline"] = cost["score_ms_per_page"]
        cost["score_ms_per_page"] = round(statistics.mean(in_crawl), 3)
    spill = {}
    if args.spill_limit:
        spill["topic_spill_pages_per_s"] = mean("topic_spill", "pages_per_s", 1)
        spill["topic_spill_cpu_ms_per_page"] = mean("topic_spill", "cpu_ms_per_page", 3)
    plain = statistics.mean(r["pages_per_s"] for r in results["plain"])
    topic = statistics.mean(r["pages_per_s"] for r in results["topic"])
    redis = statistics.mean(r["pages_per_s"] for r in results["topic_redis"])
    plain_cpu = statistics.mean(r["cpu_ms_per_page"] for r in results["plain"])
    topic_cpu = statistics.mean(r["cpu_ms_per_page"] for r in results["topic"])
    print(
        json.dumps(
            {
                "site": str(args.site or "generated"),
                "keywords": args.keywords,
                "pages": args.pages,
                "runs": args.runs,
                "plain_pages_per_s": round(plain, 1),
                "topic_pages_per_s": round(topic, 1),
                "throughput_ratio": round(topic / plain, 3),
                "plain_cpu_ms_per_page": round(plain_cpu, 3),
                "topic_cpu_ms_per_page": round(topic_cpu, 3),
                "cpu_ratio": round(plain_cpu / topic_cpu, 3),
                "redis_pages_per_s": round(redis, 1),
                "redis_ratio": round(redis / plain, 3),
                "redis_vs_topic": round(redis / topic, 3),
                "redis_cpu_ms_per_page": mean("topic_redis", "cpu_ms_per_page", 3),
                "redis_server_cpu_ms_per_page": mean(
                    "topic_redis", "redis_server_cpu_ms_per_page", 3
                ),
                **cost,
                "rss_mb_plain": max(r["rss_mb"] for r in results["plain"]),
                "rss_mb_topic": max(r["rss_mb"] for r in results["topic"]),
                "rss_mb_redis": max(r["rss_mb"] for r in results["topic_redis"]),
                **spill,
                "cpus": os.cpu_count(),
                "load": round(os.getloadavg()[0], 2),
            }
        )
    )


if __name__ == "__main__":
    main()
