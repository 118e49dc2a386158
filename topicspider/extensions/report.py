"""``TOPIC_REPORT``: a harvest plot, a Markdown summary and the same numbers as JSON."""

from __future__ import annotations

import heapq
import importlib.util
import json
import logging
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from scrapy import signals
from scrapy.exceptions import NotConfigured

from topicspider.items import PageItem
from topicspider.signals import page_scored

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from typing_extensions import Self

logger = logging.getLogger(__name__)

#: How many of the most relevant pages the report lists.
TOP_PAGES = 20
#: Budgets at which the harvest rate is reported (those the crawl reached).
MILESTONES = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000)
#: Above this many pages the relevance scatter plots every n-th page only.
MAX_POINTS = 20_000


class Report:
    """Collects every scored page and, when the spider closes, writes ``harvest.png``,
    ``report.md`` and ``report.json`` into the ``TOPIC_REPORT`` folder.

    Per page it keeps nine bytes (accepted, relevance, threshold), so long crawls stay cheap; only
    the ``TOP_PAGES`` most relevant pages keep their URL and, once stored, their title.
    """

    def __init__(self, folder: Path, threshold: float) -> None:
        self.folder = folder
        self.threshold = threshold
        self.accepted = bytearray()
        self.relevance = array("f")
        #: The threshold each page's verdict used (it moves with TOPIC_THRESHOLD_MODE=adaptive).
        self.thresholds = array("f")
        self.depths: dict[int, list[int]] = {}  # depth -> [fetched, accepted]
        self.top: list[tuple[float, int, str, int, bool]] = []  # min-heap on relevance
        self.titles: dict[str, str] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        folder = crawler.settings.get("TOPIC_REPORT")
        if not folder:
            raise NotConfigured  # no message: being off is the normal case
        if importlib.util.find_spec("matplotlib") is None:
            raise NotConfigured("TOPIC_REPORT needs matplotlib: pip install matplotlib")
        extension = cls(Path(folder), crawler.settings.getfloat("TOPIC_THRESHOLD"))
        crawler.signals.connect(extension.page_scored, signal=page_scored)
        crawler.signals.connect(extension.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def page_scored(
        self,
        url: str,
        relevance: float,
        accepted: bool,
        depth: int,
        threshold: float | None = None,
        **_: Any,
    ) -> None:
        order = len(self.accepted)
        self.accepted.append(bool(accepted))
        self.relevance.append(relevance)
        if threshold is not None:
            self.threshold = threshold
        self.thresholds.append(self.threshold)
        counts = self.depths.setdefault(depth, [0, 0])
        counts[0] += 1
        counts[1] += bool(accepted)
        # Ties go to the page fetched first: -order is larger for earlier pages.
        entry = (relevance, -order, url, depth, bool(accepted))
        if len(self.top) < TOP_PAGES:
            heapq.heappush(self.top, entry)
        elif entry > self.top[0]:
            evicted = heapq.heapreplace(self.top, entry)
            self.titles.pop(evicted[2], None)

    def item_scraped(self, item: Any) -> None:
        # page_scored has no title; the item of an accepted page has, and comes after it.
        if isinstance(item, PageItem) and any(entry[2] == item.url for entry in self.top):
            self.titles[item.url] = item.title

    def spider_closed(self, spider: Spider, reason: str) -> None:
        figures = self.figures(spider.name, reason)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            (self.folder / "report.json").write_text(
                json.dumps(figures, ensure_ascii=False, indent=1) + "\n", "utf-8"
            )
            (self.folder / "report.md").write_text(markdown(figures), "utf-8")
            plot_harvest(
                self.folder / "harvest.png",
                np.frombuffer(self.accepted, dtype=np.uint8),
                np.asarray(self.relevance, dtype=float),
                np.asarray(self.thresholds, dtype=float),
                title=f"{spider.name}: {figures['accepted']} of {figures['fetched']} accepted",
            )
        except OSError as exc:
            logger.error("Cannot write the crawl report to %s: %s", self.folder, exc)
            return
        logger.info("Crawl report written to %s", self.folder)

    def figures(self, spider: str, reason: str) -> dict[str, Any]:
        fetched = len(self.accepted)
        accepted = sum(self.accepted)
        cumulative = np.cumsum(np.frombuffer(self.accepted, dtype=np.uint8))
        return {
            "spider": spider,
            "finish_reason": reason,
            "threshold": self.threshold,
            "fetched": fetched,
            "accepted": accepted,
            "dropped": fetched - accepted,
            "harvest_rate": _rate(accepted, fetched),
            "harvest_at": {
                str(n): _rate(int(cumulative[n - 1]), n) for n in MILESTONES if n <= fetched
            },
            "top_pages": [
                {
                    "url": url,
                    "title": self.titles.get(url),
                    "relevance": round(relevance, 4),
                    "depth": depth,
                    "accepted": was_accepted,
                }
                for relevance, _, url, depth, was_accepted in sorted(self.top, reverse=True)
            ],
            "depths": [
                {"depth": depth, "fetched": f, "accepted": a, "harvest_rate": _rate(a, f)}
                for depth, (f, a) in sorted(self.depths.items())
            ],
        }


def _rate(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|") if text not in (None, "") else "—"


def markdown(figures: dict[str, Any]) -> str:
    """``report.md``: the numbers of ``report.json`` for people."""
    lines = [
        f"# Crawl report: {figures['spider']}",
        "",
        f"Crawl ended ({figures['finish_reason']}): fetched {figures['fetched']} pages, accepted "
        f"{figures['accepted']}, dropped {figures['dropped']}; harvest rate "
        f"**{figures['harvest_rate']:.2f}** (threshold {figures['threshold']:g} at the end).",
        "",
        "![harvest curve](harvest.png)",
        "",
    ]
    if figures["harvest_at"]:
        budgets = figures["harvest_at"]
        lines += [
            "| first N pages | " + " | ".join(budgets) + " |",
            "|---|" + "---|" * len(budgets),
            "| harvest rate | " + " | ".join(f"{rate:.2f}" for rate in budgets.values()) + " |",
            "",
        ]
    lines += [
        f"## Top {len(figures['top_pages'])} pages by relevance",
        "",
        "| # | relevance | depth | accepted | title | URL |",
        "|---|---|---|---|---|---|",
    ]
    for rank, page in enumerate(figures["top_pages"], start=1):
        lines.append(
            f"| {rank} | {page['relevance']:.3f} | {page['depth']} "
            f"| {'yes' if page['accepted'] else 'no'} "
            f"| {_cell(page['title'])} | {_cell(page['url'])} |"
        )
    lines += [
        "",
        "## Pages by depth",
        "",
        "| depth | fetched | accepted | harvest rate |",
        "|---|---|---|---|",
    ]
    for row in figures["depths"]:
        lines.append(
            f"| {row['depth']} | {row['fetched']} | {row['accepted']} | {row['harvest_rate']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def plot_harvest(
    path: Path, accepted: np.ndarray, relevance: np.ndarray, thresholds: np.ndarray, title: str = ""
) -> None:
    """Three panels against pages fetched: harvest rate, pages accepted, relevance per page
    with the threshold each verdict used."""
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state

    fetched = np.arange(1, len(accepted) + 1)
    found = np.cumsum(accepted)
    figure = Figure(figsize=(9, 8), layout="constrained")
    rate_axes, count_axes, relevance_axes = figure.subplots(3, 1, sharex=True)
    rate_axes.plot(fetched, found / np.maximum(fetched, 1), color="tab:blue")
    rate_axes.set_ylim(0, 1.02)
    rate_axes.set_ylabel("harvest rate\n(accepted / fetched)")
    count_axes.plot(fetched, found, color="tab:green", label="accepted")
    count_axes.plot(fetched, fetched, color="grey", linestyle=":", label="every page accepted")
    count_axes.set_ylabel("pages accepted")
    count_axes.legend(loc="upper left")
    step = max(1, len(accepted) // MAX_POINTS)
    kept = accepted[::step].astype(bool)
    xs, ys = fetched[::step], relevance[::step]
    relevance_axes.scatter(xs[kept], ys[kept], s=6, color="tab:green", label="accepted")
    relevance_axes.scatter(xs[~kept], ys[~kept], s=6, color="tab:red", label="dropped")
    if len(thresholds):
        relevance_axes.scatter(
            xs,
            thresholds[::step],
            s=12,
            marker="_",
            color="black",
            label=f"threshold of the verdict (last {thresholds[-1]:.3g})",
        )
    relevance_axes.set_ylabel("page relevance")
    relevance_axes.set_xlabel("pages fetched")
    relevance_axes.legend(loc="upper right")
    for axes in (rate_axes, count_axes, relevance_axes):
        axes.grid(alpha=0.3)
    if title:
        figure.suptitle(title)
    figure.savefig(path, dpi=100)
