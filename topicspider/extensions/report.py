"""``TOPIC_REPORT``: a harvest plot, a Markdown summary and the same numbers as JSON."""

from __future__ import annotations

import heapq
import importlib
import io
import json
import logging
import os
import re
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from scrapy import signals
from scrapy.exceptions import NotConfigured

from topicspider.atomic import replace_all
from topicspider.extensions.jobstate import RUNS_KEY
from topicspider.items import PageItem
from topicspider.locks import hold
from topicspider.scheduler import JOBDIR_REASON
from topicspider.signals import page_scored
from topicspider.thresholds import threshold_from_settings
from topicspider.urlpatterns import without_session

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from typing_extensions import Self

logger = logging.getLogger(__name__)

#: How many of the most relevant pages the report lists.
TOP_PAGES = 20
#: Budgets at which the harvest rate is reported (those the crawl reached).
MILESTONES = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000)
#: Most pages the plot keeps: every n-th page, n doubling whenever they fill up.
MAX_POINTS = 20_000
#: The finish reason of a crawl stopped at once (a second Ctrl-C, SIGTERM or ``cancel.json``),
#: which never closes its spider.
FORCED_REASON = "forced_shutdown"
#: The file a running crawl holds locked in its report folder.
LOCK_NAME = ".lock"


class Harvest:
    """What the report knows of the crawl, in memory that does not grow with it: totals, the
    pages accepted by each milestone, fetched/accepted per depth, the ``TOP_PAGES`` most
    relevant pages (with their titles once stored) and, for the plot, every ``stride``-th page.

    It is picklable: with ``JOBDIR`` it is kept in ``spider.state``, so the report of a resumed
    crawl covers the runs before it too, as the fetch log does.
    """

    #: The crawl's runs (``JOBDIR``) it covers, numbered from 1 (a class attribute: a
    #: harvest a run of an older version pickled has none).
    runs: tuple[int, ...] = ()

    def __init__(self, threshold: float) -> None:
        #: The crawl's threshold at the last verdict (it moves with
        #: TOPIC_THRESHOLD_MODE=adaptive), not the lower one of a page a list of the topic names.
        self.threshold = threshold
        self.fetched = 0
        self.accepted = 0
        self.accepted_by: dict[int, int] = {}  # milestone -> accepted among the first pages
        self.depths: dict[int, list[int]] = {}  # depth -> [fetched, accepted]
        self.top: list[tuple[float, int, str, int, bool]] = []  # min-heap on relevance
        self.titles: dict[str, str] = {}
        #: Pages stride, 2·stride, …: accepted so far, verdict, relevance, verdict's threshold.
        self.stride = 1
        self.found = array("Q")
        self.verdicts = bytearray()
        self.relevance = array("f")
        self.thresholds = array("f")

    def add(
        self, url: str, relevance: float, accepted: bool, depth: int, threshold: float | None = None
    ) -> None:
        """``threshold``: the one the page's verdict used, if not the crawl's."""
        self.fetched += 1
        self.accepted += accepted
        if self.fetched in MILESTONES:
            self.accepted_by[self.fetched] = self.accepted
        counts = self.depths.setdefault(depth, [0, 0])
        counts[0] += 1
        counts[1] += accepted
        # Ties go to the page fetched first: -fetched is larger for earlier pages.
        entry = (relevance, -self.fetched, url, depth, accepted)
        if len(self.top) < TOP_PAGES:
            heapq.heappush(self.top, entry)
        elif entry > self.top[0]:
            evicted = heapq.heapreplace(self.top, entry)
            self.titles.pop(evicted[2], None)
        if self.fetched % self.stride == 0:
            self.found.append(self.accepted)
            self.verdicts.append(accepted)
            self.relevance.append(relevance)
            self.thresholds.append(self.threshold if threshold is None else threshold)
            if len(self.found) == MAX_POINTS:  # keep pages 2·stride, 4·stride, …
                for column in (self.found, self.verdicts, self.relevance, self.thresholds):
                    del column[::2]
                self.stride *= 2

    def add_title(self, url: str, title: str) -> None:
        if any(entry[2] == url for entry in self.top):
            self.titles[url] = title

    def figures(self, spider: str, reason: str) -> dict[str, Any]:
        return {
            "spider": spider,
            "finish_reason": reason,
            "runs": list(self.runs),  # of the crawl's runs, the last one being this run
            "crawl_runs": self.runs[-1] if self.runs else 0,  # 0: no JOBDIR
            "threshold": self.threshold,
            "fetched": self.fetched,
            "accepted": self.accepted,
            "dropped": self.fetched - self.accepted,
            "harvest_rate": _rate(self.accepted, self.fetched),
            "harvest_at": {str(n): _rate(a, n) for n, a in sorted(self.accepted_by.items())},
            "top_pages": [
                {
                    "url": url,
                    "title": self.titles.get(url),
                    "relevance": round(relevance, 4),
                    "depth": depth,
                    "accepted": accepted,
                }
                for relevance, _, url, depth, accepted in sorted(self.top, reverse=True)
            ],
            "depths": [
                {"depth": depth, "fetched": f, "accepted": a, "harvest_rate": _rate(a, f)}
                for depth, (f, a) in sorted(self.depths.items())
            ],
        }


