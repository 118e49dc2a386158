"""The links a spider has already sent to the scheduler, so that it sends a link again only
when that could change something.

Most links a crawl finds lead to pages it has already queued or fetched (on the benchmark
site, two in three). Sent again, each is built into a ``Request``, crosses the spider
middlewares, two signals and the scheduler, only to be dropped as a duplicate or to leave
a better score in place: some 15% of the reactor thread's CPU time per page there.
"""

from __future__ import annotations

from itertools import islice

__all__ = ["SentLinks", "make_room"]


class SentLinks:
    """The best score and the lowest depth each of the last ``size`` links was sent with.

    A link found again goes to the scheduler only with a higher score (the queue may raise
    the page's score: see ``ScorePriorityQueue.rescore``) or a lower depth (``DEPTH_LIMIT``
    may have dropped it). Past ``size`` links the oldest tenth is forgotten: those are sent
    again if found again, as if never sent. ``size`` 0 remembers nothing.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._sent: dict[str, tuple[float, int]] = {}

    def __len__(self) -> int:
        return len(self._sent)

    def fresh(self, url: str, score: float, depth: int) -> bool:
        """Whether a link to ``url`` with this score and depth is worth sending; if it is,
        remember it as sent."""
        if self.size <= 0:
            return True
        known = self._sent.get(url)
        if known is not None:
            if score <= known[0] and depth >= known[1]:
                return False
            self._sent[url] = (max(score, known[0]), min(depth, known[1]))
            return True
        make_room(self._sent, self.size)
        self._sent[url] = (score, depth)
        return True


def make_room(sent: dict, size: int) -> None:
    """Forget the oldest tenth of ``sent`` once it holds ``size`` entries (a dict keeps
    insertion order): the links a crawl sent last are the likeliest to be found again."""
    if len(sent) >= size:
        for old in list(islice(sent, max(1, size // 10))):
            del sent[old]
