"""The shared frontier in Redis: float-scored per-slot queues, leases, batched round trips.

scrapy-redis's ``PriorityQueue`` keeps one sorted set and pays a round trip for every push,
every pop and every dupefilter check, and knows nothing of download slots or of requests a
worker has taken but not finished. ``RedisFrontier`` keeps scrapy-redis's request encoding
(``scrapy_redis.queue.Base``) and replaces the rest:

- requests wait in one sorted set per download slot, ordered by −score then sequence (float
  relevance, ties first in first out), and a request of a slot is handed out only while the
  slot has fewer than ``CONCURRENT_REQUESTS_PER_DOMAIN`` requests in flight *in the whole
  cluster* (and, with ``DOWNLOAD_DELAY``, not before the slot's next start time): a
  high-scoring site can take its share of connections, never the others';
- a popped request is leased to the worker until it acknowledges it (parsed, links queued);
  the requests of a worker that stops renewing its lease go back to the frontier;
- links found are buffered and sent together with the acknowledgements and the pops of one
  engine step, in one Lua script (:mod:`topicspider.redis.scripts`): one round trip per step,
  not three per request. The script checks them against the crawl's seen-set there, an exact
  set or a Bloom filter whose bit positions the worker computed. A link already sent by this
  worker (the last ``seen_cache`` of them) is sent again only to raise its score, so most
  rediscovered links cost nothing.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy.utils.httpobj import urlparse_cached
from scrapy_redis.queue import Base

from topicspider.exceptions import TopicSpiderError
from topicspider.pqueues import LINKS_QUEUED_KEY, score_of
from topicspider.redis.partitions import partition_of
from topicspider.redis.scripts import GONE, HEARTBEAT, LEAVE, STEP
from topicspider.sentlinks import make_room

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from redis import Redis
    from scrapy import Request, Spider

    from topicspider.bloom import BloomFilter

logger = logging.getLogger(__name__)

__all__ = ["CHECK", "FORCE", "NEW", "RESCORE", "CrawlGone", "RedisFrontier", "Step"]

#: How a pushed request meets the dupefilter (see ``RedisFrontier.push``).
CHECK, NEW, RESCORE, FORCE = "c", "n", "r", "f"

#: What the step script says happened to each push.
_DUPLICATE, _ADDED, _RAISED, _QUEUED = 0, 1, 2, 3


class CrawlGone(TopicSpiderError):
    """The crawl is no longer in Redis (restarted without its data, or the crawl deleted):
    its queued requests and seen URLs are gone. Nothing was changed in Redis."""


@dataclass
class Step:
    """What one round trip did: pushes added, rescored (still queued) and duplicates,
    leases acknowledged, requests popped (and of those, how many while pages of their slot
    were being parsed); and the crawl's state after it: requests queued in
    this worker's partitions and in all, requests in flight on all workers, URLs in the
    crawl's Bloom filter (0 with the exact set); and the seconds until a slot held back only
    by ``DOWNLOAD_DELAY`` may start a request (None: no slot is); the number of sites the
    crawl keeps to (see :class:`~topicspider.redis.crawl.CrawlRecord`)."""

    added: int = 0
    rediscovered: int = 0
    duplicates: int = 0
    acked: int = 0
    popped: int = 0
    chosen_early: int = 0
    queued: int = 0
    queued_everywhere: int = 0
    active: int = 0
    bloom_urls: int = 0
    ready_in: float | None = None
    domains: int = 0


class RedisFrontier(Base):
    """One worker's handle on the crawl's frontier.

    ``push`` buffers; ``step`` does one round trip (send pushes, acknowledge finished
    requests, pop up to ``wanted`` requests into a local buffer); ``pop`` hands out the
    buffered requests, which stay leased until acknowledged in a later ``step``.

    ``dupefilter_key`` is the crawl's seen-set that ``CHECK`` pushes are checked against:
    a Redis set of fingerprints, or with ``bloom`` the bits of that Bloom filter (its size
    and hashes; positions are computed here, set in the script).
    """

    #: At most this many pushes per round trip, so that one script never blocks Redis long.
    MAX_PUSHES = 1000

    def __init__(
        self,
        server: Redis,
        spider: Spider,
        key: str,
        *,
        worker: str,
        partitions: int,
        worker_partitions: Iterable[int],
        slot_of: Callable[[Request], str],
        fingerprint: Callable[[Request], str],
        slot_concurrency: int,
        parse_backlog: int = 0,
        backlog_after: int = 0,
        delay: float = 0.0,
        dupefilter_key: str = "",
        bloom: BloomFilter | None = None,
        seen_cache: int = 100_000,
    ) -> None:
        super().__init__(server, spider, key)
        self.worker = worker
        self.partitions = partitions
        self.worker_partitions = ",".join(map(str, worker_partitions))
        self.slot_of = slot_of
        self.fingerprint = fingerprint
        self.slot_concurrency = slot_concurrency
        self.parse_backlog = max(0, parse_backlog)
        self.backlog_after = max(0, backlog_after)
        self.delay_ms = round(delay * 1000)
        self.dupefilter_key = dupefilter_key
        self.bloom = bloom
        self.seen_cache = seen_cache
        self._step = server.register_script(STEP)
        self._heartbeat = server.register_script(HEARTBEAT)
        self._leave = server.register_script(LEAVE)
        self._pushes: list[tuple] = []
        #: Fingerprint → best score this worker sent; +inf once the page left the queue.
        self._sent: dict[str, float] = {}
        self._buffer: deque[tuple[bytes, Request]] = deque()
        #: Requests handed out and not yet acknowledged → their member in Redis.
        self.leases: dict[Request, bytes] = {}
        #: Leases whose download Redis knows is over (the page is being parsed).
        self.downloaded: set[Request] = set()
        #: Leases whose links Redis knows are all queued (they no longer hold their slot).
        self.links_queued: set[Request] = set()
        #: The crawl's state as of the last step (see ``Step``).
        self.queued = self.queued_everywhere = self.active = 0

    # --- local side --------------------------------------------------------------

    def push(self, request: Request, mode: str = CHECK) -> bool:
        """Buffer a request for the next ``step``.

        ``CHECK``: the Redis dupefilter set decides, in the script; ``NEW``/``RESCORE``: the
        caller's dupefilter said new/seen; ``FORCE``: ``dont_filter``. A seen request only
        raises the score of the queued copy, if it is still queued. Return False if this
        worker already sent the request: no need to send it again unless it scores higher.
        """
        fingerprint = self.fingerprint(request)
        score = score_of(request)
        if mode == CHECK and fingerprint in self._sent:
            mode = RESCORE
        if mode == RESCORE and score <= self._sent.get(fingerprint, -math.inf):
            return False
        if mode != FORCE:
            self._remember(fingerprint, score)
        slot = self.slot_of(request) or "-"
        partition = partition_of(urlparse_cached(request).hostname or "", self.partitions)
        bits = ""
        if mode == CHECK and self.bloom is not None:
            bits = ",".join(map(str, self.bloom.positions(bytes.fromhex(fingerprint))))
        self._pushes.append(
            (mode, fingerprint, slot, partition, -score, self._encode_request(request), bits)
        )
        return mode != RESCORE

    def _remember(self, fingerprint: str, score: float) -> None:
        if self.seen_cache <= 0:
            return
        if fingerprint not in self._sent:
            make_room(self._sent, self.seen_cache)
        self._sent[fingerprint] = score

    def _left_queue(self, fingerprint: str) -> None:
        """The page is no longer queued: a higher score for it can change nothing."""
        if fingerprint in self._sent:
            self._sent[fingerprint] = math.inf

    def pop(self) -> Request | None:
        """The next request popped by the last steps, now leased until acknowledged."""
        if not self._buffer:
            return None
        member, request = self._buffer.popleft()
        self.leases[request] = member
        return request

    @property
    def pending(self) -> int:
        """Pushes not sent yet."""
        return len(self._pushes)

    @property
    def buffered(self) -> int:
        """Requests popped from Redis and not handed out yet."""
        return len(self._buffer)

    def __len__(self) -> int:
        """Requests queued in this worker's partitions, as of the last step."""
        return self.queued

    # --- round trips -------------------------------------------------------------

    def step(
        self,
        done: Iterable[Request] = (),
        wanted: int = 0,
        downloaded: Iterable[Request] = (),
        links_queued: Iterable[Request] = (),
    ) -> Step:
        """Send pushes, acknowledge the ``done`` leases, report the ``downloaded`` ones (their
        slot may download again while they are parsed) and those whose links are all
        ``links_queued`` (they no longer hold their slot), pop up to ``wanted`` requests.

        If Redis fails, nothing is lost: pushes and leases stay here for the next step.
        Leases are acknowledged, or reported with their links queued, only in the step that
        sends the last push (the links a finished request found may be among them), so a
        worker that dies between two steps loses no link: its request is fetched again
        instead, and no slot chooses before the links are in Redis. Raise ``CrawlGone`` if
        the crawl is no longer in Redis.
        """
        pushes = self._pushes[: self.MAX_PUSHES]
        if len(self._pushes) > len(pushes):
            done = links_queued = ()
        done = [request for request in done if request in self.leases]
        downloaded = self._news(downloaded, self.downloaded)
        links_queued = self._news(links_queued, self.links_queued)
        args: list = [
            self.key,
            self.worker,
            self.slot_concurrency,
            self.delay_ms,
            max(wanted, 0),
            self.worker_partitions,
            self.dupefilter_key,
            "bloom" if self.bloom is not None else "set",
            self.parse_backlog,
            self.backlog_after,
            self._judged(done, links_queued),
            len(pushes),
        ]
        for push in pushes:
            args.extend(push)
        args.append(len(done))
        args.extend(self.leases[request] for request in done)
        args.append(len(downloaded))
        args.extend(self.leases[request] for request in downloaded)
        args.append(len(links_queued))
        args.extend(self.leases[request] for request in links_queued)
        reply = self._step(args=args)
        if reply == GONE:
            raise CrawlGone
        statuses, popped, queued, everywhere, active, acked, bloom_urls, soonest, domains, early = (
            reply
        )
        del self._pushes[: len(pushes)]
        for request in done:
            del self.leases[request]
            self.downloaded.discard(request)
            self.links_queued.discard(request)
        self.downloaded.update(downloaded)
        self.links_queued.update(links_queued)
        result = Step(
            acked=acked,
            popped=len(popped) // 2,
            chosen_early=early,
            queued=queued,
            queued_everywhere=everywhere,
            active=active,
            bloom_urls=bloom_urls,
            ready_in=soonest / 1000 if soonest >= 0 else None,
            domains=domains,
        )
        for push, status in zip(pushes, statuses, strict=True):
            if status == _ADDED:
                result.added += 1
            elif status in (_RAISED, _QUEUED):
                result.rediscovered += 1
            else:
                result.duplicates += 1
                self._left_queue(push[1])
        for member, data in zip(popped[::2], popped[1::2], strict=True):
            self._left_queue(member[16:].decode())
            self._buffer.append((member, self._decode_request(data)))
        self.queued, self.queued_everywhere, self.active = queued, everywhere, active
        return result

    def _judged(self, done: list[Request], links_queued: list[Request]) -> int:
        """How many of this step's leases are pages whose links are all queued, each
        counted once: newly reported so, or done without having been."""
        finished = [
            request
            for request in done
            if request.meta.get(LINKS_QUEUED_KEY) and request not in self.links_queued
        ]
        return len(finished) + len(links_queued)

    def _news(self, requests: Iterable[Request], reported: set[Request]) -> list[Request]:
        """The leases among ``requests`` not yet ``reported`` in that state."""
        return [r for r in requests if r in self.leases and r not in reported]

    def heartbeat(self, lease: float) -> tuple[int, bool]:
        """Renew this worker's lease and give back dead workers' requests.

        Return how many were given back, and whether this worker still held its lease (if
        not, others took back its requests: the local buffer is dropped, they are queued).
        Raise ``CrawlGone`` if the crawl is no longer in Redis.
        """
        reply = self._heartbeat(
            args=[self.key, self.worker, round(lease * 1000), self.worker_partitions]
        )
        if reply == GONE:
            raise CrawlGone
        reclaimed, known = reply
        if not known:
            self._buffer.clear()
            self.leases.clear()
            self.downloaded.clear()
            self.links_queued.clear()
        return reclaimed, bool(known)

    def judged_everywhere(self) -> int:
        """Pages any worker of the crawl has judged (``P:judged``)."""
        return int(self.server.get(f"{self.key}:judged") or 0)

    def resync(self) -> int:
        """After a failed round trip: give back leases Redis holds for this worker that it
        does not know of (a pop whose answer was lost). Return how many."""
        held = [member for member, _ in self._buffer] + list(self.leases.values())
        return self._leave(args=[self.key, self.worker, 0, *held])

    def leave(self) -> int:
        """Give back the requests popped and not handed out, and leave the crawl.
        Call after ``step`` has acknowledged the finished ones. Return how many."""
        returned = self._leave(args=[self.key, self.worker, 1])
        self._buffer.clear()
        self.leases.clear()
        self.downloaded.clear()
        self.links_queued.clear()
        return returned
