"""What the workers of a shared crawl learned of URL templates, summed in Redis."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topicspider.redis.learning import Learner, Outbox
from topicspider.redis.scripts import SYNC_TEMPLATES
from topicspider.urlpatterns import PatternStats

if TYPE_CHECKING:
    from redis import Redis
    from redis.client import Pipeline

__all__ = ["SharedPatternStats"]


class SharedPatternStats(Learner, PatternStats):
    """URL-template yields of the whole crawl (``P:fetched``, ``P:on_topic``; see
    :mod:`topicspider.redis.scripts`): a template that 30 fetches showed barren is barren
    for every worker, not after 30 fetches of each, and a template's yield is learned from
    every worker's pages.

    A sync sends the counts made since the last one (or, its answer lost, the same batch
    again) and takes back the crawl's totals of the templates counted or looked up since.
    """

    what = "URL-template yields"

    def __init__(self, server: Redis, prefix: str) -> None:
        PatternStats.__init__(self)
        self.keys = [
            f"{prefix}:fetched",
            f"{prefix}:on_topic",
            f"{prefix}:synced",
            f"{prefix}:meta",
        ]
        self._script = server.register_script(SYNC_TEMPLATES)
        self._outbox = Outbox()
        self._unsent: dict[str, list[int]] = {}
        self._looked_up: set[str] = set()

    def record(self, key: str, accepted: bool) -> None:
        super().record(key, accepted)
        unsent = self._unsent.setdefault(key, [0, 0])
        unsent[0] += 1
        unsent[1] += accepted

    def yield_of(self, key: str) -> float:
        self._looked_up.add(key)
        return super().yield_of(key)

    def is_barren(self, key: str) -> bool:
        self._looked_up.add(key)
        return super().is_barren(key)

    def send(self, pipe: Pipeline) -> bool:
        counted = [*self._unsent, *(self._looked_up - self._unsent.keys())]
        counts = [(template, *self._unsent.get(template, (0, 0))) for template in counted]
        self._outbox.add([x for count in counts for x in count])
        self._unsent.clear()
        self._looked_up.clear()
        if not self._outbox.holding:
            return False
        self._script(keys=self.keys, args=self._outbox.args, client=pipe)
        return True

    def receive(self, reply: list[int]) -> None:
        sent = self._outbox.values[::3]
        self._outbox.answered()
        for template, fetched, on_topic in zip(sent, reply[::2], reply[1::2], strict=True):
            if fetched:
                self.set_counts(template, fetched, on_topic)
