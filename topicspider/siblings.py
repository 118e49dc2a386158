"""Links whose siblings came back off topic, put back in the frontier at a lower score.

When nothing in the frontier scores above the rest, best-first takes a page's links in the
order it found them, and a long list (a guide's index of a hundred entries) can take a
hundred fetches that each come back off topic while other pages' links wait. Once
``TOPIC_BARREN_SIBLINGS`` of a page's links have been fetched and none was relevant, each
of its other links is put back at half its score as it leaves the frontier, and at half
that again each time the count doubles: the crawl turns to other pages' links first and
comes back when nothing scores higher. One relevant link is enough to stop it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from topicspider.pqueues import RESERVE_KEY, SCORE_KEY, lowered, score_of
from topicspider.sentlinks import make_room

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler

__all__ = ["DEMOTED_KEY", "PARENT_KEY", "SiblingDemotionMiddleware", "SiblingYields"]

#: The page a request's link was found on.
PARENT_KEY = "topic_parent"
#: The factor a request's score was last multiplied by here.
DEMOTED_KEY = "topic_demoted"
#: Parents remembered; past that the oldest tenth is forgotten, as in ``SentLinks``.
PARENTS = 100_000
_YIELDED = -1


class SiblingYields:
    """For each of the last pages whose links were fetched: how many were, while none was
    relevant."""

    def __init__(self, barren: int) -> None:
        self.barren = barren
        self._fetched: dict[str, int] = {}

    def record(self, parent: str | None, relevant: bool) -> None:
        if not parent or self._fetched.get(parent) == _YIELDED:
            return
        if parent not in self._fetched:
            make_room(self._fetched, PARENTS)
        self._fetched[parent] = _YIELDED if relevant else self._fetched.get(parent, 0) + 1

    def resume(self, saved: SiblingYields) -> None:
        """Take what a paused crawl learned, keeping this run's ``barren``."""
        self._fetched = saved._fetched

    def factor(self, parent: str | None) -> float:
        """1 for a page's links until ``barren`` of them came back off topic; then 1/2,
        1/4 from twice as many, and so on."""
        fetched = self._fetched.get(parent, 0) if parent else 0
        if fetched < self.barren:
            return 1.0
        return 0.5 ** (math.floor(math.log2(fetched / self.barren)) + 1)


class SiblingDemotionMiddleware:
    """Downloader middleware for ``TOPIC_BARREN_SIBLINGS``: a request whose siblings' factor
    fell since it was queued goes back to the scheduler with its score times the new factor
    (``dont_filter``: it is the same request). Uses what the spider learned
    (``spider.siblings``), as Scrapy's offsite middleware uses ``spider.allowed_domains``."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        if crawler.settings.getint("TOPIC_BARREN_SIBLINGS") <= 0:
            raise NotConfigured
        return cls(crawler)

    def process_request(self, request: Request) -> Request | None:
        siblings = getattr(self.crawler.spider, "siblings", None)
        # The reserve is taken breadth-first, after everything else, already.
        if siblings is None or request.meta.get(RESERVE_KEY):
            return None
        factor = siblings.factor(request.meta.get(PARENT_KEY))
        applied = request.meta.get(DEMOTED_KEY, 1.0)
        if factor >= applied:
            return None
        self.crawler.stats.inc_value("topic/demoted")
        score = lowered(score_of(request), factor / applied)
        meta = {**request.meta, SCORE_KEY: score, DEMOTED_KEY: factor}
        return request.replace(dont_filter=True, meta=meta)
