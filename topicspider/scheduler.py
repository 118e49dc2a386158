"""Scrapy's scheduler, taught that a link found again may deserve an earlier fetch, and
that a ``JOBDIR`` belongs to one crawl."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.core.scheduler import BaseScheduler, Scheduler
from scrapy.dupefilters import BaseDupeFilter
from scrapy.exceptions import CloseSpider
from scrapy.utils.job import job_dir
from scrapy.utils.misc import load_object

from topicspider import atomic
from topicspider import settings as defaults
from topicspider.barren import past_barren
from topicspider.exceptions import ConfigError, TopicSpiderError
from topicspider.locks import hold
from topicspider.pipelines import close_crawl
from topicspider.pqueues import DiskQueue, FrontierError, MemoryQueue, ScorePriorityQueue
from topicspider.redis.scheduler import RedisScheduler
from topicspider.settingtypes import loaded

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from twisted.internet.defer import Deferred
    from typing_extensions import Self

    from topicspider.keywords import KeywordVector

__all__ = [
    "FRONTIER_REASON",
    "JOBDIR_REASON",
    "KEYWORDS_FILE",
    "TopicScheduler",
    "check_frontier",
    "check_jobdir",
    "check_keywords",
]

logger = logging.getLogger(__name__)

#: The close reason of a crawl that cannot use its ``JOBDIR``: another crawl's, one made
#: with other keywords or another dupefilter, or a folder it cannot read or write.
JOBDIR_REASON = "jobdir_error"

#: The close reason of a crawl without ``JOBDIR`` whose frontier's temporary file failed.
FRONTIER_REASON = "frontier_error"

#: In ``JOBDIR``: the keywords the crawl was started with, as a keyword file.
KEYWORDS_FILE = "keywords.txt"


#: The queues a local frontier is made of, and the class each setting must name (or extend):
#: Scrapy's FIFO and LIFO queues and its downloader-aware priority queue, which its FAQ
#: gives for breadth-first order, order by other means than the score and lack what this
#: frontier calls (``peek`` with a count, ``rescore``).
FRONTIER_QUEUES = {
    "SCHEDULER_PRIORITY_QUEUE": ScorePriorityQueue,
    "SCHEDULER_MEMORY_QUEUE": MemoryQueue,
    "SCHEDULER_DISK_QUEUE": DiskQueue,
}


def check_frontier(settings: BaseSettings) -> None:
    """Raise ``ConfigError`` on Scrapy's queue-order settings, which stopped the crawl at
    its first request (``peek() takes 1 positional argument``) with exit status 0, or
    (``DEPTH_PRIORITY``) did nothing: the frontier orders by ``TOPIC_STRATEGY``'s score."""
    order = "the frontier orders requests by TOPIC_STRATEGY (bfs: breadth-first, dfs: depth-first)"
    if settings.getint("DEPTH_PRIORITY"):
        raise ConfigError(
            f"DEPTH_PRIORITY={settings.get('DEPTH_PRIORITY')}: {order}, not by priority"
        )
    if settings.get("REDIS_URL"):
        return  # the shared frontier's queues are Redis's
    for name, needed in FRONTIER_QUEUES.items():
        given = loaded(settings, name)
        if not (isinstance(given, type) and issubclass(given, needed)):
            value = settings.get(name)
            raise ConfigError(
                f"{name}={value!r}: {order}, and takes {needed.__module__}.{needed.__name__}"
                f" or a subclass of it (the default: {getattr(defaults, name)})"
            )


