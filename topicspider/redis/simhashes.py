"""The SimHashes of the pages every worker of a shared crawl stored, in Redis: a page
near one that another worker stored is not stored again."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from topicspider.redis.connection import UNAVAILABLE, Outage
from topicspider.redis.scripts import ADD_SIMHASH, GONE
from topicspider.simhash import SimHashIndex

if TYPE_CHECKING:
    from typing import Self

    from redis import Redis

__all__ = ["SharedSimHashIndex"]


class SharedSimHashIndex:
    """``P:simhash:<k>`` (see :mod:`topicspider.redis.scripts`), checked and added to in one
    script, so that of two workers storing near-duplicates at once, one stores.

    The worker also keeps the SimHashes it stored itself: while Redis is away it compares
    with those alone (one warning says so), and a page near one of them needs no round trip.
    Workers with another ``TOPIC_DUPLICATE_DISTANCE`` keep theirs under another key.
    """

    def __init__(self, server: Redis, prefix: str, distance: int) -> None:
        self.own = SimHashIndex(distance)
        self.key = f"{prefix}:simhash:{distance}"
        self.keys = [self.key, f"{self.key}:pages", f"{prefix}:meta"]
        self._add = server.register_script(ADD_SIMHASH)
        self._outage = Outage(
            "pages are compared with those this worker stored alone until it is back"
        )

    @classmethod
    def like(cls, index: SimHashIndex, server: Redis, prefix: str) -> Self:
        return cls(server, prefix, index.distance)

    @property
    def distance(self) -> int:
        return self.own.distance

    def near(self, fingerprint: int) -> int | None:
        """A fingerprint within the distance of pages this worker stored, or None."""
        return self.own.near(fingerprint)

    def add_if_new(self, fingerprint: int, url: str = "") -> bool:
        """Add the fingerprint of the page at ``url`` unless another stored page's is within
        the distance: whether it was. A SimHash the same page left is no duplicate: a worker
        killed between adding it and storing the page left it, and another fetched the page
        again (before, it was taken for a near-duplicate of itself, and stored by no one)."""
        if self.own.near(fingerprint) is not None:
            return False
        blocks = [f"{number}:{block}" for number, block in enumerate(self.own.blocks(fingerprint))]
        page = hashlib.sha1(url.encode(), usedforsecurity=False).digest()[:8]
        try:
            near = self._add(
                keys=self.keys,
                args=[fingerprint.to_bytes(8, "big"), self.own.distance, page, *blocks],
            )
        except UNAVAILABLE as error:
            self._outage.started(error)
        else:
            self._outage.ended()
            if near is not None and near != GONE:  # gone: the scheduler stops the worker
                return False
        self.own.add(fingerprint)
        return True
