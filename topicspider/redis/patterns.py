"""What the workers of a shared crawl learned of URL templates, summed in Redis."""

from __future__ import annotations

from typing import TYPE_CHECKING

from twisted.internet import task

from topicspider.redis.connection import UNAVAILABLE, Outage, get_client, key_prefix
from topicspider.redis.scripts import SYNC_TEMPLATES
from topicspider.urlpatterns import PatternStats

if TYPE_CHECKING:
    from typing import Self

    from redis import Redis
    from scrapy.settings import BaseSettings

__all__ = ["SharedPatternStats"]

#: Seconds between a worker's syncs of its template counts with the crawl's.
SYNC_INTERVAL = 1.0


class SharedPatternStats(PatternStats):
    """URL-template yields of the whole crawl (``P:fetched``, ``P:on_topic``; see
    :mod:`topicspider.redis.scripts`): a template that 30 fetches showed barren is barren
    for every worker, not after 30 fetches of each, and a template's yield is learned from
    every worker's pages.

    A worker counts in its own view at once and, once a second, sends what it counted since
    and takes back the crawl's totals of the templates it counted or looked up: one script,
    not a round trip per page. While Redis is away its counts wait (one warning says so) and
    its view is its own.
    """

    def __init__(self, server: Redis, prefix: str) -> None:
        super().__init__()
        self.keys = [f"{prefix}:fetched", f"{prefix}:on_topic"]
        self._sync = server.register_script(SYNC_TEMPLATES)
        self._unsent: dict[str, list[int]] = {}
        self._looked_up: set[str] = set()
        self._outage = Outage(
            "URL templates are judged by this worker's pages alone until it is back"
        )
        self._loop = task.LoopingCall(self.sync)

    @classmethod
    def from_settings(cls, settings: BaseSettings, spider_name: str) -> Self:
        return cls(get_client(settings), key_prefix(settings, spider_name))

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

    def start(self) -> None:
        self._loop.start(SYNC_INTERVAL, now=True)

    def close(self) -> None:
        """Stop syncing, and send what is left."""
        if self._loop.running:
            self._loop.stop()
        self.sync()

    def sync(self) -> None:
        templates = [*self._unsent, *(self._looked_up - self._unsent.keys())]
        if not templates:
            return
        counts = [(template, *self._unsent.get(template, (0, 0))) for template in templates]
        try:
            totals = self._sync(keys=self.keys, args=[x for count in counts for x in count])
        except UNAVAILABLE as error:
            self._outage.started(error)
            return
        self._outage.ended()
        self._unsent.clear()
        self._looked_up.clear()
        for template, fetched, on_topic in zip(templates, totals[::2], totals[1::2], strict=True):
            if fetched:
                self.set_counts(template, fetched, on_topic)
