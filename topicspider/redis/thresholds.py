"""The adaptive threshold of a shared crawl: learned from the best pages of every worker."""

from __future__ import annotations

import heapq
import os
from itertools import count
from typing import TYPE_CHECKING

from topicspider.redis.learning import Learner
from topicspider.redis.scripts import MERGE_BEST
from topicspider.thresholds import AdaptiveThreshold

if TYPE_CHECKING:
    from typing import Self

    from redis import Redis
    from redis.client import Pipeline

__all__ = ["SharedAdaptiveThreshold"]


class SharedAdaptiveThreshold(Learner, AdaptiveThreshold):
    """``AdaptiveThreshold`` over the ``top`` best relevances of the whole crawl
    (``P:best:<top>``, see :mod:`topicspider.redis.scripts`), so that every worker holds
    pages to the same bar, and a worker that has parsed few pages yet is held to the bar
    of the crawl's best, not to the low one its own few would give.

    A sync sends the relevances that entered the worker's best since the last one and
    takes back the crawl's best. Workers with another ``TOPIC_THRESHOLD_TOP`` keep theirs
    under another key; ``TOPIC_THRESHOLD``, ``_MIN`` and ``_RATIO`` are each worker's.
    """

    what = "the threshold"

    def __init__(
        self, server: Redis, prefix: str, highest: float, lowest: float, ratio: float, top: int
    ) -> None:
        AdaptiveThreshold.__init__(self, highest, lowest, ratio, top)
        self.key = f"{prefix}:best:{top}"
        self.meta = f"{prefix}:meta"
        self._script = server.register_script(MERGE_BEST)
        # Each with its member of the sorted set: unique across workers, so equal relevances
        # all count, and the same on a resend (its answer lost), so a page counts once.
        self._unsent: list[tuple[float, str]] = []
        self._members = (f"{os.urandom(6).hex()}:{n}" for n in count())

    @classmethod
    def like(cls, threshold: AdaptiveThreshold, server: Redis, prefix: str) -> Self:
        return cls(
            server, prefix, threshold.highest, threshold.lowest, threshold.ratio, threshold.top
        )

    def observe(self, relevance: float) -> None:
        if relevance > self.best[0]:
            self._unsent.append((relevance, next(self._members)))
        super().observe(relevance)

    def send(self, pipe: Pipeline) -> bool:
        best = heapq.nlargest(self.top, self._unsent)
        args = [x for relevance, member in best for x in (repr(relevance), member)]
        self._script(keys=[self.key, self.meta], args=[self.top, *args], client=pipe)
        return True

    def receive(self, reply: list[bytes]) -> None:
        self._unsent.clear()
        crawl = [float(score) for score in reply]
        self.best = heapq.nlargest(self.top, crawl + [0.0] * self.top)
        heapq.heapify(self.best)
        self._follow_best()
