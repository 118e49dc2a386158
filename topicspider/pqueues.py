"""A priority queue ordered by a float score, for Scrapy's scheduler.

Scrapy's own ``ScrapyPriorityQueue`` keeps one FIFO per integer priority; a
focused crawl needs a total order on float relevance scores, ties broken FIFO.
``ScorePriorityQueue`` plugs in through ``SCHEDULER_PRIORITY_QUEUE`` and stores
its requests in the queue class the scheduler hands it: ``MemoryQueue`` (heaps)
or, with ``JOBDIR``, ``DiskQueue`` (an SQLite table in the job folder), so a
paused crawl resumes in the same order.

``SpillQueue`` is a ``MemoryQueue`` that holds at most ``TOPIC_QUEUE_MEMORY_LIMIT``
requests in memory, the best ones, and keeps the rest in a temporary SQLite file.

A queue that cannot read or write its file (a full disk, a read-only or damaged
folder) raises ``FrontierError``; ``TopicScheduler`` stops the crawl on it.

Requests are kept per download slot (host), and a request is handed to the
engine only when its slot has room. Otherwise the engine would pull up to
``CONCURRENT_REQUESTS`` requests into the downloader's own FIFO queues at once,
and the order would be decided before the pages that should change it arrive.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import math
import os
import pickle
import sqlite3
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from scrapy.utils.misc import build_from_crawler
from scrapy.utils.request import request_from_dict

from topicspider.engine import requests_in_progress, requests_unfinished
from topicspider.exceptions import TopicSpiderError
from topicspider.signals import page_scored

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Iterator

    from scrapy import Request
    from scrapy.core.engine import ExecutionEngine
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from scrapy.utils.request import RequestFingerprinterProtocol
    from typing_extensions import Self

__all__ = [
    "LINKS_QUEUED_KEY",
    "RESERVE_KEY",
    "SCORE_KEY",
    "DiskQueue",
    "FrontierError",
    "MemoryQueue",
    "ScorePriorityQueue",
    "ScoreQueue",
    "SpillQueue",
    "lowered",
    "score_of",
]

logger = logging.getLogger(__name__)

#: The request meta key holding the float score the queue orders by.
SCORE_KEY = "topic_score"

#: Set by the spider on a request for a link kept in reserve (``TOPIC_TUNNEL_RESERVE``).
RESERVE_KEY = "topic_reserve"

#: Set by the spider on a request once every link of its page is in the scheduler: from
#: then on the request no longer holds its slot back, though the engine keeps it in
#: progress until the page's item is stored.
LINKS_QUEUED_KEY = "topic_links_queued"

#: (-score, sequence): smaller pops first; the sequence breaks ties first in, first out.
Order = tuple[float, int]


def score_of(request: Request) -> float:
    """The request's float score; requests without one fall back to their integer priority.
    A score that is not a number (NaN, None, a word) goes last: it has no place in any order."""
    try:
        score = float(request.meta.get(SCORE_KEY, request.priority))
    except (TypeError, ValueError, OverflowError):
        return -math.inf
    return -math.inf if math.isnan(score) else score


def lowered(score: float, factor: float) -> float:
    """``score`` lowered in proportion, ``0 < factor <= 1``: multiplied if positive,
    divided if negative (breadth-first scores are)."""
    return score * factor if score >= 0 else score / factor


class FrontierError(TopicSpiderError):
    """The frontier's file (in ``JOBDIR``, or spilled to ``TMPDIR``) cannot be read or
    written; the message names it."""


class ScoreQueue(Protocol):
    """Requests grouped by slot, each group ordered by score (ties FIFO), one per fingerprint."""

    def push(self, request: Request, slot: str, fingerprint: str) -> None:
        """Queue the request, or ``improve`` the queued one with the same fingerprint."""

    def improve(self, request: Request, slot: str, fingerprint: str) -> bool:
        """If the fingerprint is queued, keep whichever of the two requests scores higher.
        Return whether it was queued."""

    def peek(self, slot: str) -> Order | None:
        """The order key of the slot's next request, or None if the slot is empty."""

    def pop(self, slot: str) -> Request | None: ...

    def slots(self) -> Iterable[str]:
        """Slots with at least one request."""

    def close(self) -> None: ...

    def __len__(self) -> int: ...


