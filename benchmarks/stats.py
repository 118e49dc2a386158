"""A stats collector that leaves the crawl's final stats in a JSON file for the benchmark.

Set through ``STATS_CLASS``, so the crawl under test runs its own settings unchanged.
It adds ``bench/cpu_seconds``: the CPU time of the crawl and of its worker processes
from spider open to close, a figure that other load on the machine disturbs far less
than pages per second.
"""

from __future__ import annotations

import json
import resource
from typing import Any

from scrapy.statscollectors import MemoryStatsCollector


def _cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


class JsonStatsCollector(MemoryStatsCollector):
    """Writes the final stats to ``BENCH_STATS_FILE``."""

    def open_spider(self, spider: Any = None) -> None:
        super().open_spider(spider)
        self._cpu_started = _cpu_seconds(resource.RUSAGE_SELF)
        self._worker_cpu_started = _cpu_seconds(resource.RUSAGE_CHILDREN)

    def _persist_stats(self, stats: dict[str, Any]) -> None:
        super()._persist_stats(stats)
        crawl = _cpu_seconds(resource.RUSAGE_SELF) - self._cpu_started
        # The analysis workers have been joined at spider_closed, before this runs.
        workers = _cpu_seconds(resource.RUSAGE_CHILDREN) - self._worker_cpu_started
        stats["bench/cpu_seconds"] = round(crawl + workers, 3)
        stats["bench/worker_cpu_seconds"] = round(workers, 3)
        path = self._crawler.settings.get("BENCH_STATS_FILE")
        if path:
            with open(path, "w", encoding="utf-8") as file:
                json.dump(stats, file, default=str)
