"""Which scored pages are stored: the relevance threshold, fixed or learned from the crawl.

A cosine threshold suits one keyword vector on one kind of page: a long keyword list or long
pages score lower everywhere, so one fixed value stores nearly nothing on one crawl and
neighbouring topics on another. ``AdaptiveThreshold`` follows the level of the best pages the
crawl has found instead. Its value settles as pages come in, so ``Verdicts`` lets a page whose
verdict could still change wait a few pages and decides it with what the crawl learned
meanwhile; a page accepted is never taken back, and what still waits when the crawl stops is
decided then (``Verdicts.close``).
"""

from __future__ import annotations

import heapq
import statistics
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from topicspider.exceptions import ConfigError

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from typing_extensions import Self

__all__ = [
    "THRESHOLD_MODES",
    "AdaptiveThreshold",
    "FixedThreshold",
    "Threshold",
    "Verdict",
    "Verdicts",
    "check_settings",
]

THRESHOLD_MODES = ("adaptive", "fixed")

T = TypeVar("T")


class Threshold:
    """The relevance a page needs to be stored, learned from the relevance of every page
    scored (``observe``). Every value it may take lies within [``lowest``, ``highest``], so a
    page outside those bounds can be decided at once."""

    lowest: float
    highest: float

    def observe(self, relevance: float) -> None:
        """Nothing to learn by default."""

    @property
    def value(self) -> float:
        raise NotImplementedError


class FixedThreshold(Threshold):
    def __init__(self, value: float) -> None:
        self.lowest = self.highest = value

    @property
    def value(self) -> float:
        return self.highest


class AdaptiveThreshold(Threshold):
    """``ratio`` times the median relevance of the ``top`` best pages scored so far (0 for
    each page not yet seen), within [``lowest``, ``highest``].

    The best pages of a focused crawl are its on-topic ones, and a page on the same topic
    scores a similar share of them whatever the keyword vector's length or the site's page
    length. The value never goes down (the best pages only get better), so a page judged
    early is never held to a higher bar than later ones. It only lowers the fixed bar
    ``highest``: raising it in proportion too dropped on-topic pages in ``make eval``.
    """

    def __init__(self, highest: float, lowest: float, ratio: float, top: int) -> None:
        if not 0 <= lowest <= highest or ratio <= 0 or top < 1:
            raise ValueError("expected 0 <= lowest <= highest, ratio > 0 and top >= 1")
        self.highest = highest
        self.lowest = lowest
        self.ratio = ratio
        self.top = top
        self.best = [0.0] * top  # min-heap of the best relevances
        self._value = lowest

    def observe(self, relevance: float) -> None:
        if relevance <= self.best[0]:
            return
        heapq.heapreplace(self.best, relevance)
        level = self.ratio * statistics.median(self.best)
        self._value = min(self.highest, max(self.lowest, level))

    @property
    def value(self) -> float:
        return self._value


@dataclass
class Verdict(Generic[T]):
    """A scored page (``page``, whatever the caller keeps of it) and whether it is stored."""

    page: T
    relevance: float
    accepted: bool | None = None
    #: The threshold the verdict used.
    threshold: float = 0.0
    order: int = 0


class Verdicts(Generic[T]):
    """Decides which scored pages are stored.

    A page between the threshold's bounds waits until ``hold`` more pages have been scored
    (or ``close``); then it is judged by the threshold of that moment. Pages outside the
    bounds, and every page with a fixed threshold, are decided at once. Each verdict comes
    out twice: from ``new`` as soon as it is reached (store the page), and from ``in_order``
    once every page fetched before it has one (report it). At most ``hold`` pages wait.
    """

    def __init__(self, threshold: Threshold, hold: int = 0) -> None:
        self.threshold = threshold
        self.hold = max(0, hold)
        self.scored = 0
        #: Every verdict not yet handed out by ``in_order``, in fetch order.
        self.pending: deque[Verdict[T]] = deque()
        self._new: list[Verdict[T]] = []

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        check_settings(settings)
        fixed = settings.getfloat("TOPIC_THRESHOLD")
        if settings.get("TOPIC_THRESHOLD_MODE") == "fixed":
            return cls(FixedThreshold(fixed))
        threshold = AdaptiveThreshold(
            fixed,
            settings.getfloat("TOPIC_THRESHOLD_MIN"),
            settings.getfloat("TOPIC_THRESHOLD_RATIO"),
            settings.getint("TOPIC_THRESHOLD_TOP"),
        )
        return cls(threshold, settings.getint("TOPIC_THRESHOLD_HOLD"))

    def score(self, relevance: float, page: T) -> bool:
        """Take a scored page; return whether it is on topic by the threshold of now (what
        the crawl can go on, e.g. for the tunnel), whatever its verdict turns out to be."""
        self.scored += 1
        self.threshold.observe(relevance)
        verdict = Verdict(page, relevance, order=self.scored)
        threshold = self.threshold
        if relevance >= threshold.highest or relevance < threshold.lowest or not self.hold:
            self._decide(verdict)
        self.pending.append(verdict)
        for waiting in self.pending:
            if waiting.order > self.scored - self.hold:
                break
            if waiting.accepted is None:
                self._decide(waiting)
        return relevance >= threshold.value

    def new(self) -> list[Verdict[T]]:
        """The verdicts reached since the last call."""
        new, self._new = self._new, []
        return new

    def in_order(self) -> Iterator[Verdict[T]]:
        """The verdicts in fetch order, each once, as far as every earlier page has one."""
        while self.pending and self.pending[0].accepted is not None:
            yield self.pending.popleft()

    def close(self) -> None:
        """Decide every page still waiting, by the threshold of now."""
        for verdict in self.pending:
            if verdict.accepted is None:
                self._decide(verdict)

    def _decide(self, verdict: Verdict[T]) -> None:
        verdict.threshold = self.threshold.value
        verdict.accepted = verdict.relevance >= verdict.threshold
        self._new.append(verdict)


def check_settings(settings: BaseSettings) -> None:
    """Raise ``ConfigError`` on threshold settings the crawl cannot use."""
    mode = settings.get("TOPIC_THRESHOLD_MODE")
    if mode not in THRESHOLD_MODES:
        raise ConfigError(
            f"TOPIC_THRESHOLD_MODE={mode!r}: expected one of {', '.join(THRESHOLD_MODES)}"
        )
    try:
        fixed = settings.getfloat("TOPIC_THRESHOLD")
        lowest = settings.getfloat("TOPIC_THRESHOLD_MIN")
        ratio = settings.getfloat("TOPIC_THRESHOLD_RATIO")
        top = settings.getint("TOPIC_THRESHOLD_TOP")
        hold = settings.getint("TOPIC_THRESHOLD_HOLD")
    except ValueError as exc:
        raise ConfigError(f"threshold settings: {exc}") from None
    if mode == "adaptive" and not 0 <= lowest <= fixed:
        raise ConfigError(
            f"TOPIC_THRESHOLD_MIN={lowest:g}: expected 0 <= it <= TOPIC_THRESHOLD ({fixed:g})"
        )
    if ratio <= 0 or top < 1 or hold < 0:
        raise ConfigError(
            f"TOPIC_THRESHOLD_RATIO={ratio:g}, TOPIC_THRESHOLD_TOP={top}, "
            f"TOPIC_THRESHOLD_HOLD={hold}: expected a ratio > 0, top >= 1 and hold >= 0"
        )