class MemoryQueue:
    """One heap of [-score, sequence, request] per slot; superseded entries are skipped."""

    def __init__(self) -> None:
        self._heaps: dict[str, list[list]] = {}
        self._entries: dict[str, list] = {}
        self._sequence = itertools.count()

    @classmethod
    def from_crawler(cls, crawler: Crawler, key: str) -> Self:
        return cls()

    def push(self, request: Request, slot: str, fingerprint: str) -> None:
        if not self.improve(request, slot, fingerprint):
            self._add([-score_of(request), next(self._sequence), request, fingerprint], slot)

    def improve(self, request: Request, slot: str, fingerprint: str) -> bool:
        known = self._entries.get(fingerprint)
        if known is None:
            return False
        if -score_of(request) < known[0]:
            known[2] = None  # superseded: skipped when it reaches the top
            self._add([-score_of(request), known[1], request, fingerprint], slot)
        return True

    def _add(self, entry: list, slot: str) -> None:
        self._entries[entry[3]] = entry
        heapq.heappush(self._heaps.setdefault(slot, []), entry)

    def _top(self, slot: str) -> list | None:
        heap = self._heaps.get(slot)
        while heap and heap[0][2] is None:
            heapq.heappop(heap)
        if not heap:
            self._heaps.pop(slot, None)
            return None
        return heap[0]

    def peek(self, slot: str) -> Order | None:
        top = self._top(slot)
        return (top[0], top[1]) if top is not None else None

    def pop(self, slot: str) -> Request | None:
        if self._top(slot) is None:
            return None
        _, _, request, fingerprint = heapq.heappop(self._heaps[slot])
        del self._entries[fingerprint]
        return request

    def slots(self) -> Iterable[str]:
        return list(self._heaps)

    def close(self) -> None:
        self._heaps.clear()
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


