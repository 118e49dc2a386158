"""Store accepted pages, and the links found on every page, in MySQL without making the crawl
wait for the database, and without losing a row when the database goes away. A row the
database refuses for its data, or too big for its ``max_allowed_packet``, is set aside and
does not hold back the others."""

from __future__ import annotations

import functools
import logging
import shlex
import threading
import time
from collections import deque
from contextlib import suppress
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pymysql
from itemadapter import ItemAdapter
from pymysql.constants import ER
from scrapy.exceptions import CloseSpider, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.enterprise import adbapi
from twisted.internet import task

from topicspider import atomic
from topicspider.charset import readable, undecoded
from topicspider.exceptions import ConfigError
from topicspider.mysql import schema
from topicspider.mysql.spool import Segment, Spool, SpoolError, read, waiting
from topicspider.mysql.url import MySQLUrl
from topicspider.pipelines import NotStored, close_crawl, refetch_note
from topicspider.pipelines.files import SCRAPYD_JOB_ARGUMENT, job_folder
from topicspider.settingtypes import check_types
from topicspider.signals import links_discovered

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.base import DelayedCall
    from twisted.internet.defer import Deferred
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

CLOSE_REASON = "mysql_unavailable"
#: In ``JOBDIR``: the crawl id, for the crawl that resumes it.
CRAWL_ID_NAME = "mysql-crawl-id.txt"
SPOOL_CLOSE_REASON = "mysql_spool_error"

#: The most seconds a ``MYSQL_*`` time may be: a year, pymysql's bound on ``connect_timeout``
#: (and a socket's timeout must fit a ``time_t``).
MAX_SECONDS = 31_536_000


class MySQLUnavailable(CloseSpider):
    """The database or the spool cannot be used as the spider opens: the crawl does not start
    (reason ``mysql_unavailable``)."""

    def __init__(self, message: str) -> None:
        super().__init__(reason=CLOSE_REASON)
        self.message = message

    def __str__(self) -> str:
        return self.message


class _Connection(adbapi.Connection):
    """A pooled connection dropped after a failed write, and the next write connects
    afresh: a new session sees what changed since (MariaDB applies a database's grants to
    a session only at its next ``USE``: INSERT taken away and given back was refused for
    good). A rollback that fails because the server has gone is no error of its own: adbapi
    would log a traceback for each try; the pipeline reports an outage once."""

    def rollback(self) -> None:
        with suppress(pymysql.Error):
            self._connection.rollback()
        self._pool.disconnect(self._connection)


class _Pool(adbapi.ConnectionPool):
    """adbapi's pool, whose thread does not hold the process up when the reactor stops
    without the spider closing (a second Ctrl-C): adbapi's shutdown trigger waits for the
    thread, and a write stuck on a server that hangs held the process up to
    ``MYSQL_TIMEOUT``. The thread is a daemon, left to the interpreter's exit; the spool
    keeps every row the server has not committed. ``close`` still waits for it."""

    def start(self) -> None:
        if not self.running:
            self.threadpool.threadFactory = functools.partial(threading.Thread, daemon=True)
            self.threadpool.start()
            self.shutdownID = self._reactor.addSystemEventTrigger(
                "during", "shutdown", self._abandon
            )
            self.running = True

    def _abandon(self) -> None:
        self.shutdownID = None
        self.running = False


def _create_tables(connection: Any) -> None:
    with connection.cursor() as cursor:
        schema.create_tables(cursor)


def _write_segment(connection: Any, segment: Segment) -> schema.Written:
    """Runs in the pool's thread; adbapi commits when it returns, rolls back if it raises.
    Tables gone since the crawl made them (the database dropped and made again) are made
    again, as a first use makes them."""
    connection.ping(reconnect=True)  # the server may have restarted since the last write
    with connection.cursor() as cursor:
        try:
            return schema.write(cursor, read(segment.path))
        except pymysql.ProgrammingError as exc:
            if exc.args[0] != ER.NO_SUCH_TABLE:
                raise
        schema.create_tables(cursor)
        return schema.write(cursor, read(segment.path))


