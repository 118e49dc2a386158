"""What the workers of a shared crawl learn from the pages they judge, kept in step in Redis.

A worker learns from each page at once, in its own view (the threshold, the link-score mix,
URL-template yields), and once a second sends what it learned since and takes back what the
crawl learned from every worker's pages: one pipeline of each learner's script, not a round
trip per page.
"""

from __future__ import annotations

import os
from itertools import count
from typing import TYPE_CHECKING, Any

from twisted.internet import task

from topicspider.redis.connection import UNAVAILABLE, Outage
from topicspider.redis.scripts import GONE

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redis import Redis
    from redis.client import Pipeline

__all__ = ["Learner", "LearningSync", "Outbox"]

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


class Outbox:
    """A learner's counts as sent to the crawl: numbered, and held until answered.

    A sync whose answer is lost after Redis ran it looks like an outage. What it sent is
    held and sent again, each section with its number, and the script adds only the
    sections it has not added (``_SECTIONS`` in :mod:`topicspider.redis.scripts`); what is
    learned meanwhile goes in a section of its own. Before, it was sent again merged with
    what came after, and counted twice.
    """

    def __init__(self) -> None:
        self.sender = os.urandom(6).hex()
        self._numbers = count(1)
        self._held: list[list[Any]] = []

    @property
    def holding(self) -> bool:
        return bool(self._held)

    def add(self, values: list[Any]) -> None:
        if values:
            self._held.append([next(self._numbers), len(values), *values])

    @property
    def args(self) -> list[Any]:
        """The script's ARGV: the sender, then each section's number, length and values."""
        return [self.sender, *(x for section in self._held for x in section)]

    @property
    def values(self) -> list[Any]:
        """The values of every section held, in order."""
        return [x for section in self._held for x in section[2:]]

    def answered(self) -> None:
        self._held.clear()


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
