"""The crawl record: what every worker of a shared crawl must agree on, kept in Redis.

The first worker (the one given seeds) creates it; later workers join it. It holds the
keyword vector (so that every worker scores links alike), the number of partitions (so that
every worker files a site under the same one), the seen-set (so that every worker checks
the same fingerprints or the same Bloom bits), the link rules (so that no worker fetches
what another's ``deny`` keeps out) and the sites the crawl stays on (so that a worker
started without seeds follows the same links).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from redis.exceptions import AuthenticationError, InvalidResponse, NoPermissionError, ResponseError

from topicspider.exceptions import ConfigError
from topicspider.redis.connection import (
    UNAVAILABLE,
    crawl_id,
    get_client,
    key_prefix,
    masked_url,
    names_a_database,
)
from topicspider.redis.dupefilter import EXACT, seen_set
from topicspider.redis.partitions import parse_worker_partitions
from topicspider.redis.queue import CrawlGone
from topicspider.redis.scripts import ADD_DOMAINS, GONE, JOIN, READ_RECORD
from topicspider.seeds import SEEDS_FAILED_REASON
from topicspider.settingtypes import loaded

if TYPE_CHECKING:
    from collections.abc import Iterable

    from redis import Redis
    from scrapy.settings import BaseSettings

    from topicspider.keywords import KeywordVector

__all__ = ["CrawlRecord", "Joined", "LinkRules", "check_settings"]


@dataclass(frozen=True)
class LinkRules:
    """Which links the crawl follows: only those to its sites (``TOPIC_STAY_ON_SITE``), and
    those the spider's ``allow`` and ``deny`` regexes let through ("": none). Every worker
    pops links any worker found, so all must follow the same ones."""

    stay_on_site: bool = True
    allow: str = ""
    deny: str = ""

    def describe(self, names: list[str]) -> str:
        """The rules ``names`` as a user gives them: ``deny='p[0-9]*.html'``, ``no allow``."""
        shown = []
        for name in names:
            value = getattr(self, name)
            if name == "stay_on_site":
                shown.append(f"TOPIC_STAY_ON_SITE={value}")
            else:
                shown.append(f"{name}={shlex.quote(value)}" if value else f"no {name}")
        return ", ".join(shown)


@dataclass(frozen=True)
class Joined:
    """A worker's place in a crawl: whether it created it, and the sites it stays on
    (None: the crawl follows links to any site)."""

    created: bool
    domains: list[str] | None


class CrawlRecord:
    """``topicspider:<crawl id>:meta`` and ``:domains``, created or checked atomically."""

    def __init__(self, server: Redis, prefix: str, name: str) -> None:
        self.server = server
        self.prefix = prefix
        self.name = name
        self._join = server.register_script(JOIN)
        self._read = server.register_script(READ_RECORD)
        self._add_domains = server.register_script(ADD_DOMAINS)

    def join(
        self,
        keywords: str,
        partitions: int,
        domains: list[str] | None,
        has_seeds: bool,
        seen: str = EXACT,
        links: LinkRules | None = None,
    ) -> Joined | None:
        """Create the crawl (a worker with seeds) or join it; None if there is no crawl to
        join. ``domains``: the hosts of the worker's seeds it stays on. Raise ``ConfigError``
        if the worker's keywords, partitions, seen-set (``seen``, from
        ``redis.dupefilter.seen_set``) or link rules (default: ``LinkRules()``) differ."""
        links = links or LinkRules()
        answer = self._join(
            args=[
                self.prefix,
                keywords,
                partitions,
                int(links.stay_on_site),
                int(has_seeds),
                seen,
                links.allow,
                links.deny,
                *(domains or ()),
            ]
        )
        status, *rest = (value.decode() for value in answer)
        if status == "none":
            return None
        if status == "keywords":
            raise ConfigError(_keywords_differ(self.name, rest[0], keywords))
        if status == "partitions":
            raise ConfigError(_partitions_differ(self.name, rest[0], partitions))
        if status == "dupefilter":
            raise ConfigError(_seen_differs(self.name, rest[0], seen))
        if status == "links":
            stored = LinkRules(rest[0] == "1", rest[1], rest[2])
            raise ConfigError(_links_differ(self.name, stored, links))
        stay_on_site, *stored_domains = rest
        return Joined(status == "created", sorted(stored_domains) if stay_on_site == "1" else None)

    def add_domains(self, domains: Iterable[str]) -> None:
        """Sites the crawl keeps to from now on, for every worker (see ``domains``)."""
        keys = [f"{self.prefix}:domains", f"{self.prefix}:meta"]
        if self._add_domains(keys=keys, args=list(domains)) == GONE:
            raise CrawlGone

    def forget(self) -> None:
        """Delete the crawl's keys (``topicspider:<crawl id>:*``; see ``CRAWL_ID``) but
        ``P:ended``, set first: the workers still in it read there why it is gone
        (``RedisScheduler._lose``). Set after, a worker that found the crawl gone in between
        found no reason, and stopped as if Redis had lost the crawl (``crawl_lost``)."""
        ended = f"{self.prefix}:ended"
        self.server.set(ended, SEEDS_FAILED_REASON, ex=300)
        keys = [
            key
            for key in self.server.scan_iter(match=f"{self.prefix}:*", count=1000)
            if key != ended.encode()
        ]
        if keys:
            self.server.delete(*keys)

    def ended(self) -> str | None:
        """Why the crawl was removed, for a few minutes after (see :meth:`forget`)."""
        reason = self.server.get(f"{self.prefix}:ended")
        return reason.decode() if reason else None

    def domains(self) -> list[str]:
        """The sites the crawl keeps to: its seeds' hosts, those of the seeds of workers
        that joined later, and the hosts its seeds redirected to."""
        return sorted(domain.decode() for domain in self.server.smembers(f"{self.prefix}:domains"))

    def stored(self) -> tuple[str, int, str, LinkRules] | None:
        """The keyword vector (``KeywordVector.to_text()``), the number of partitions, the
        seen-set and the link rules of the crawl, if there is a crawl."""
        keywords, partitions, seen, stay_on_site, allow, deny = (
            value.decode() if value is not None else None
            for value in self._read(keys=[f"{self.prefix}:meta"])
        )
        if keywords is None:
            return None
        links = LinkRules(stay_on_site == "1", allow or "", deny or "")
        return keywords, int(partitions), seen or EXACT, links


def _keywords_differ(name: str, stored: str, given: str) -> str:
    def terms(text: str) -> str:
        lines = text.splitlines()
        shown = ", ".join(lines[:6]) + (", …" if len(lines) > 6 else "")
        return f"{shown} ({len(lines)} terms)"

    return (
        f"crawl {name!r} in Redis was started with other keywords: {terms(stored)};"
        f" this worker has {terms(given)}. Give every worker the same keywords, or set"
        " another TOPIC_CRAWL_ID"
    )


def _partitions_differ(name: str, stored: str | int, given: int) -> str:
    return (
        f"crawl {name!r} in Redis has TOPIC_PARTITIONS={stored}; this worker has {given}."
        " Give every worker of a crawl the same TOPIC_PARTITIONS, or set another TOPIC_CRAWL_ID"
    )


def _seen_differs(name: str, stored: str, given: str) -> str:
    return (
        f"crawl {name!r} in Redis keeps its seen URLs with {stored}; this worker has {given}."
        " Give every worker of a crawl the same dupefilter settings, or set another"
        " TOPIC_CRAWL_ID"
    )


def _links_differ(name: str, stored: LinkRules, given: LinkRules) -> str:
    names = [field.name for field in fields(LinkRules)]
    differ = [name for name in names if getattr(stored, name) != getattr(given, name)]
    return (
        f"crawl {name!r} in Redis was started with {stored.describe(differ)}; this worker has"
        f" {given.describe(differ)}. Give every worker of a crawl the same allow and deny"
        " arguments and TOPIC_STAY_ON_SITE, or set another TOPIC_CRAWL_ID"
    )


def _refused(url: str, reason: str) -> str:
    return (
        f"Redis at {masked_url(url)} (REDIS_URL) refused this worker ({reason.rstrip('.')});"
        " the crawl does not start"
    )


def _check_eviction(server: Redis, url: str) -> None:
    """Refuse a Redis that evicts keys without a TTL when full (``allkeys-*``): it would
    drop the crawl's record, queue, leases or seen-set at random, and the workers stop
    with ``crawl_lost`` or wait for requests no one holds. Without ``maxmemory`` Redis is
    never full. ``INFO`` may be denied to an ACL user: then nothing is checked."""
    try:
        memory = server.info("memory")
    except NoPermissionError:
        return
    policy = memory.get("maxmemory_policy", "noeviction")
    if str(policy).startswith("allkeys-") and int(memory.get("maxmemory") or 0):
        raise ConfigError(
            f"Redis at {masked_url(url)} (REDIS_URL) has maxmemory-policy {policy}: when full"
            " it evicts any key, the crawl's among them; give the crawl a Redis with"
            " maxmemory-policy noeviction (or a volatile-* policy); the crawl does not start"
        )


def check_params(settings: BaseSettings) -> None:
    """``REDIS_PARAMS`` is a JSON object, whose timeouts are seconds: redis-py would take
    ``-1`` and fail at the first command, with a traceback."""
    given = settings.get("REDIS_PARAMS")
    try:
        params = settings.getdict("REDIS_PARAMS")
    except (ValueError, TypeError):  # not JSON; a list, a number
        raise ConfigError(f"REDIS_PARAMS={given!r}: expected a JSON object") from None
    for name in ("socket_timeout", "socket_connect_timeout"):
        seconds = params.get(name)
        if seconds is not None and (
            isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0
        ):
            raise ConfigError(f"REDIS_PARAMS={given!r}: {name} is seconds, more than 0")


def check_settings(
    settings: BaseSettings,
    spider_name: str,
    keywords: KeywordVector,
    allow: str | None = None,
    deny: str | None = None,
) -> None:
    """Before a worker starts: the partition and dupefilter settings make sense (the
    dupefilter class loads), ``REDIS_URL`` names a database Redis has, the crawl id can be a
    key prefix, Redis accepts the credentials and lets the user run the crawl's scripts,
    and the keywords, seen-set and link rules (the spider's ``allow`` and ``deny``
    arguments, ``TOPIC_STAY_ON_SITE``) match the crawl's if it exists already. Raise
    ``ConfigError`` otherwise, naming ``REDIS_URL`` with its password masked. If Redis cannot
    be reached, the worker starts anyway and waits for it."""
    links = LinkRules(settings.getbool("TOPIC_STAY_ON_SITE"), allow or "", deny or "")
    partitions = settings.getint("TOPIC_PARTITIONS")
    parse_worker_partitions(settings.getlist("TOPIC_WORKER_PARTITIONS"), partitions)
    seen = seen_set(settings)
    if not isinstance(loaded(settings, "REDIS_DUPEFILTER_CLASS"), type):
        dupefilter = settings.get("REDIS_DUPEFILTER_CLASS")
        raise ConfigError(f"REDIS_DUPEFILTER_CLASS={dupefilter!r}: cannot be loaded (not a class)")
    url = settings.get("REDIS_URL")
    check_params(settings)
    try:
        named = names_a_database(url)
        server = get_client(settings)
    except ValueError as error:
        # urllib's errors may quote part of the URL, password included.
        reason = "expected redis://[[user]:password@]host[:port][/db]" if "@" in url else error
        raise ConfigError(f"REDIS_URL={masked_url(url)!r}: {reason}") from None
    try:
        server.connection_pool.make_connection()  # builds it, connects not
    except TypeError as error:  # "got an unexpected keyword argument 'bogus'"
        reason = str(error).rpartition("() ")[2]
        raise ConfigError(f"REDIS_PARAMS={settings.get('REDIS_PARAMS')!r}: {reason}") from None
    if not named:
        raise ConfigError(
            f"REDIS_URL={masked_url(url)!r}: the path is a database number, as in"
            " redis://host:6379/0"
        )
    record = CrawlRecord(server, key_prefix(settings, spider_name), crawl_id(settings, spider_name))
    try:
        stored = record.stored()
        _check_eviction(server, url)
    except InvalidResponse as error:  # another service on that port (SSH, SMTP, ...)
        raise ConfigError(
            _refused(url, f"it does not answer as Redis: {error}; is this Redis's port?")
        ) from None
    except AuthenticationError as error:  # a ConnectionError, but waiting will not help
        # Asked for none, Redis's answer is about its HELLO command, not about a password.
        given = server.connection_pool.connection_kwargs.get("password")
        reason = str(error) if given else "it asks for a password, and REDIS_URL gives none"
        raise ConfigError(_refused(url, reason)) from None
    except UNAVAILABLE:
        return
    except ResponseError as error:  # a database it does not have, an ACL that denies a command
        raise ConfigError(_refused(url, str(error))) from None
    finally:
        record.server.close()
    if stored is None:
        return
    stored_keywords, stored_partitions, stored_seen, stored_links = stored
    if stored_keywords != keywords.to_text():
        raise ConfigError(_keywords_differ(record.name, stored_keywords, keywords.to_text()))
    if stored_partitions != partitions:
        raise ConfigError(_partitions_differ(record.name, stored_partitions, partitions))
    if stored_seen != seen:
        raise ConfigError(_seen_differs(record.name, stored_seen, seen))
    if stored_links != links:
        raise ConfigError(_links_differ(record.name, stored_links, links))