class MySQLPipeline:
    """Upsert each accepted page into ``pages`` and each page's scored out-links into
    ``links`` (from the ``links_discovered`` signal), in batches, from a thread of twisted's
    ``adbapi`` pool: the reactor never waits on the database.

    Every row is first appended to the spool (``MYSQL_SPOOL_DIR``); a batch is sealed every
    ``MYSQL_BATCH_SIZE`` rows or ``MYSQL_FLUSH_INTERVAL`` seconds and written, oldest first.
    When a write fails the crawl goes on, rows wait in the spool and the write is retried
    with a growing delay until the database is back. What the database has not taken when
    the spider closes stays in the spool for the next crawl or ``scrapy mysql-replay``.
    Under scrapyd each job spools into ``MYSQL_SPOOL_DIR/<job id>``, so that jobs run side
    by side; a crawl says when other folders there hold rows left behind.
    Rows the database refuses for their data (:func:`~topicspider.mysql.schema.refuses`),
    and rows whose upsert is bigger than the server's ``max_allowed_packet`` (sent, they
    would make it drop the connection, like an outage), are not retried: they go to the
    spool's ``rejected.jsonl``, each logged with its URL and counted in ``mysql/rejected``,
    and the rows around them are written.
    If the spool cannot be written (a full disk) the crawl stops, and the accepted pages
    that never reached it are named in one line at the end. Rows carry ``MYSQL_CRAWL_ID``,
    else scrapyd's job id, else the spider's name and start time, which a crawl resumed
    from ``JOBDIR`` takes over from the run it resumes (:data:`CRAWL_ID_NAME`).
    Off (``NotConfigured``) when ``MYSQL_URL`` is empty; ``ConfigError`` on settings
    :func:`check_settings` refuses.
    """

    def __init__(
        self,
        url: MySQLUrl,
        spool: Spool,
        stats: StatsCollector,
        *,
        crawl_id: str = "",
        crawl_id_file: Path | None = None,
        batch_size: int = 200,
        flush_interval: float = 1.0,
        retry_delay: float = 1.0,
        max_retry_delay: float = 30.0,
        close_timeout: float = 10.0,
        connect_timeout: float = 5.0,
        timeout: float = 30.0,
        crawler: Crawler | None = None,
    ) -> None:
        self.url = url
        self.spool = spool
        self.stats = stats
        self.crawl_id = crawl_id
        self.crawl_id_file = crawl_id_file
        self.batch_size = batch_size
        self.flush_interval = flush_interval
        self.retry_delay = retry_delay
        self.max_retry_delay = max_retry_delay
        self.close_timeout = close_timeout
        self.connect_timeout = connect_timeout
        self.timeout = timeout
        self.crawler = crawler
        self.pool: adbapi.ConnectionPool | None = None
        #: Sealed segments not yet written, oldest first.
        self._queue: deque[Segment] = deque()
        self._writing: Deferred[Any] | None = None
        self._retry: DelayedCall | None = None
        self._delay = retry_delay
        self._outage = False
        self._loop: task.LoopingCall | None = None
        self._closed = False
        # Holds the spider closing we start, so that it is not garbage-collected.
        self._closing: Deferred[None] | None = None
        #: Accepted pages that never reached the spool, it having failed: named at the end.
        self._not_spooled: list[str] = []
        #: Pages whose links never reached the spool, it having failed: named at the end.
        self._links_not_spooled: list[str] = []

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        if not settings.get("MYSQL_URL"):
            raise NotConfigured  # no message: the filesystem alone is the normal case
        check_settings(settings)
        job = getattr(crawler.spider, SCRAPYD_JOB_ARGUMENT, None)
        jobdir = None if settings.get("REDIS_URL") else settings.get("JOBDIR")  # Redis: unused
        pipeline = cls(
            MySQLUrl.parse(settings.get("MYSQL_URL")),
            Spool(settings.get("MYSQL_SPOOL_DIR"), job and job_folder(job, "MYSQL_SPOOL_DIR")),
            crawler.stats,
            crawl_id=settings.get("MYSQL_CRAWL_ID"),
            crawl_id_file=Path(jobdir, CRAWL_ID_NAME) if jobdir and not job else None,
            batch_size=settings.getint("MYSQL_BATCH_SIZE"),
            flush_interval=settings.getfloat("MYSQL_FLUSH_INTERVAL"),
            retry_delay=settings.getfloat("MYSQL_RETRY_DELAY"),
            max_retry_delay=settings.getfloat("MYSQL_RETRY_MAX_DELAY"),
            close_timeout=settings.getfloat("MYSQL_CLOSE_TIMEOUT"),
            connect_timeout=settings.getfloat("MYSQL_CONNECT_TIMEOUT"),
            timeout=settings.getfloat("MYSQL_TIMEOUT"),
            crawler=crawler,
        )
        crawler.signals.connect(pipeline.links_discovered, signal=links_discovered)
        return pipeline

    async def open_spider(self, spider: Spider | None = None) -> None:
        """Lock the spool and create the tables; if either fails, or tables an older version
        made lack columns, the crawl does not start."""
        spider = spider or (self.crawler and self.crawler.spider)
        try:
            leftovers = self.spool.open()
        except (SpoolError, ValueError) as exc:
            raise self._unavailable(f"{exc} (MYSQL_SPOOL_DIR)") from None
        pool = _Pool(
            "topicspider.mysql.connection",
            cp_min=1,
            cp_max=1,  # one writer: batches reach the database in the order they were sealed
            **self.url.connect_kwargs(),
            connect_timeout=self.connect_timeout,
            read_timeout=self.timeout,
            write_timeout=self.timeout,
        )
        pool.connectionFactory = _Connection
        try:
            await maybe_deferred_to_future(pool.runWithConnection(_create_tables))
        except (pymysql.Error, schema.SchemaError) as exc:
            pool.close()
            self.spool.close()
            raise self._unavailable(
                f"Cannot use the MySQL database {self.url} (MYSQL_URL): {exc}"
            ) from None
        self.pool = pool
        self.crawl_id = self.crawl_id or self._kept_crawl_id(default_crawl_id(spider))
        logger.info("Storing pages in MySQL at %s, crawl id %r", self.url, self.crawl_id)
        left = waiting(self.spool.root, self.spool.folder)
        if left:
            logger.info(
                "Rows other crawls left wait in %s: %s writes them",
                ", ".join(str(folder.absolute()) for folder in left),
                self._replay_command(),
            )
        if leftovers:
            self._spooled(leftovers)
            logger.info(
                "Writing first %d pages and %d links an earlier crawl left in %s",
                sum(s.counts[schema.PAGES] for s in leftovers),
                sum(s.counts[schema.LINKS] for s in leftovers),
                self.spool.folder,
            )
            self._queue.extend(leftovers)
        self._loop = task.LoopingCall(self._flush)
        self._loop.start(self.flush_interval, now=True)

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        record = schema.page_record(ItemAdapter(item), self.crawl_id)
        if not self._append([record]):
            self._not_spooled.append(record["row"]["url"])
            raise NotStored(f"Not in MySQL: the spool {self.spool.folder.absolute()} failed")
        return item

    def links_discovered(self, page_url: str, links: list[dict[str, Any]]) -> None:
        if links and not self._append(schema.link_records(page_url, links, self.crawl_id)):
            self._links_not_spooled.append(page_url)

    async def close_spider(self, spider: Spider | None = None) -> None:
        """Give the database up to ``MYSQL_CLOSE_TIMEOUT`` seconds to take what is left;
        the rest stays in the spool. Then the accepted pages that never reached the spool,
        if any, are named in one line, to be fetched again."""
        from twisted.internet import reactor  # here: the one Scrapy installed

        if self.pool is None:
            return
        self._closed = True
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        self._seal()
        if self._retry is not None:
            self._retry.reset(0)  # one more try now: the database may be back
        else:
            self._write_next()
        deadline = time.monotonic() + self.close_timeout
        while self._writing is not None or (self._queue and time.monotonic() < deadline):
            await maybe_deferred_to_future(task.deferLater(reactor, 0.05, lambda: None))
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        self.pool.close()
        self.spool.close()
        if self._queue:
            pages = sum(segment.counts[schema.PAGES] for segment in self._queue)
            links = sum(segment.counts[schema.LINKS] for segment in self._queue)
            self.stats.set_value("mysql/unwritten", pages)
            logger.warning(
                "MySQL at %s did not take %d pages and %d links: they are kept in %s, "
                "for %s to write first, or for %s",
                self.url,
                pages,
                links,
                self.spool.folder.absolute(),
                f"the job scheduled again with jobid={self.spool.job}"
                if self.spool.job
                else "the next crawl",
                self._replay_command(),
            )
        # An accepted page whose links are not there is fetched again (the second line says
        # how); one not accepted is not.
        self._name_unspooled(
            "links_not_spooled", self._links_not_spooled, "The links of %d fetched pages are"
        )
        self._name_unspooled(
            "not_spooled", self._not_spooled, "%d accepted pages are", refetch_note(self.crawler)
        )

    def _name_unspooled(self, stat: str, pages: list[str], what: str, note: str = "") -> None:
        """Count in ``mysql/<stat>``, and name in one line, the pages whose rows never
        reached the spool, it having failed (``what``: the line's start, for their number)."""
        if not pages:
            return
        self.stats.set_value(f"mysql/{stat}", len(pages))
        logger.error(
            "%s not in MySQL, the spool %s having failed: %s%s",
            what % len(pages),
            self.spool.folder.absolute(),
            " ".join(pages),
            note,
        )

    def _kept_crawl_id(self, crawl_id: str) -> str:
        """The crawl id of the crawl this one resumes (``JOBDIR``), else ``crawl_id``, kept
        for the crawls that will resume this one: a paused crawl stays one crawl in MySQL."""
        if self.crawl_id_file is None:
            return crawl_id
        try:
            kept = self.crawl_id_file.read_text("utf-8").strip()
        except FileNotFoundError:
            kept = ""
        except (OSError, UnicodeDecodeError) as exc:
            logger.warning("Cannot read the crawl id in %s: %s", self.crawl_id_file, exc)
            return crawl_id
        if kept:
            return kept
        try:
            atomic.replace(self.crawl_id_file, crawl_id.encode("utf-8"))
        except OSError as exc:
            logger.warning(
                "Cannot keep the crawl id in %s: %s; resumed, the crawl will store the rest "
                "of its rows under another id",
                self.crawl_id_file,
                exc,
            )
        return crawl_id

    # --- writing ---------------------------------------------------------------

    def _append(self, records: list[dict[str, Any]]) -> bool:
        """Spool ``records``; False if they are not: the spool failed, now or before."""
        if self._closed:
            return False
        try:
            self.spool.append(records)
        except OSError as exc:
            self._closed = True
            logger.error(
                "Cannot write to the MySQL spool %s (MYSQL_SPOOL_DIR): %s; closing the spider",
                self.spool.folder.absolute(),
                exc,
            )
            self._closing = close_crawl(self.crawler, SPOOL_CLOSE_REASON)
            return False
        if self.spool.pending >= self.batch_size:
            self._flush()
        return True

    def _flush(self) -> None:
        self._seal()
        self._write_next()

    def _seal(self) -> None:
        segment = self.spool.seal()
        if segment is None:
            return
        if self._outage:
            self._spooled([segment])
        self._queue.append(segment)

    def _write_next(self) -> None:
        """Write the oldest segment, unless a write is running or waiting to be retried."""
        if self._writing is not None or self._retry is not None or not self._queue:
            return
        assert self.pool is not None
        segment = self._queue[0]
        self._writing = self.pool.runWithConnection(_write_segment, segment)
        self._writing.addCallbacks(
            self._written, self._failed, callbackArgs=(segment,), errbackArgs=(segment,)
        )

    def _written(self, written: schema.Written, segment: Segment) -> None:
        self._writing = None
        self._queue.popleft()
        if not written.refused or self._set_aside(written.refused, segment):
            with suppress(OSError):  # left behind, it is written again, which changes nothing
                segment.path.unlink()
        counts = written.counts
        self.stats.inc_value("mysql/stored", counts[schema.PAGES])
        self.stats.inc_value("mysql/links", counts[schema.LINKS])
        if segment.spooled:
            self.stats.inc_value("mysql/replayed", counts[schema.PAGES])
        if self._outage:
            self._outage = False
            self._delay = self.retry_delay
            logger.info("MySQL at %s is back; writing what waited in the spool", self.url)
        self._write_next()

    def _failed(self, failure: Failure, segment: Segment) -> None:
        from twisted.internet import reactor  # here: the one Scrapy installed

        self._writing = None
        # Closing, the crawl waits MYSQL_CLOSE_TIMEOUT at most: retried at the first delay,
        # not at one the outage grew past that wait.
        delay = min(self._delay, self.retry_delay) if self._closed else self._delay
        self.stats.inc_value("mysql/errors")
        self._spooled(self._queue)
        if not failure.check(pymysql.Error, OSError):
            logger.error(
                "Writing %s to MySQL failed; retrying in %gs",
                segment.path,
                delay,
                exc_info=(failure.type, failure.value, failure.getTracebackObject()),
            )
        elif self._closed and not self._outage:
            logger.warning(
                "MySQL at %s failed as the crawl closes: %s. Rows it has not taken within "
                "MYSQL_CLOSE_TIMEOUT (%gs) stay in %s",
                self.url,
                failure.value,
                self.close_timeout,
                self.spool.folder.absolute(),
            )
        elif not self._outage:
            logger.warning(
                "MySQL at %s failed: %s. The crawl goes on; rows wait in %s and the write is "
                "retried in %gs, then less and less often",
                self.url,
                failure.value,
                self.spool.folder.absolute(),
                delay,
            )
        else:
            logger.debug("MySQL still failing: %s; retrying in %gs", failure.value, delay)
        self._outage = True
        self._retry = reactor.callLater(delay, self._retry_now)
        self._delay = min(self._delay * 2, self.max_retry_delay)

    def _set_aside(self, refused: list[schema.Refused], segment: Segment) -> bool:
        """Keep the rows the database refused in the spool's ``rejected.jsonl``, and say
        so, one line each. False if that file cannot be written: the segment then stays in
        the spool, for the next crawl or ``scrapy mysql-replay`` to write again."""
        self.stats.inc_value("mysql/rejected", len(refused))
        try:
            self.spool.reject([row.as_record() for row in refused])
        except OSError as exc:
            kept_in, kept = segment.path.absolute(), False
            logger.error("Cannot write %s: %s", self.spool.rejected.absolute(), exc)
        else:
            kept_in, kept = self.spool.rejected.absolute(), True
        for row in refused:
            logger.error(
                "MySQL at %s refused %s: %s; the row is kept in %s",
                self.url,
                row,
                row.error,
                kept_in,
            )
        return kept

    def _retry_now(self) -> None:
        self._retry = None
        self._write_next()

    def _spooled(self, segments: Iterable[Segment]) -> None:
        for segment in segments:
            if not segment.spooled:
                segment.spooled = True
                self.stats.inc_value("mysql/spooled", segment.counts[schema.PAGES])

    def _replay_command(self) -> str:
        root = shlex.quote(str(self.spool.root.absolute()))
        return f"`scrapy mysql-replay -s MYSQL_SPOOL_DIR={root}`"

    # --- errors ----------------------------------------------------------------

    def _unavailable(self, message: str) -> MySQLUnavailable:
        logger.error("%s; the crawl does not start", message)
        return MySQLUnavailable(message)