class TopicScheduler(Scheduler):
    """``SCHEDULER``: a request for a page that is still queued raises that page's score
    (to the better of the two) instead of being dropped as a duplicate unseen.

    Needs a priority queue with ``rescore`` (``topicspider.pqueues.ScorePriorityQueue``).
    With ``REDIS_URL`` set it builds ``topicspider.redis.scheduler.RedisScheduler`` instead,
    so that the same command and settings run a local crawl or a worker of a shared one.

    With ``JOBDIR`` it holds the folder while the crawl runs, and closes the crawl as it
    opens, in one line (``JOBDIR_REASON``), if another crawl holds it, if it was made with
    other keywords or another dupefilter, or if it cannot be read or written. A frontier
    that fails later (a full disk) stops the crawl in one line too. A request is written
    down as seen only once it is queued (with a dupefilter that ``knows``), and the pages
    in flight when the frontier failed stay in it: the crawl resumes without losing one.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: The descriptor holding ``JOBDIR`` for this crawl, let go at close.
        self.lock: int | None = None
        #: Why this crawl cannot use its ``JOBDIR``: it closes as it opens.
        self.refusal = ""
        settings = self.crawler.settings if self.crawler else None
        self.drop_barren = bool(settings and settings.getbool("TOPIC_DROP_NOISE_URLS"))
        self._failed = False
        # Holds the spider closing we start, so that it is not garbage-collected.
        self._closing: Deferred[None] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BaseScheduler:
        if crawler.settings.get("REDIS_URL"):
            return RedisScheduler.from_crawler(crawler)
        directory = job_dir(crawler.settings)
        if not directory:
            return super().from_crawler(crawler)
        try:
            lock = hold(_queue_folder(directory), "another crawl is using it")
        except OSError as error:
            return cls.refused(crawler, _cannot_use(directory, error))
        try:
            check_keywords(Path(directory), getattr(crawler.spider, "keywords", None))
            scheduler = super().from_crawler(crawler)  # builds the dupefilter, which checks too
        except (OSError, TopicSpiderError) as error:
            os.close(lock)
            return cls.refused(crawler, _cannot_use(directory, error))
        scheduler.lock = lock
        crawler.signals.connect(scheduler.spider_opened, signal=signals.spider_opened)
        return scheduler

    @classmethod
    def refused(cls, crawler: Crawler, refusal: str) -> Self:
        """A scheduler that leaves ``JOBDIR`` alone and closes the crawl as it opens."""
        settings = crawler.settings
        scheduler = cls(
            BaseDupeFilter(),
            mqclass=load_object(settings["SCHEDULER_MEMORY_QUEUE"]),
            pqclass=load_object(settings["SCHEDULER_PRIORITY_QUEUE"]),
            stats=crawler.stats,
            crawler=crawler,
        )
        scheduler.refusal = refusal
        crawler.signals.connect(scheduler.spider_opened, signal=signals.spider_opened)
        return scheduler

    def open(self, spider: Spider) -> Deferred[None] | None:
        try:
            opened = super().open(spider)
        except FrontierError as error:
            self.dqs = None
            self.refusal = str(error)
            return None
        # Requests a paused crawl left in JOBDIR: this run's scheduler stats do not count them.
        if resumed := len(self):
            self.stats.set_value("topic/resumed", resumed)
        return opened

    def spider_opened(self) -> None:
        """Close at once if the crawl cannot use its ``JOBDIR``. (Raised here rather than in
        ``open``: Scrapy opens the scraper after the scheduler, and cannot close it unopened.)"""
        if self.refusal:
            logger.error("%s", self.refusal)
            raise CloseSpider(JOBDIR_REASON)

    def enqueue_request(self, request: Request) -> bool:
        if self._failed:  # the page that found it is fetched again when the crawl resumes
            return False
        try:
            if not request.dont_filter:
                for queue in (self.dqs, self.mqs):
                    if queue is not None and queue.rescore(request):
                        self.stats.inc_value("topic/rediscovered")
                        return False
                knows = getattr(self.df, "knows", None)
                if knows is None:  # another dupefilter: Scrapy's order
                    return super().enqueue_request(request)
                if knows(request):
                    self.df.log(request, self.spider)
                    return False
            self._push(request)
            if not request.dont_filter:
                self.df.request_seen(request)
        except (FrontierError, OSError) as error:
            self._stop(error)
            return False
        return True

    def _push(self, request: Request) -> None:
        """Scrapy's ``enqueue_request`` once the dupefilter has let the request through."""
        if self._dqpush(request):
            self.stats.inc_value("scheduler/enqueued/disk")
        else:
            self._mqpush(request)
            self.stats.inc_value("scheduler/enqueued/memory")
        self.stats.inc_value("scheduler/enqueued")

    def next_request(self) -> Request | None:
        """The best request, past those of URL templates found barren since they were
        queued (``TOPIC_DROP_NOISE_URLS``): dropped here, counted in ``topic/noise_url``."""
        if self._failed:
            return None
        try:
            request = past_barren(self.crawler, self._next)[0] if self.drop_barren else self._next()
        except FrontierError as error:
            self._stop(error)
            return None
        return request

    def _next(self) -> Request | None:
        if self.dqs is None or not len(self.mqs):
            return super().next_request()
        return self._better_of_both()

    def _better_of_both(self) -> Request | None:
        """With ``JOBDIR``, the memory queue holds what would not pickle; Scrapy serves it
        first, whatever its score. The better-scored of the two goes first here (the memory
        queue's on a tie, as in Scrapy)."""
        memory, disk = self.mqs.peek(), self.dqs.peek()
        if disk is not None and (memory is None or disk[0] < memory[0]):
            request, kind = self._dqpop(), "disk"
        else:
            request, kind = self.mqs.pop(), "memory"
        if request is not None:
            self.stats.inc_value(f"scheduler/dequeued/{kind}")
            self.stats.inc_value("scheduler/dequeued")
        return request

    def close(self, reason: str) -> Deferred[None] | None:
        """Close the queue and the dupefilter, and let go of ``JOBDIR``. Writes no
        ``active.json``: the queue keeps its own state."""
        try:
            if self.dqs is not None:
                self.dqs.close()
        except FrontierError as error:
            self._stop(error)
        try:
            return self.df.close(reason)
        except OSError as error:
            self._stop(error)
            return None
        finally:
            if self.lock is not None:
                os.close(self.lock)
                self.lock = None

    def _read_dqs_state(self, dqdir: str) -> tuple[()]:
        """Nothing: the queue keeps its own state, and an ``active.json`` cut short by a
        kill would stop every later start."""
        return ()

    def _stop(self, error: Exception) -> None:
        """Stop the crawl, said once. What is queued stays in ``JOBDIR``, and so do the
        pages in flight, whose links may not all be queued: they are fetched again."""
        if self._failed:
            return
        self._failed = True
        if self.dqdir is None:
            logger.error("%s; the crawl stops", error)
            self._closing = close_crawl(self.crawler, FRONTIER_REASON)
            return
        logger.error(
            "%s; the crawl stops, and the same command resumes it once the folder can be written",
            _cannot_use(str(Path(self.dqdir).parent), error),
        )
        self._closing = close_crawl(self.crawler, JOBDIR_REASON)


