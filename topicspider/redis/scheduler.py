"""Scrapy's scheduler for a crawl that many workers share through Redis (``REDIS_URL``).

``topicspider.scheduler.TopicScheduler`` hands over to ``RedisScheduler`` when ``REDIS_URL``
is set, so every worker runs the same ``scrapy crawl topic`` command. It ties the engine to
the shared frontier (:mod:`topicspider.redis.queue`):

- **one round trip per engine step**: links found, acknowledgements of finished requests
  and pops go to Redis together when the engine asks for a request;
- **leases**: a request is acknowledged only once it left the engine (parsed, its links
  queued) and its page's item is stored (a page that waits for the threshold to settle is
  leased till then, and given back if the worker stops first), and this worker renews its
  lease every ``REDIS_LEASE``/3 seconds; the requests of a worker that died go back to the
  frontier when its lease runs out;
- **waiting instead of finishing**: an idle worker stays (``DontCloseSpider``) while the
  frontier has requests or another worker has requests in flight, up to
  ``REDIS_IDLE_TIMEOUT``; the crawl is finished when neither is left;
- **Redis outages**: every round trip that fails for want of Redis is retried later; links
  and acknowledgements wait in memory, the engine waits for requests. One warning, and one
  line when Redis is back;
- **a crawl gone from Redis** (restarted without its data, or deleted): the worker stops with
  an error, rather than finish with what little its last pages lead to.

scrapy-redis's own ``Scheduler`` is not used: it pops one request per round trip with no
notion of download slots, in-flight work or idle workers, and its spiders read seeds with
``start_requests``, which Scrapy ≥ 2.13 replaced with ``start()``. Seeds here are ordinary
requests from ``start()``; the dupefilter makes sure they are queued once per crawl.
"""

from __future__ import annotations

import logging
import math
import os
import secrets
import socket
from time import monotonic
from typing import TYPE_CHECKING, Any, NamedTuple

from scrapy import signals
from scrapy.core.scheduler import BaseScheduler
from scrapy.exceptions import CloseSpider, DontCloseSpider
from scrapy.utils.asyncio import create_looping_call
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy.utils.reactor import CallLaterOnce
from twisted.internet.defer import Deferred
from twisted.internet.task import deferLater

from topicspider.barren import past_barren
from topicspider.engine import requests_in_progress, requests_unfinished, wake
from topicspider.exceptions import ConfigError
from topicspider.pqueues import LINKS_QUEUED_KEY
from topicspider.redis.connection import (
    UNAVAILABLE,
    address,
    crawl_id,
    explain,
    get_client,
    key_prefix,
)
from topicspider.redis.crawl import CrawlRecord, LinkRules
from topicspider.redis.dupefilter import RedisBloomDupeFilter, RedisDupeFilter, seen_set
from topicspider.redis.partitions import parse_worker_partitions
from topicspider.redis.queue import CHECK, FORCE, NEW, RESCORE, CrawlGone, RedisFrontier, Step
from topicspider.seeds import SEEDS_FAILED_REASON

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.dupefilters import BaseDupeFilter
    from typing_extensions import Self

logger = logging.getLogger(__name__)

__all__ = ["RedisScheduler"]

#: What ``_redis`` returns when Redis could not be reached.
DOWN = object()
#: The close reason of a worker whose settings do not match the crawl's in Redis.
MISMATCH_REASON = "crawl_mismatch"
#: The close reason of a worker whose crawl is no longer in Redis.
LOST_REASON = "crawl_lost"


class Leases(NamedTuple):
    """A worker's leases by how far the engine has taken them."""

    #: Downloaded, parsed and stored: to acknowledge.
    done: list[Request]
    #: Downloaded, being parsed: reported with ``TOPIC_PARSE_BACKLOG``, their slot may
    #: download again meanwhile.
    parsing: list[Request]
    #: Links all queued, item maybe still being stored or waiting for the threshold
    #: (``TopicSpider.requests_unstored``): they hold no slot in Redis.
    links_queued: list[Request]