def check_settings(settings: BaseSettings) -> None:
    """Raise ``ConfigError``, in one line naming the setting, on a ``MYSQL_*`` value the
    pipeline or ``scrapy mysql-replay`` cannot use: a malformed ``MYSQL_URL``, an empty
    ``MYSQL_SPOOL_DIR``, a ``MYSQL_CRAWL_ID`` its column cannot hold, a number out of range.
    ``scrapy crawl`` and ``scrapy mysql-replay`` call it before they start."""
    if settings.get("MYSQL_URL"):
        MySQLUrl.parse(settings.get("MYSQL_URL"))
    if not settings.get("MYSQL_SPOOL_DIR"):
        raise ConfigError("MYSQL_SPOOL_DIR is empty: expected a folder")
    crawl_id = settings.get("MYSQL_CRAWL_ID") or ""
    if undecoded(crawl_id):  # GBK bytes under a UTF-8 locale: every row failed to spool
        raise ConfigError(f"MYSQL_CRAWL_ID={readable(crawl_id)!r}: not UTF-8 text")
    if len(crawl_id) > schema.CRAWL_ID_CHARS:
        raise ConfigError(
            f"MYSQL_CRAWL_ID={crawl_id[:20]!r}…: expected at most {schema.CRAWL_ID_CHARS} "
            f"characters, not {len(crawl_id)}"
        )
    check_types(settings)
    batch_size = settings.getint("MYSQL_BATCH_SIZE")
    if batch_size < 1:
        raise ConfigError(f"MYSQL_BATCH_SIZE={batch_size}: expected at least 1")
    for name in (
        "MYSQL_FLUSH_INTERVAL",
        "MYSQL_RETRY_DELAY",
        "MYSQL_CONNECT_TIMEOUT",
        "MYSQL_TIMEOUT",
    ):
        seconds = settings.getfloat(name)
        if not 0 < seconds <= MAX_SECONDS:
            raise ConfigError(f"{name}={seconds:g}: expected 0 < it <= {MAX_SECONDS} (seconds)")
    close_timeout = settings.getfloat("MYSQL_CLOSE_TIMEOUT")
    if not 0 <= close_timeout <= MAX_SECONDS:
        raise ConfigError(
            f"MYSQL_CLOSE_TIMEOUT={close_timeout:g}: expected 0 <= it <= {MAX_SECONDS} (seconds)"
        )
    retry_delay = settings.getfloat("MYSQL_RETRY_DELAY")
    max_retry_delay = settings.getfloat("MYSQL_RETRY_MAX_DELAY")
    if not retry_delay <= max_retry_delay <= MAX_SECONDS:
        raise ConfigError(
            f"MYSQL_RETRY_MAX_DELAY={max_retry_delay:g}: expected MYSQL_RETRY_DELAY "
            f"({retry_delay:g}) <= it <= {MAX_SECONDS} (seconds)"
        )


def default_crawl_id(spider: Spider | None) -> str:
    """scrapyd's job id, else the spider's name and the time it started (UTC)."""
    job = getattr(spider, "_job", None)
    if job:
        return str(job)
    name = getattr(spider, "name", None) or "crawl"
    return f"{name}-{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}"