class Report:
    """Collects every scored page into a :class:`Harvest` and, when the spider closes, writes
    ``harvest.png``, ``report.md`` and ``report.json`` into the ``TOPIC_REPORT`` folder.

    The folder is made and held when the spider opens, so that a folder the report cannot
    be written to, or that another running crawl will write its report to, is said at the
    start of the crawl, not hours later; the crawl goes on without a report."""

    def __init__(self, folder: Path, threshold: float) -> None:
        self.folder = folder
        self.harvest = Harvest(threshold)
        self.usable = True
        self._lock: int | None = None
        self._on_forced_stop: Any = None
        self._scored = False  # by this run

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        folder = crawler.settings.get("TOPIC_REPORT")
        if not folder:
            raise NotConfigured  # no message: being off is the normal case
        try:  # at the start, not as the crawl ends: a broken install fails here too
            importlib.import_module("matplotlib.figure")
        except ImportError as error:
            raise NotConfigured(
                f"TOPIC_REPORT needs matplotlib, which cannot be imported ({error}):"
                " pip install matplotlib"
            ) from None
        # The threshold a crawl starts with: the adaptive one's lowest, until pages raise it.
        extension = cls(Path(folder), threshold_from_settings(crawler.settings).value)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.page_scored, signal=page_scored)
        crawler.signals.connect(extension.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self, spider: Spider) -> None:
        """Resume the harvest a paused crawl left in ``spider.state``. Scrapy's ``SpiderState``
        (an extension of order 0, so its handler runs first) has loaded it from ``JOBDIR``, and
        pickles it there again when the spider closes.

        A crawl stopped at once never closes its spider: the reactor stopping writes the
        report of the pages scored until then."""
        state = getattr(spider, "state", None)
        if state is not None:
            self.harvest = state.setdefault("report", self.harvest)
            self.harvest.runs = (*self.harvest.runs, state.get(RUNS_KEY, 1))
        try:
            self._lock = _lock(self.folder)
        except OSError as exc:
            self.usable = False
            logger.error(
                "Cannot write the crawl report to %s (TOPIC_REPORT): %s; going on without it",
                self.folder.absolute(),
                exc,
            )
            return
        from twisted.internet import reactor

        self._on_forced_stop = reactor.addSystemEventTrigger(  # type: ignore[attr-defined]
            "before", "shutdown", self.write, spider.name, FORCED_REASON
        )

    def page_scored(
        self,
        url: str,
        relevance: float,
        accepted: bool,
        depth: int,
        threshold: float | None = None,
        listed: bool = False,
        **_: Any,
    ) -> None:
        if threshold is not None and not listed:
            self.harvest.threshold = threshold
        # As the item has it (the page's title comes with the item): without a session id.
        self.harvest.add(without_session(url), relevance, bool(accepted), depth, threshold)
        self._scored = True

    def item_scraped(self, item: Any) -> None:
        # page_scored has no title; the item of an accepted page has, and comes after it.
        if isinstance(item, PageItem):
            self.harvest.add_title(item.url, item.title)

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if self._on_forced_stop is not None:
            from twisted.internet import reactor

            reactor.removeSystemEventTrigger(self._on_forced_stop)  # type: ignore[attr-defined]
            self._on_forced_stop = None
        if reason == JOBDIR_REASON and not self._scored:
            # Refused at the start: the harvest is the other crawl's, and so is the report.
            self._release()
            return
        self.write(spider.name, reason)

    def write(self, spider: str, reason: str) -> None:
        """Write the report into the folder, then let it go."""
        if not self.usable:
            return
        figures = self.harvest.figures(spider, reason)
        title = f"{spider}: {figures['accepted']} of {figures['fetched']} accepted"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            replace_all(
                {
                    self.folder / "report.json": (
                        json.dumps(figures, ensure_ascii=False, indent=1) + "\n"
                    ).encode(),
                    self.folder / "report.md": markdown(figures).encode(),
                    self.folder / "harvest.png": plot_harvest(self.harvest, title),
                }
            )
        except OSError as exc:
            logger.error(
                "Cannot write the crawl report to %s (the report there is as it was): %s",
                self.folder.absolute(),
                exc,
            )
            return
        finally:
            self._release()
        logger.info("Crawl report written to %s", self.folder.absolute())

    def _release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None