def worker_id() -> str:
    """Unique per process and readable in Redis: ``host:pid:random``."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class RedisScheduler(BaseScheduler):
    """``SCHEDULER`` in Redis mode: the frontier and the dupefilter are the crawl's, in Redis."""

    def __init__(
        self,
        crawler: Crawler,
        frontier: RedisFrontier,
        record: CrawlRecord,
        dupefilter: BaseDupeFilter,
        *,
        seen: str,
        stay_on_site: bool,
        drop_barren: bool,
        concurrency: int,
        lease: float,
        idle_timeout: float,
        poll_interval: float,
    ) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.frontier = frontier
        self.record = record
        self.df = dupefilter
        #: The crawl's seen-set (``redis.dupefilter.seen_set``), checked by the crawl record.
        self.seen = seen
        #: ``TOPIC_STAY_ON_SITE``: with the spider's ``allow`` and ``deny``, the link rules
        #: the crawl record checks.
        self.stay_on_site = stay_on_site
        self.drop_barren = drop_barren
        #: The Redis set and Bloom filter are checked inside the frontier's script; others
        #: are asked.
        self.df_in_script = isinstance(dupefilter, (RedisDupeFilter, RedisBloomDupeFilter))
        self.concurrency = concurrency
        self.lease = lease
        self.idle_timeout = idle_timeout
        self.poll_interval = poll_interval
        self.retry_interval = max(poll_interval, 1.0)
        self.where = address(frontier.server)
        self._joined = False
        self._created = False
        self._refusal = ""
        self._closing = False
        self._next_pop_at = -math.inf
        self._wakeup = CallLaterOnce(self._tick)
        self._idle_since: float | None = None
        self._down_since: float | None = None
        self._last_try = -math.inf
        self._loops: list = []
        #: The sites the crawl keeps to as Redis last said (None: it follows links anywhere).
        self._domains: set[str] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        assert crawler.spider is not None
        assert crawler.engine is not None
        name = crawler.spider.name
        prefix = key_prefix(settings, name)
        server = get_client(settings)
        dupefilter = build_from_crawler(load_object(settings["REDIS_DUPEFILTER_CLASS"]), crawler)
        in_script = isinstance(dupefilter, (RedisDupeFilter, RedisBloomDupeFilter))
        partitions = settings.getint("TOPIC_PARTITIONS")
        fingerprinter = crawler.request_fingerprinter
        frontier = RedisFrontier(
            server,
            crawler.spider,
            prefix,
            worker=worker_id(),
            partitions=partitions,
            worker_partitions=parse_worker_partitions(
                settings.getlist("TOPIC_WORKER_PARTITIONS"), partitions
            ),
            slot_of=crawler.engine.downloader.get_slot_key,
            fingerprint=lambda request: fingerprinter.fingerprint(request).hex(),
            slot_concurrency=settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"),
            parse_backlog=settings.getint("TOPIC_PARSE_BACKLOG"),
            backlog_after=settings.getint("TOPIC_PARSE_BACKLOG_AFTER"),
            delay=settings.getfloat("DOWNLOAD_DELAY"),
            dupefilter_key=dupefilter.key if in_script else "",
            bloom=dupefilter.bloom if isinstance(dupefilter, RedisBloomDupeFilter) else None,
            seen_cache=settings.getint("REDIS_SEEN_CACHE"),
        )
        scheduler = cls(
            crawler,
            frontier,
            CrawlRecord(server, prefix, crawl_id(settings, name)),
            dupefilter,
            seen=seen_set(settings),
            stay_on_site=settings.getbool("TOPIC_STAY_ON_SITE"),
            drop_barren=settings.getbool("TOPIC_DROP_NOISE_URLS"),
            concurrency=settings.getint("CONCURRENT_REQUESTS"),
            lease=settings.getfloat("REDIS_LEASE"),
            idle_timeout=settings.getfloat("REDIS_IDLE_TIMEOUT"),
            poll_interval=settings.getfloat("REDIS_POLL_INTERVAL"),
        )
        crawler.signals.connect(scheduler.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(scheduler.spider_idle, signal=signals.spider_idle)
        return scheduler

    # --- opening and closing -------------------------------------------------------

    def open(self, spider: Spider) -> Deferred[None]:
        """Create or join the crawl in Redis (waiting for Redis if need be), then start
        renewing this worker's lease."""
        self.spider = spider
        return Deferred.fromCoroutine(self._open(spider))

    async def _open(self, spider: Spider) -> None:
        self.df.open()
        keywords = getattr(spider, "keywords", None)
        links = LinkRules(
            self.stay_on_site,
            getattr(spider, "allow", None) or "",
            getattr(spider, "deny", None) or "",
        )
        try:
            joined = await self._retrying(
                self.record.join,
                keywords.to_text() if keywords is not None else "",
                self.frontier.partitions,
                list(getattr(spider, "allowed_domains", None) or []),
                bool(getattr(spider, "seeds", None)),
                self.seen,
                links,
            )
        except ConfigError as error:
            logger.error("%s", error)
            self._refusal = MISMATCH_REASON
            return
        if joined is DOWN:
            self._refusal = "shutdown"
            return
        if joined is None:
            logger.info(
                "No crawl %r in Redis at %s to join: start it with a worker given seeds"
                " (-a seeds=...)",
                self.record.name,
                self.where,
            )
            self._refusal = "no_crawl"
            return
        spider.allowed_domains = joined.domains or []
        self._domains = set(joined.domains) if joined.domains is not None else None
        if await self._retrying(self.frontier.heartbeat, self.lease) is DOWN:
            self._refusal = self._refusal or "shutdown"
            return
        self._joined = True
        self._created = joined.created
        logger.info(
            "%s crawl %r in Redis at %s as worker %s (partitions %s)",
            "Started" if joined.created else "Joined",
            self.record.name,
            self.where,
            self.frontier.worker,
            self.frontier.worker_partitions,
        )
        for function, interval in ((self._tick, self.poll_interval), (self._beat, self.lease / 3)):
            loop = create_looping_call(function)
            loop.start(interval, now=False)
            self._loops.append(loop)

    def spider_opened(self) -> None:
        """Close at once if this worker has no crawl to work on. (Raised here rather than in
        ``open``: Scrapy opens the scraper after the scheduler, and cannot close it unopened.)"""
        if self._refusal:
            raise CloseSpider(self._refusal)

    def close(self, reason: str) -> Deferred[None]:
        """Send what is left, acknowledge the finished requests, give back the others."""
        self._closing = True
        self._wakeup.cancel()
        for loop in self._loops:
            if loop.running:
                loop.stop()
        return Deferred.fromCoroutine(self._close(reason))

    async def _close(self, reason: str) -> None:
        if self._joined and not self._refusal:  # a crawl gone from Redis takes nothing back
            wait = max(self.idle_timeout, self.lease)
            deadline = monotonic() + wait
            # A crawl found gone meanwhile (``_lose``, said) is no Redis to wait for.
            if (returned := self._redis(self._leave)) is DOWN and not self._refusal:
                logger.warning(
                    "Waiting up to %.0f s for Redis at %s to take the %d links this worker"
                    " found (a second Ctrl-C stops at once, without them)",
                    wait,
                    self.where,
                    self.frontier.pending,
                )
            while returned is DOWN and not self._refusal and monotonic() < deadline:
                await self._sleep(self.retry_interval)
                returned = self._redis(self._leave)
            if returned is DOWN and not self._refusal:
                logger.error(
                    "Redis at %s stayed unreachable: %d links this worker found were not"
                    " saved; the requests it held go back to the frontier when its lease ends",
                    self.where,
                    self.frontier.pending,
                )
            elif returned is not DOWN and returned:
                logger.info("Gave back %d requests this worker had not started", returned)
        self.df.close(reason)

    def _leave(self) -> int:
        self._count(self.frontier.step(self._leases().done, 0))
        while self.frontier.pending:
            self._count(self.frontier.step(self._leases().done, 0))
        return self.frontier.leave()

    # --- the engine's interface ----------------------------------------------------

    def has_pending_requests(self) -> bool:
        return not self._refusal and bool(self.frontier.buffered or self.frontier.pending)

    def enqueue_request(self, request: Request) -> bool:
        """Buffer the request for the next round trip. False if it is known to be a
        duplicate already (its score may still raise the queued copy's)."""
        if request.dont_filter:
            mode = FORCE
        elif self.df_in_script:
            mode = CHECK
        else:
            mode = RESCORE if self.df.request_seen(request) else NEW
        if not self.frontier.push(request, mode):
            self.df.log(request, self.spider)
            self.stats.inc_value("dupefilter/filtered")
            return False
        self.stats.inc_value("scheduler/enqueued/redis")
        self.stats.inc_value("scheduler/enqueued")
        return True

    def next_request(self) -> Request | None:
        """The next request popped, past those of URL templates found barren since they
        were queued (``TOPIC_DROP_NOISE_URLS``, as the local frontier drops them): never
        given to the engine, they are acknowledged with the next round trip."""
        if self._refusal:
            return None
        if not self.frontier.buffered and self._due():
            self._round_trip()
        pop = self.frontier.pop
        request, dropped = past_barren(self.crawler, pop) if self.drop_barren else (pop(), False)
        if request is not None:
            self._idle_since = None
            self.stats.inc_value("scheduler/dequeued/redis")
            self.stats.inc_value("scheduler/dequeued")
        elif dropped:
            wake(self.crawler.engine)  # acknowledge them and pop more now, not when a download ends
        return request

    def spider_idle(self) -> None:
        """Wait while the crawl is not finished; let the spider close once it is."""
        if self._closing or not self._joined:
            return
        if self._refusal:
            raise CloseSpider(self._refusal)
        if self._due():
            self._round_trip()
        if self._down_since is not None:
            self._idle_since = None  # waiting for Redis is not idleness
            raise DontCloseSpider
        if self.frontier.buffered or self.frontier.pending:
            wake(self.crawler.engine)
            raise DontCloseSpider
        queued, active = self.frontier.queued_everywhere, self.frontier.active
        if not queued and not active:
            judged = self._redis(self.frontier.judged_everywhere)
            if judged is DOWN:
                raise DontCloseSpider
            if judged:
                logger.info(
                    "Crawl %r is finished: nothing queued, no request in flight on any worker",
                    self.record.name,
                )
                return
            if self._created:
                # As a local crawl: no seed gave a page. The record goes, so that the same
                # command starts the crawl again instead of finding its seeds seen; the other
                # workers learn why from ``P:ended`` (see ``_lose``). Set first: the crawl
                # gone is then no ``_lose`` here, and ``_close`` gives nothing back.
                self._refusal = SEEDS_FAILED_REASON
                self._redis(self.record.forget)
                logger.error(
                    "No seed gave a page: nothing was crawled. Crawl %r is removed from Redis"
                    " at %s, so that the same command starts it again",
                    self.record.name,
                    self.where,
                )
                raise CloseSpider(SEEDS_FAILED_REASON)
        # Work elsewhere, or nothing judged yet: the worker that made the crawl may not have
        # queued its seeds yet, or is about to say that none gave a page (see ``_lose``).
        now = monotonic()
        if self._idle_since is None:
            self._idle_since = now
        if self.idle_timeout and now - self._idle_since >= self.idle_timeout:
            logger.info(
                "Nothing to do for %.0f s (%d requests queued, %d in flight elsewhere):"
                " leaving them to the other workers",
                now - self._idle_since,
                queued,
                active,
            )
            raise CloseSpider("idle_timeout")
        raise DontCloseSpider

    # --- round trips ---------------------------------------------------------------

    def _leases(self) -> Leases:
        """This worker's leases by how far the engine, and the spider's wait for the
        threshold, have taken them, in one pass."""
        in_progress = requests_unfinished(self.crawler.engine)
        downloading = self.crawler.engine.downloader.active if self.frontier.parse_backlog else ()
        leases = Leases([], [], [])
        for request in self.frontier.leases:
            if request not in in_progress:
                leases.done.append(request)
            elif request.meta.get(LINKS_QUEUED_KEY):
                leases.links_queued.append(request)
            elif self.frontier.parse_backlog and request not in downloading:
                leases.parsing.append(request)
        return leases

    def _due(self) -> bool:
        """Whether a round trip is worth it now: there is something to send, or the last
        pop came back short more than a poll interval ago."""
        now = monotonic()
        if self._down_since is not None:
            return now - self._last_try >= self.retry_interval
        if self.frontier.pending or now >= self._next_pop_at:
            return True
        leases = self._leases()
        return (
            bool(leases.done)
            or any(r not in self.frontier.downloaded for r in leases.parsing)
            or any(r not in self.frontier.links_queued for r in leases.links_queued)
        )

    def _round_trip(self) -> None:
        if not self._send_domains():
            return
        leases = self._leases()
        taken = requests_in_progress(self.crawler.engine)
        # A page that waits for the threshold is leased till its item is stored, out of the
        # engine: it takes no place among the requests the worker holds.
        holding = len(taken) - len(leases.parsing) - sum(r in taken for r in leases.links_queued)
        wanted = self.concurrency - holding - self.frontier.buffered
        step = self._redis(
            self.frontier.step, leases.done, wanted, leases.parsing, leases.links_queued
        )
        if step is DOWN:
            return
        self._count(step)
        if self._domains is not None and step.domains != len(self._domains):
            self._receive_domains()
        if step.popped >= wanted:
            self._next_pop_at = -math.inf
        elif step.ready_in is not None and step.ready_in < self.poll_interval:
            # A slot is only waiting out DOWNLOAD_DELAY: ask again the moment it may start,
            # not at the next poll, which would stretch every delay to the poll interval.
            self._next_pop_at = monotonic() + step.ready_in
            self._wakeup.schedule(step.ready_in)  # once, however many round trips come first
        else:
            self._next_pop_at = monotonic() + self.poll_interval

    def _send_domains(self) -> bool:
        """Sites this worker's spider took on (a seed redirected to another host) go to
        Redis before the requests for them, so that the worker that pops one fetches it.
        Whether Redis has them all."""
        if self._domains is None:
            return True
        added = set(self.spider.allowed_domains) - self._domains
        if added:
            if self._redis(self.record.add_domains, added) is DOWN:
                return False
            self._domains |= added
        return True

    def _receive_domains(self) -> None:
        """Other workers' sites, which this worker's offsite filter and link extraction must
        know before it fetches their pages."""
        domains = self._redis(self.record.domains)
        if domains is not DOWN:
            self._domains = set(domains)
            self.spider.allowed_domains = sorted(self._domains | set(self.spider.allowed_domains))

    def _count(self, step: Step) -> None:
        for stat, value in (
            ("dupefilter/filtered", step.duplicates),
            ("topic/rediscovered", step.rediscovered),
            ("topic/chosen_early", step.chosen_early),
        ):
            if value:
                self.stats.inc_value(stat, value)
        self.stats.set_value("topic/queued", step.queued)
        self.stats.set_value("topic/redis/in_flight", step.active)
        if isinstance(self.df, RedisBloomDupeFilter):
            self.df.counted(step.bloom_urls)

    def _redis(self, operation: Callable[..., Any], *args: Any) -> Any:
        """Run a Redis operation; if Redis is unavailable, say so once and return DOWN. DOWN
        too if the crawl is gone from Redis (see ``_lose``)."""
        self._last_try = monotonic()
        try:
            result = operation(*args)
        except UNAVAILABLE as error:
            if self._down_since is None:
                self._down_since = monotonic()
                self.stats.inc_value("topic/redis/outages")
                logger.warning(
                    "Redis at %s is unavailable (%s): waiting, and retrying every %.0f s",
                    self.where,
                    explain(error),
                    self.retry_interval,
                )
            return DOWN
        except CrawlGone:
            self._back()
            self._lose()
            return DOWN
        self._back()
        return result

    def _back(self) -> None:
        """Redis answers again: say so, and give back the pops whose answer was lost."""
        if self._down_since is None:
            return
        down, self._down_since = monotonic() - self._down_since, None
        logger.warning("Redis at %s is back after %.1f s", self.where, down)
        if self._joined and (returned := self._redis(self.frontier.resync)) not in (DOWN, 0):
            logger.info("Gave back %d requests whose pop was not answered", returned)

    def _lose(self) -> None:
        """The crawl, its frontier and seen-set with it, is gone from Redis: hand out no more
        requests and close once the engine is done with those it has (``spider_idle``).
        Carrying on would crawl again whatever this worker's last pages lead to, and call
        the crawl finished when they run out."""
        if self._refusal:
            return
        if self._redis(self.record.ended) == SEEDS_FAILED_REASON:
            # Another worker removed it: none of the crawl's seeds gave a page.
            self._refusal = SEEDS_FAILED_REASON
            logger.error("No seed gave a page: nothing was crawled (crawl %r)", self.record.name)
            return
        self._refusal = LOST_REASON
        self.stats.set_value("topic/queued", 0)
        logger.error(
            "Crawl %r is no longer in Redis at %s (Redis restarted without its data, the"
            " crawl was deleted, or Redis evicted its keys: see maxmemory-policy): its %d"
            " queued requests and its seen URLs are gone, and this"
            " worker stops. Run Redis with appendonly yes; start the crawl again with a worker"
            " given seeds",
            self.record.name,
            self.where,
            self.frontier.queued_everywhere,
        )

    async def _retrying(self, operation: Callable[..., Any], *args: Any) -> Any:
        """Retry until Redis answers, or until the crawl is stopped (Ctrl-C) or gone from
        Redis: DOWN then."""
        while (
            (result := self._redis(operation, *args)) is DOWN
            and self.crawler.crawling
            and not self._refusal
        ):
            await self._sleep(self.retry_interval)
        return result

    @staticmethod
    async def _sleep(seconds: float) -> None:
        from twisted.internet import reactor  # the installed one, known only at run time

        await deferLater(reactor, seconds)

    # --- timers --------------------------------------------------------------------

    def _tick(self) -> None:
        """Every ``REDIS_POLL_INTERVAL``: with nothing buffered, let the engine ask again
        (other workers may have freed a slot or queued links)."""
        if not self._closing and not self.frontier.buffered:
            wake(self.crawler.engine)

    def _beat(self) -> None:
        """Every ``REDIS_LEASE``/3: renew the lease; give back dead workers' requests."""
        result = self._redis(self.frontier.heartbeat, self.lease)
        if result is DOWN:
            return
        reclaimed, held = result
        if not held:
            logger.warning(
                "This worker's lease ran out (no heartbeat for %.0f s): its requests went back"
                " to the frontier and may be fetched again",
                self.lease,
            )
        if reclaimed:
            logger.info("Gave back %d requests of workers whose lease ran out", reclaimed)
            self.stats.inc_value("topic/redis/reclaimed", reclaimed)
            wake(self.crawler.engine)
