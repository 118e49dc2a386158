"""The query parameters the workers of a shared crawl learned change nothing, in Redis."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topicspider.canonical import DroppedParameters
from topicspider.redis.learning import Learner
from topicspider.redis.scripts import SYNC_DROPPED

if TYPE_CHECKING:
    from redis import Redis
    from redis.client import Pipeline

__all__ = ["SharedDroppedParameters"]


class SharedDroppedParameters(Learner, DroppedParameters):
    """``DroppedParameters`` whose conclusions are the crawl's (``P:dropped``, see
    :mod:`topicspider.redis.scripts`): once one worker has seen a portal's ``?from=index``
    change nothing, no worker fetches another story twice for it.

    Each worker gathers its own evidence (the paths a parameter was dropped at); only what
    it concluded is sent, and the crawl's conclusions are taken back at each sync.
    """

    what = "the query parameters that change nothing"

    def __init__(self, server: Redis, prefix: str) -> None:
        DroppedParameters.__init__(self)
        self.keys = [f"{prefix}:dropped", f"{prefix}:meta"]
        self._script = server.register_script(SYNC_DROPPED)
        self._unsent: list[str] = []

    def drop(self, host: str, parameter: str) -> None:
        if parameter not in self._dropped.get(host, ()):
            self._unsent.append(f"{host}\t{parameter}")
        super().drop(host, parameter)

    def send(self, pipe: Pipeline) -> bool:
        self._script(keys=self.keys, args=self._unsent, client=pipe)
        return True

    def receive(self, reply: list[bytes]) -> None:
        self._unsent.clear()
        for entry in reply:
            host, _, parameter = entry.decode().partition("\t")
            if parameter not in self._dropped.get(host, ()):
                DroppedParameters.drop(self, host, parameter)
