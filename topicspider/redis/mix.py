"""The link-score mix of a shared crawl: learned from the pages every worker judged."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from topicspider.redis.learning import Learner, Outbox
from topicspider.redis.scripts import ADD_MOMENTS
from topicspider.relevance import FEATURES, BestFirst, Correlation

if TYPE_CHECKING:
    from typing import Self

    from redis import Redis
    from redis.client import Pipeline

__all__ = ["SharedBestFirst"]

#: The fields of ``P:moments``, in the order of ``Correlation.moments``.
MOMENTS = (
    "pages",
    *FEATURES,
    *(f"{name}^2" for name in FEATURES),
    *(f"{name}*relevance" for name in FEATURES),
    "relevance",
    "relevance^2",
)


class SharedBestFirst(Learner, BestFirst):
    """Adaptive ``BestFirst`` whose weights follow each term's correlation with relevance
    over the pages every worker judged (the sums in ``P:moments``, see
    :mod:`topicspider.redis.scripts`): the workers score links alike, and ``warmup`` counts
    the crawl's pages, not each worker's.

    A sync adds the sums of the pages judged since the last one (or, its answer lost, the
    same sums again, added once) and takes back the crawl's.
    The configured weights, the prior, are each worker's.
    """

    what = "the link-score mix"

    def __init__(
        self, server: Redis, prefix: str, weights: dict[str, float], **options: Any
    ) -> None:
        BestFirst.__init__(self, weights, adaptive=True, **options)
        self.keys = [f"{prefix}:moments", f"{prefix}:synced", f"{prefix}:meta"]
        self._script = server.register_script(ADD_MOMENTS)
        self._unsent = Correlation(len(FEATURES))
        self._outbox = Outbox()

    @classmethod
    def like(cls, strategy: BestFirst, server: Redis, prefix: str) -> Self:
        weights = dict(zip(FEATURES, strategy.prior.tolist(), strict=True))
        return cls(
            server,
            prefix,
            weights,
            noise_discount=strategy.noise_discount,
            warmup=strategy.warmup,
        )

    def learn(self, features: tuple[float, ...], relevance: float) -> None:
        super().learn(features, relevance)
        if len(features) == len(FEATURES):
            self._unsent.add(np.asarray(features), relevance)

    def send(self, pipe: Pipeline) -> bool:
        if self._unsent.n:
            added = self._unsent.moments().tolist()
            self._outbox.add([x for pair in zip(MOMENTS, added, strict=True) for x in pair])
            self._unsent = Correlation(len(FEATURES))
        self._script(keys=self.keys, args=self._outbox.args, client=pipe)
        return True

    def receive(self, reply: list[bytes]) -> None:
        self._outbox.answered()
        totals = dict(zip(reply[::2], reply[1::2], strict=True))
        crawl = [float(totals.get(name.encode(), 0)) for name in MOMENTS]
        self._correlation.set_moments(np.array(crawl))
        if self._correlation.n:
            self._reweigh()
