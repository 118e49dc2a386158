"""What the workers of a shared crawl learn from the pages they judge, kept in step in Redis.

A worker learns from each page at once, in its own view (the threshold, the link-score mix,
URL-template yields), and once a second sends what it learned since and takes back what the
crawl learned from every worker's pages: one pipeline of each learner's script, not a round
trip per page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from twisted.internet import task

from topicspider.redis.connection import UNAVAILABLE, Outage
from topicspider.redis.scripts import GONE

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redis import Redis
    from redis.client import Pipeline

__all__ = ["Learner", "LearningSync"]

#: Seconds between a worker's syncs of what it learned with the crawl.
SYNC_INTERVAL = 1.0


class Learner:
    """A worker's view of something the crawl learns, synced by :class:`LearningSync`."""

    #: What it learns, for the warning while Redis is away.
    what = ""

    def send(self, pipe: Pipeline) -> bool:
        """Queue the script that adds what was learned since the last sync and returns the
        crawl's view; False if there is nothing to exchange."""
        raise NotImplementedError

    def receive(self, reply: Any) -> None:
        """The crawl's view, which now holds what was sent."""
        raise NotImplementedError


class LearningSync:
    """Syncs a worker's learners with the crawl once a second and when the worker closes.

    While Redis is away what they learn waits in the worker (one warning says so) and is
    sent when it is back; the worker goes on learning from its own pages.
    """

    def __init__(self, server: Redis, learners: Sequence[Learner]) -> None:
        self.server = server
        self.learners = learners
        self._outage = Outage(
            f"{', '.join(learner.what for learner in learners)} are learned from this "
            "worker's pages alone until it is back"
        )
        self._loop = task.LoopingCall(self.sync)

    def start(self) -> None:
        self._loop.start(SYNC_INTERVAL, now=True)

    def close(self) -> None:
        """Stop syncing, and send what is left."""
        if self._loop.running:
            self._loop.stop()
        self.sync()

    def sync(self) -> None:
        pipe = self.server.pipeline(transaction=False)
        sending = [learner for learner in self.learners if learner.send(pipe)]
        if not sending:
            return
        try:
            replies = pipe.execute()
        except UNAVAILABLE as error:
            self._outage.started(error)
            return
        self._outage.ended()
        for learner, reply in zip(sending, replies, strict=True):
            if reply != GONE:  # the scheduler stops the worker
                learner.receive(reply)