def _lock(folder: Path) -> int:
    """Make ``folder`` and hold it for this crawl: two crawls at once would each write their
    report there at their end, the last one replacing the other's without a word."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise NotADirectoryError("it is a file, not a folder") from None
    return hold(folder / LOCK_NAME, "another running crawl writes its report there")


def _rate(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


#: What Markdown (GitHub's too: ``~`` strikes through, ``$`` starts math) or HTML would read as
#: markup; a backslash makes each plain text.
_MARKUP = re.compile(r"([\\`*_\[\]<>|&~$])")


def _cell(text: object) -> str:
    r"""A table cell that shows ``text`` as written, whatever markup a page title holds.

    >>> print(_cell("足球 | *live* <b>"))
    足球 \| \*live\* \<b\>
    """
    return _MARKUP.sub(r"\\\1", str(text)) if text not in (None, "") else "—"


def _runs(covered: list[int], of: int) -> str:
    """Which of a resumed crawl's runs the report covers, if it is not the one run."""
    if len(covered) == of:  # every run (the runs it covers end with this one)
        return f"The crawl ran {of} times (`JOBDIR`); the report covers them all." if of > 1 else ""
    runs = f"runs {', '.join(map(str, covered[:-1]))} and" if covered[1:] else "run"
    return (
        f"The crawl ran {of} times (`JOBDIR`); the report covers {runs} {covered[-1]} only, those"
        " run with `TOPIC_REPORT` (the fetch log has every page)."
    )


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
    if runs := _runs(figures["runs"], figures["crawl_runs"]):
        lines[4:4] = [runs, ""]
    if not figures["fetched"]:
        return "\n".join([*lines[:-2], "No page was scored: no curve, no pages to list."]) + "\n"
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
        # An autolink: its text is not markup, and a fetched URL has no space, < or >.
        lines.append(
            f"| {rank} | {page['relevance']:.3f} | {page['depth']} "
            f"| {'yes' if page['accepted'] else 'no'} "
            f"| {_cell(page['title'])} | <{page['url']}> |"
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


def plot_harvest(harvest: Harvest, title: str = "") -> bytes:
    """A PNG of three panels against pages fetched: harvest rate, pages accepted, relevance
    per page with the threshold each verdict used (every ``harvest.stride``-th page)."""
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state

    sampled = np.arange(1, len(harvest.found) + 1) * harvest.stride
    fetched, found = sampled, np.asarray(harvest.found, dtype=float)
    if harvest.fetched % harvest.stride:  # the curves end at the last page, sampled or not
        fetched = np.append(sampled, harvest.fetched)
        found = np.append(found, harvest.accepted)
    figure = Figure(figsize=(9, 8), layout="constrained")
    rate_axes, count_axes, relevance_axes = figure.subplots(3, 1, sharex=True)
    rate_axes.plot(fetched, found / np.maximum(fetched, 1), color="tab:blue")
    rate_axes.set_ylim(0, 1.02)
    rate_axes.set_ylabel("harvest rate\n(accepted / fetched)")
    count_axes.plot(fetched, found, color="tab:green", label="accepted")
    count_axes.plot(fetched, fetched, color="grey", linestyle=":", label="every page accepted")
    count_axes.set_ylabel("pages accepted")
    count_axes.legend(loc="upper left")
    kept = np.frombuffer(harvest.verdicts, dtype=np.uint8).astype(bool)
    relevance = np.asarray(harvest.relevance, dtype=float)
    relevance_axes.scatter(sampled[kept], relevance[kept], s=6, color="tab:green", label="accepted")
    relevance_axes.scatter(sampled[~kept], relevance[~kept], s=6, color="tab:red", label="dropped")
    if harvest.fetched:
        relevance_axes.scatter(
            sampled,
            np.asarray(harvest.thresholds, dtype=float),
            s=12,
            marker="_",
            color="black",
            label=f"threshold of the verdict (last {harvest.threshold:.3g})",
        )
    relevance_axes.set_ylabel("page relevance")
    relevance_axes.set_xlabel("pages fetched")
    relevance_axes.legend(loc="upper right")
    for axes in (rate_axes, count_axes, relevance_axes):
        axes.grid(alpha=0.3)
        axes.set_xlim(left=0, right=max(harvest.fetched, 1))
    if title:
        figure.suptitle(title)
    png = io.BytesIO()
    figure.savefig(png, format="png", dpi=100)
    return png.getvalue()
