"""Which scored pages are stored: the relevance threshold, fixed or learned from the crawl.

A cosine threshold suits one keyword vector on one kind of page: a long keyword list or long
pages score lower everywhere, so one fixed value stores nearly nothing on one crawl and
neighbouring topics on another. ``AdaptiveThreshold`` follows the level of the best pages the
crawl has found instead.
"""

from __future__ import annotations

import heapq
import statistics
from typing import TYPE_CHECKING

from topicspider.exceptions import ConfigError

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = [
    "THRESHOLD_MODES",
    "AdaptiveThreshold",
    "FixedThreshold",
    "Threshold",
    "check_settings",
    "threshold_from_settings",
]

THRESHOLD_MODES = ("adaptive", "fixed")


class Threshold:
    """The relevance a page needs to be stored, learned from the relevance of every page
    scored (``observe``), within [``lowest``, ``highest``]."""

    lowest: float
    highest: float

    def observe(self, relevance: float) -> None:
        """Nothing to learn by default."""

    @property
    def settled(self) -> bool:
        """Whether the value is what the crawl's pages to come will meet too, give or take:
        until then a page it accepts waits to be judged again (the spider's ``waiting``)."""
        return True

    def resume(self, saved: Threshold) -> None:
        """Take over what ``saved``, the threshold of the crawl this one resumes (``JOBDIR``),
        learned; the settings are this run's. Nothing to take over by default."""

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
        self._follow_best()

    def resume(self, saved: Threshold) -> None:
        if isinstance(saved, AdaptiveThreshold):
            for relevance in saved.best:
                self.observe(relevance)

    @property
    def settled(self) -> bool:
        """Once ``top`` pages have scored above 0, or the value is as high as it goes:
        before, the best pages are the few first, a seed and the pages next to it, and
        the value is often the floor."""
        return self.best[0] > 0 or self._value >= self.highest

    def _follow_best(self) -> None:
        level = self.ratio * statistics.median(self.best)
        self._value = max(self._value, min(self.highest, max(self.lowest, level)))

    @property
    def value(self) -> float:
        return self._value


def threshold_from_settings(settings: BaseSettings) -> Threshold:
    """The threshold ``TOPIC_THRESHOLD_MODE`` and its settings ask for."""
    check_settings(settings)
    fixed = settings.getfloat("TOPIC_THRESHOLD")
    if settings.get("TOPIC_THRESHOLD_MODE") == "fixed":
        return FixedThreshold(fixed)
    return AdaptiveThreshold(
        fixed,
        settings.getfloat("TOPIC_THRESHOLD_MIN"),
        settings.getfloat("TOPIC_THRESHOLD_RATIO"),
        settings.getint("TOPIC_THRESHOLD_TOP"),
    )


def check_settings(settings: BaseSettings) -> None:
    """Raise ``ConfigError`` on threshold settings the crawl cannot use (their types are
    checked before: :mod:`topicspider.settingtypes`)."""
    mode = settings.get("TOPIC_THRESHOLD_MODE")
    if mode not in THRESHOLD_MODES:
        raise ConfigError(
            f"TOPIC_THRESHOLD_MODE={mode!r}: expected one of {', '.join(THRESHOLD_MODES)}"
        )
    fixed = settings.getfloat("TOPIC_THRESHOLD")
    lowest = settings.getfloat("TOPIC_THRESHOLD_MIN")
    ratio = settings.getfloat("TOPIC_THRESHOLD_RATIO")
    top = settings.getint("TOPIC_THRESHOLD_TOP")
    if mode == "adaptive" and not 0 <= lowest <= fixed:
        raise ConfigError(
            f"TOPIC_THRESHOLD_MIN={lowest:g}, TOPIC_THRESHOLD={fixed:g}: the adaptive"
            " threshold lies between them, the first no higher than the second"
        )
    listed = settings.getfloat("TOPIC_LISTED_THRESHOLD")
    if listed < 0:
        raise ConfigError(f"TOPIC_LISTED_THRESHOLD={listed:g}: expected a relevance >= 0")
    if ratio <= 0 or top < 1:
        raise ConfigError(
            f"TOPIC_THRESHOLD_RATIO={ratio:g}, TOPIC_THRESHOLD_TOP={top}: "
            "expected a ratio > 0 and top >= 1"
        )