def check_jobdir(settings: BaseSettings) -> None:
    """Make ``JOBDIR``, or raise ``ConfigError`` saying why it cannot be made (under a file,
    on a read-only disk). Scrapy's ``SpiderState`` makes it as the spider opens, and that
    failure was a traceback of forty lines."""
    directory = settings.get("JOBDIR")
    if not directory:
        return
    try:
        Path(directory).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        reason = f"[Errno {error.errno}] {error.strerror}" if error.strerror else str(error)
        raise ConfigError(f"Cannot use JOBDIR {directory}: {reason}") from None


def _cannot_use(directory: str, error: Exception) -> str:
    """Our own errors say what and where; the system's name the file at most."""
    if isinstance(error, TopicSpiderError):
        return str(error)
    return f"Cannot use JOBDIR {directory}: {error}"


def _queue_folder(directory: str) -> Path:
    """The folder the lock holds: the queue's own, which no other part of a crawl locks
    (``TOPIC_PAGES_DIR`` may well be ``JOBDIR`` itself)."""
    folder = Path(directory, "requests.queue")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def check_keywords(directory: Path, keywords: KeywordVector | None) -> None:
    """Raise ``ConfigError`` if the crawl in ``directory`` was started with other keywords:
    its queued requests were scored with those, and what it learned of relevance comes from
    them. Its first start writes them down (``KEYWORDS_FILE``)."""
    if keywords is None:
        return
    path = directory / KEYWORDS_FILE
    given = keywords.to_text()
    if not path.exists():
        atomic.replace(path, given.encode("utf-8"))
        return
    kept = path.read_text("utf-8")
    if kept != given:
        raise ConfigError(
            f"JOBDIR {directory} was started with other keywords: {_terms(kept)}; this crawl"
            f" has {_terms(given)}. Resume it with -a keywords={path}, or use another JOBDIR"
        )


def _terms(text: str) -> str:
    lines = text.splitlines()
    shown = ", ".join(lines[:6]) + (", …" if len(lines) > 6 else "")
    return f"{shown} ({len(lines)} terms)"