class SpillQueue(MemoryQueue):
    """A ``MemoryQueue`` of about ``limit`` requests; the rest wait in a temporary SQLite file.

    Memory holds the best requests (the head, popped next) and the newest (the
    tail, until the next spill); the disk holds the middle. When memory passes
    ``limit`` (by a push; by one refill batch at most on a pop), its worse half is
    written to the file in one transaction. ``pop``
    compares a slot's best in memory with its best on disk and, if the disk's is
    better, first moves that slot's best ``refill`` requests back into memory: the
    order is exactly a ``MemoryQueue``'s. ``improve`` finds a spilled request by
    its fingerprint (an index); one whose score it raises moves back to memory.

    Requests that cannot be serialized stay in memory. The file is an SQLite
    private temporary database (in ``TMPDIR``), deleted when the queue closes. A
    file that cannot be written or read (a full disk) raises ``FrontierError``; the
    transaction that failed leaves it as it was (its journal is in memory).
    """

    def __init__(self, limit: int, crawler: Crawler | None = None) -> None:
        super().__init__()
        if limit < 1:
            raise ValueError(f"TOPIC_QUEUE_MEMORY_LIMIT must be at least 1, got {limit}")
        self.limit = limit
        self.refill = max(1, min(1000, limit // 4))
        self.crawler = crawler
        self.stats = crawler.stats if crawler is not None else None
        self._db: sqlite3.Connection | None = None
        #: Slot → order key of its best request on disk; only slots with requests on disk.
        self._disk_tops: dict[str, Order] = {}
        self._disk_length = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler, key: str) -> Self:
        return cls(crawler.settings.getint("TOPIC_QUEUE_MEMORY_LIMIT"), crawler)

    def _disk(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = sqlite3.connect("", isolation_level=None)
            self._db.executescript(
                "PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF;"
                "CREATE TABLE spill (seq INTEGER PRIMARY KEY, slot TEXT NOT NULL,"
                " neg_score REAL NOT NULL, fingerprint TEXT NOT NULL UNIQUE,"
                " request BLOB NOT NULL);"
                "CREATE INDEX spill_order ON spill (slot, neg_score, seq);"
            )
        return self._db

    @contextlib.contextmanager
    def _sqlite(self) -> Iterator[None]:
        """SQLite's errors as ``FrontierError``."""
        try:
            yield
        except sqlite3.Error as error:
            raise FrontierError(
                f"Cannot use the frontier's temporary file (TMPDIR): {error}"
            ) from error

    def push(self, request: Request, slot: str, fingerprint: str) -> None:
        super().push(request, slot, fingerprint)
        if len(self._entries) > self.limit:
            with self._sqlite():
                self._spill()

    def improve(self, request: Request, slot: str, fingerprint: str) -> bool:
        if super().improve(request, slot, fingerprint):
            return True
        if not self._disk_length:
            return False
        with self._sqlite():
            db = self._disk()
            known = db.execute(
                "SELECT seq, neg_score, slot FROM spill WHERE fingerprint = ?", (fingerprint,)
            ).fetchone()
            if known is None:
                return False
            seq, neg_score, known_slot = known
            if -score_of(request) < neg_score:
                # Back to memory: a raised score often makes it one of the next to go.
                db.execute("DELETE FROM spill WHERE seq = ?", (seq,))
                self._disk_length -= 1
                if self._disk_tops[known_slot] == (neg_score, seq):
                    self._find_disk_top(known_slot)
                self._add([-score_of(request), seq, request, fingerprint], slot)
        return True

    def _find_disk_top(self, slot: str) -> None:
        query = "SELECT neg_score, seq FROM spill WHERE slot = ? ORDER BY neg_score, seq LIMIT 1"
        top = self._disk().execute(query, (slot,)).fetchone()
        if top is None:
            del self._disk_tops[slot]
        else:
            self._disk_tops[slot] = tuple(top)

    def _dumps(self, request: Request) -> bytes | None:
        spider = self.crawler.spider if self.crawler is not None else None
        try:
            return pickle.dumps(request.to_dict(spider=spider), protocol=4)
        except (ValueError, TypeError, AttributeError, pickle.PicklingError):
            return None

    def _spill(self) -> None:
        """Move the worse half of the requests in memory to disk."""
        live = [
            (entry, slot)
            for slot, heap in self._heaps.items()
            for entry in heap
            if entry[2] is not None
        ]
        live.sort(key=lambda pair: (pair[0][0], pair[0][1]))
        keep, rows = live[: self.limit // 2], []
        for entry, slot in live[self.limit // 2 :]:
            data = self._dumps(entry[2])
            if data is None:
                keep.append((entry, slot))
                continue
            rows.append((entry[1], slot, entry[0], entry[3], data))
        self._change(
            "INSERT INTO spill (seq, slot, neg_score, fingerprint, request) VALUES (?, ?, ?, ?, ?)",
            rows,
        )
        for seq, slot, neg_score, _, _ in rows:
            if slot not in self._disk_tops or (neg_score, seq) < self._disk_tops[slot]:
                self._disk_tops[slot] = (neg_score, seq)
        self._disk_length += len(rows)
        self._heaps, self._entries = {}, {}
        for entry, slot in keep:
            self._heaps.setdefault(slot, []).append(entry)
            self._entries[entry[3]] = entry
        for heap in self._heaps.values():
            heapq.heapify(heap)
        if self.stats is not None:
            self.stats.inc_value("topic/queue/spilled", len(rows))
        logger.debug("Spilled %s requests to disk; %s there", len(rows), self._disk_length)

    def _change(self, statement: str, rows: list[tuple]) -> None:
        """Run the statement for every row in one transaction, or for none."""
        db = self._disk()
        db.execute("BEGIN")
        try:
            db.executemany(statement, rows)
            db.execute("COMMIT")
        except sqlite3.Error:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def _refill(self, slot: str) -> None:
        """Move the slot's best requests on disk back into memory: its share of a batch.
        A whole batch for each of many slots would pass the limit, and the next spill would
        write most of it back (with 1,000 slots, each request went to disk 18 times)."""
        db = self._disk()
        batch = max(1, min(self.refill, self.limit // 4 // len(self._disk_tops)))
        rows = db.execute(
            "SELECT seq, neg_score, fingerprint, request FROM spill WHERE slot = ?"
            " ORDER BY neg_score, seq LIMIT ?",
            (slot, batch),
        ).fetchall()
        spider = self.crawler.spider if self.crawler is not None else None
        self._change("DELETE FROM spill WHERE seq = ?", [(row[0],) for row in rows])
        self._disk_length -= len(rows)
        if self.stats is not None:
            self.stats.inc_value("topic/queue/refilled", len(rows))
        for seq, neg_score, fingerprint, data in rows:
            request = request_from_dict(pickle.loads(data), spider=spider)
            self._add([neg_score, seq, request, fingerprint], slot)
        self._find_disk_top(slot)

    def _memory_is_behind(self, slot: str) -> bool:
        disk = self._disk_tops.get(slot)
        if disk is None:
            return False
        memory = super().peek(slot)
        return memory is None or disk < memory

    def peek(self, slot: str) -> Order | None:
        if self._memory_is_behind(slot):
            return self._disk_tops[slot]
        return super().peek(slot)

    def pop(self, slot: str) -> Request | None:
        with self._sqlite():
            if self._memory_is_behind(slot):
                self._refill(slot)
            request = super().pop(slot)
            if len(self._entries) > self.limit + self.refill:  # a refill may overshoot by a batch
                self._spill()
        return request

    def slots(self) -> Iterable[str]:
        return list(self._heaps.keys() | self._disk_tops.keys())

    def close(self) -> None:
        super().close()
        if self._db is not None:
            self._db.close()
            self._db = None
        self._disk_tops.clear()
        self._disk_length = 0

    def __len__(self) -> int:
        return len(self._entries) + self._disk_length


class DiskQueue:
    """Requests in one SQLite table indexed by (slot, score, sequence), for ``JOBDIR``.

    SQLite rather than Scrapy's per-priority queue files because float scores
    have no buckets, and a table keeps the order across restarts for free.
    Every change is committed at once (WAL, so a commit costs no fsync) and a
    popped request stays in the table, marked taken, until the engine is done
    with it: a crawl killed with ``kill -9`` loses no queued request, and the
    ones in flight at the kill are queued again when the crawl resumes.

    A file that cannot be read or written raises ``FrontierError``, and from then
    on nothing is settled: the pages in flight may have links that could not be
    queued, and are fetched again when the crawl resumes. An empty or damaged
    file is refused, not started afresh.
    """

    FILE_NAME = "frontier.sqlite3"

    def __init__(self, path: Path, crawler: Crawler) -> None:
        self.crawler = crawler
        self.file = path / self.FILE_NAME
        #: Set by the first read or write that failed: nothing is settled from then on.
        self.failed = False
        with self._sqlite():
            path.mkdir(parents=True, exist_ok=True)
            if not self.file.exists():
                self._create()
            self._db = sqlite3.connect(self.file, isolation_level=None)
            tables = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'frontier'"
            if self._db.execute(tables).fetchone() is None:
                raise sqlite3.DatabaseError("no frontier in it (an empty or damaged file)")
            self._db.executescript(
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                # Requests in flight when the last crawl stopped were not finished: queue
                # them again.
                "UPDATE frontier SET taken = 0 WHERE taken = 1;"
            )
            self._counts: dict[str, int] = dict(
                self._db.execute("SELECT slot, COUNT(*) FROM frontier GROUP BY slot")
            )
        self._length = sum(self._counts.values())
        self._tops: dict[str, Order | None] = {}
        self._taken: dict[int, Request] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler, key: str) -> Self:
        return cls(Path(key), crawler)

    def _create(self) -> None:
        """Make the file whole or not at all: one cut short by a full disk would be
        refused as damaged at the next start."""
        part = self.file.with_name(f"{self.FILE_NAME}.part")
        part.unlink(missing_ok=True)
        with contextlib.closing(sqlite3.connect(part)) as db:
            db.executescript(
                "CREATE TABLE frontier (seq INTEGER PRIMARY KEY, slot TEXT NOT NULL,"
                " neg_score REAL NOT NULL, fingerprint TEXT NOT NULL UNIQUE,"
                " request BLOB NOT NULL, taken INTEGER NOT NULL DEFAULT 0);"
                "CREATE INDEX frontier_order ON frontier (slot, taken, neg_score, seq);"
            )
        os.replace(part, self.file)

    @contextlib.contextmanager
    def _sqlite(self) -> Iterator[None]:
        """SQLite's errors, and the folder's, as ``FrontierError``."""
        try:
            yield
        except (sqlite3.Error, OSError) as error:
            self.failed = True
            raise FrontierError(f"Cannot use the frontier {self.file} (JOBDIR): {error}") from error

    def push(self, request: Request, slot: str, fingerprint: str) -> None:
        with self._sqlite():
            known = self._row(fingerprint)
            if known is not None:
                if known[2]:
                    self._requeue(known[0], request, slot)
                else:
                    self._raise(known, request, slot)
                return
            seq = self._db.execute(
                "INSERT INTO frontier (slot, neg_score, fingerprint, request) VALUES (?, ?, ?, ?)",
                (slot, -score_of(request), fingerprint, self._dumps(request)),
            ).lastrowid
        self._counts[slot] = self._counts.get(slot, 0) + 1
        self._length += 1
        self._moved(slot, (-score_of(request), seq or 0))

    def improve(self, request: Request, slot: str, fingerprint: str) -> bool:
        with self._sqlite():
            known = self._row(fingerprint)
            if known is None:
                return False
            if known[2]:  # in flight: seen, as a MemoryQueue has it
                return False
            self._raise(known, request, slot)
        return True

    def _raise(self, known: tuple[int, float, int, str], request: Request, slot: str) -> None:
        """Give the queued row ``known`` the request's score, if it is higher; in the
        request's slot, should the page have been queued in another (a slot policy that
        hashes the address as it was written)."""
        seq, neg_score, _, queued_in = known
        if -score_of(request) >= neg_score:
            return
        try:
            data = self._dumps(request)
        except ValueError:  # the page stays as first queued
            return
        self._db.execute(
            "UPDATE frontier SET slot = ?, neg_score = ?, request = ? WHERE seq = ?",
            (slot, -score_of(request), data, seq),
        )
        if queued_in != slot:
            self._uncount(queued_in)
            self._counts[slot] = self._counts.get(slot, 0) + 1
            self._tops.pop(queued_in, None)
        self._moved(slot, (-score_of(request), seq))

    def _row(self, fingerprint: str) -> tuple[int, float, int, str] | None:
        """``(seq, neg_score, taken, slot)`` of the request queued or in flight with this
        fingerprint."""
        return self._db.execute(
            "SELECT seq, neg_score, taken, slot FROM frontier WHERE fingerprint = ?",
            (fingerprint,),
        ).fetchone()

    def _requeue(self, seq: int, request: Request, slot: str) -> None:
        """Queue ``request`` in the row of the one in flight with its fingerprint: a retry
        or a demoted copy (``dont_filter``), pushed before the engine is done with the
        first. The row is no longer the first's, so finishing it deletes nothing."""
        self._db.execute(
            "UPDATE frontier SET slot = ?, neg_score = ?, request = ?, taken = 0 WHERE seq = ?",
            (slot, -score_of(request), self._dumps(request), seq),
        )
        del self._taken[seq]
        self._counts[slot] = self._counts.get(slot, 0) + 1
        self._length += 1
        self._moved(slot, (-score_of(request), seq))

    def _uncount(self, slot: str) -> None:
        """One request fewer queued in ``slot``; a slot with none is no slot to peek."""
        self._counts[slot] -= 1
        if not self._counts[slot]:
            del self._counts[slot]

    def _dumps(self, request: Request) -> bytes:
        """``ValueError`` for a request that does not pickle, as Scrapy's disk queues say
        it: the scheduler keeps it in memory. Before, the error got past the scheduler and
        the request was lost."""
        try:
            return pickle.dumps(request.to_dict(spider=self.crawler.spider), protocol=4)
        except (pickle.PicklingError, AttributeError, TypeError) as error:
            raise ValueError(f"cannot be pickled: {error}") from error

    def _moved(self, slot: str, order: Order) -> None:
        top = self._tops.get(slot)
        if slot in self._tops and (top is None or order < top):
            self._tops[slot] = order

    def peek(self, slot: str) -> Order | None:
        if slot not in self._tops:
            with self._sqlite():
                self._tops[slot] = self._db.execute(
                    "SELECT neg_score, seq FROM frontier WHERE slot = ? AND taken = 0"
                    " ORDER BY neg_score, seq LIMIT 1",
                    (slot,),
                ).fetchone()
        return self._tops[slot]

    def pop(self, slot: str) -> Request | None:
        top = self.peek(slot)
        if top is None:
            return None
        with self._sqlite():
            (data,) = self._db.execute(
                "SELECT request FROM frontier WHERE seq = ?", (top[1],)
            ).fetchone()
            self._db.execute("UPDATE frontier SET taken = 1 WHERE seq = ?", (top[1],))
        del self._tops[slot]
        self._uncount(slot)
        self._length -= 1
        request = request_from_dict(pickle.loads(data), spider=self.crawler.spider)
        self._taken[top[1]] = request
        return request

    def settle(self, in_progress: Collection[Request]) -> None:
        """Forget the taken requests the engine is done with (fetched and parsed, or failed)."""
        if self.failed:
            return
        done = [seq for seq, request in self._taken.items() if request not in in_progress]
        if done:
            with self._sqlite():
                self._db.executemany("DELETE FROM frontier WHERE seq = ?", [(seq,) for seq in done])
            for seq in done:
                del self._taken[seq]

    def slots(self) -> Iterable[str]:
        return self._counts.keys()

    def close(self) -> None:
        try:
            # Scrapy closes the scheduler after the last request in flight is done.
            self.settle(())
        finally:
            self._db.close()

    def __len__(self) -> int:
        return self._length


class ScorePriorityQueue:
    """Scrapy priority queue (``SCHEDULER_PRIORITY_QUEUE``) that orders by float score.

    Keeps one ``ScoreQueue`` of the class the scheduler passes
    (``SCHEDULER_MEMORY_QUEUE`` or ``SCHEDULER_DISK_QUEUE``). ``pop`` returns the
    best request among the slots that can download now, or None when every
    slot with requests is busy; the engine asks again when a download ends.
    Start requests need no queue of their own: seeds carry the highest score.
    """

    @classmethod
    def from_crawler(
        cls,
        crawler: Crawler,
        downstream_queue_cls: type[ScoreQueue],
        key: str,
        startprios: Iterable[int] = (),
        *,
        start_queue_cls: type[ScoreQueue] | None = None,
    ) -> Self:
        try:
            engine = crawler.engine
        except RuntimeError:  # built outside a running crawl: no slots to respect
            engine = None
        queue = cls(
            build_from_crawler(downstream_queue_cls, crawler, key),
            crawler.request_fingerprinter,
            engine,
            parse_backlog=crawler.settings.getint("TOPIC_PARSE_BACKLOG"),
            backlog_after=crawler.settings.getint("TOPIC_PARSE_BACKLOG_AFTER"),
            stats=crawler.stats if engine is not None else None,
        )
        if queue.parse_backlog and queue.backlog_after:
            crawler.signals.connect(queue.page_judged, signal=page_scored)
        return queue

    def __init__(
        self,
        queue: ScoreQueue,
        fingerprinter: RequestFingerprinterProtocol,
        engine: ExecutionEngine | None = None,
        *,
        parse_backlog: int = 0,
        backlog_after: int = 0,
        stats: StatsCollector | None = None,
    ) -> None:
        """``stats``: counts ``topic/chosen_early``, the requests handed out while pages of
        their slot were still being parsed."""
        self.queue = queue
        self.fingerprinter = fingerprinter
        self.engine = engine
        self.stats = stats
        self.parse_backlog = max(0, parse_backlog)
        self.backlog_after = max(0, backlog_after)
        self._pages_judged = 0
        #: Slot → pages judged when a request last went ahead of its best queued one.
        self._led_at: dict[str, int] = {}

    def page_judged(self) -> None:
        """Count a page the spider judged (``page_scored``); its links come after."""
        self._pages_judged += 1

    def _backlog(self, slot: str) -> int:
        """``parse_backlog`` once the last ``backlog_after`` pages judged sent the slot no
        request ahead of its best: a choice made without the links of the pages being
        parsed would then most likely be the same. Until then, and at the crawl's start,
        where pages change the order most, the slot waits for its pages' links."""
        if self._pages_judged - self._led_at.get(slot, 0) < self.backlog_after:
            return 0
        return self.parse_backlog

    def _head(self, slot: str) -> Order | None:
        """The slot's best queued order, when leads are counted."""
        return self.queue.peek(slot) if self.parse_backlog and self.backlog_after else None

    def _note_lead(self, request: Request, slot: str, head: Order | None) -> None:
        """Whether the request, now queued, went ahead of ``head``."""
        if head is not None and -score_of(request) < head[0]:
            self._led_at[slot] = self._pages_judged

    def _slot(self, request: Request) -> str:
        if self.engine is not None:
            return self.engine.downloader.get_slot_key(request)
        return urlsplit(request.url).hostname or ""

    def _in_progress(self) -> Counter[str]:
        """Requests per slot handed to the engine whose links are not all queued yet.

        The parse counts, not just the download: a fast server answers sooner
        than pages are scored, and a request handed out then is chosen without
        the links they hold (see ``_has_room``). Storing the page's item does not:
        the choice cannot gain from waiting for it.
        """
        return Counter(
            self._slot(request)
            for request in requests_in_progress(self.engine)
            if not request.meta.get(LINKS_QUEUED_KEY)
        )

    def _has_room(self, slot: str, in_progress: Counter[str]) -> bool:
        """Whether the slot can start a download now, chosen as late as it can be.

        At most the slot's concurrency downloads at once (politeness), and at most
        its backlog (``_backlog``) more of its pages downloaded and still being parsed:
        with 0 a slot waits for every page's links before it chooses the next request;
        more keeps the server busy while pages are parsed, choosing without them.
        """
        if self.engine is None:
            return True
        downloading, concurrency = self._downloads(slot)
        return downloading < concurrency and in_progress[slot] < concurrency + self._backlog(slot)

    def _downloads(self, slot: str) -> tuple[int, int]:
        """The slot's downloads running, and how many it allows at once."""
        downloader = self.engine.downloader
        download_slot = downloader.slots.get(slot)
        if download_slot is None:
            return 0, downloader.domain_concurrency
        return len(download_slot.active), download_slot.concurrency

    def _key(self, request: Request) -> tuple[str, str]:
        return self._slot(request), self.fingerprinter.fingerprint(request).hex()

    def push(self, request: Request) -> None:
        slot, fingerprint = self._key(request)
        head = self._head(slot)
        self.queue.push(request, slot, fingerprint)
        self._note_lead(request, slot, head)

    def rescore(self, request: Request) -> bool:
        """If the request is still queued, raise its score to the new one if higher.

        A page is often linked many times; the best link to it, not the first
        one found, should decide when it is fetched. Return whether it was queued.
        """
        slot, fingerprint = self._key(request)
        head = self._head(slot)
        queued = self.queue.improve(request, slot, fingerprint)
        if queued:
            self._note_lead(request, slot, head)
        return queued

    def peek(self) -> Order | None:
        """The order of the request ``pop`` would hand out now, if any."""
        best = self._best()
        return best[0] if best is not None else None

    def pop(self) -> Request | None:
        best = self._best()
        if best is None:
            return None
        _, slot, in_progress = best
        if self.stats is not None and in_progress[slot] >= self._downloads(slot)[1]:
            self.stats.inc_value("topic/chosen_early")
        return self.queue.pop(slot)

    def _best(self) -> tuple[Order, str, Counter[str]] | None:
        """The best order among the slots with room, its slot, and the requests in
        progress per slot."""
        settle = getattr(self.queue, "settle", None)
        if settle is not None:
            settle(requests_unfinished(self.engine))
        in_progress = self._in_progress()
        best: tuple[Order, str, Counter[str]] | None = None
        for slot in self.queue.slots():
            if not self._has_room(slot, in_progress):
                continue
            order = self.queue.peek(slot)
            if order is not None and (best is None or order < best[0]):
                best = (order, slot, in_progress)
        return best

    def close(self) -> list[int]:
        """The queue keeps its own state: nothing for Scrapy's ``active.json``."""
        self.queue.close()
        return []

    def __len__(self) -> int:
        return len(self.queue)
