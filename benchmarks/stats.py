"""A stats collector that leaves the crawl's final stats in a JSON file for the benchmark.

Set through ``STATS_CLASS``, so the crawl under test runs its own settings unchanged.
It adds ``bench/cpu_seconds``: the process's CPU time from spider open to close, a
figure that other load on the machine disturbs far less than pages per second.
"""

from __future__ import annotations

import json
import resource
from typing import Any

from scrapy.statscollectors import MemoryStatsCollector


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class JsonStatsCollector(MemoryStatsCollector):
    """Writes the final stats to ``BENCH_STATS_FILE``."""

    def open_spider(self, spider: Any = None) -> None:
        super().open_spider(spider)
        self._cpu_started = _cpu_seconds()

    def _persist_stats(self, stats: dict[str, Any]) -> None:
        super()._persist_stats(stats)
        stats["bench/cpu_seconds"] = round(_cpu_seconds() - self._cpu_started, 3)
        path = self._crawler.settings.get("BENCH_STATS_FILE")
        if path:
            with open(path, "w", encoding="utf-8") as file:
                json.dump(stats, file, default=str)
