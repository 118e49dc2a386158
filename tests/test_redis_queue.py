"""The shared frontier (``RedisFrontier``), its seen-sets (exact set, Bloom filter) and the
crawl record against a real redis-server."""

from __future__ import annotations

import time
from collections import Counter
from itertools import count
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest
from redis_server import RedisServer
from scrapy import Request, Spider
from scrapy.settings import Settings
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from topicspider import settings as project_settings
from topicspider.exceptions import ConfigError
from topicspider.keywords import parse_inline
from topicspider.redis.connection import get_client
from topicspider.redis.crawl import CrawlRecord, LinkRules, check_settings
from topicspider.redis.dupefilter import RedisBloomDupeFilter, RedisTopicDupeFilter, seen_set
from topicspider.redis.partitions import partition_of
from topicspider.redis.queue import CHECK, FORCE, CrawlGone, RedisFrontier
from topicspider.redis.scheduler import RedisScheduler

PROJECT = {
    name: getattr(project_settings, name) for name in dir(project_settings) if name.isupper()
}
#: A small Bloom filter: 10,000 URLs at 0.1%.
BLOOM = {"TOPIC_DUPEFILTER": "bloom", "TOPIC_BLOOM_CAPACITY": 10_000}


class QueueSpider(Spider):
    name = "redis-queue-test"

    def parse(self, response):
        pass


_crawls = count()


@pytest.fixture
def prefix(redis_server):
    return f"topicspider:queue-test-{next(_crawls)}"


@pytest.fixture
def crawler(redis_server, prefix):
    """A crawler of the test's crawl (``prefix``) with the project's settings and a small
    Bloom filter, for the workers that use one."""
    return get_crawler(
        QueueSpider,
        {
            **PROJECT,
            **BLOOM,
            "REDIS_URL": redis_server.url,
            "TOPIC_CRAWL_ID": prefix.split(":", 1)[1],
        },
    )


@pytest.fixture
def make_frontier(crawler, prefix, redis_server):
    """Workers' frontiers of the test's crawl, which exists in Redis as the first worker,
    given seeds, creates it."""
    spider = QueueSpider()
    made = []
    CrawlRecord(redis_server.client(), prefix, prefix).join("", 1, None, has_seeds=True)

    def make(
        worker="w1",
        limit=2,
        delay=0.0,
        partitions=1,
        mine=(0,),
        bloom=False,
        cache=100_000,
        backlog=0,
        backlog_after=0,
    ):
        """A worker's frontier; ``bloom``: the crawl's seen-set is the Bloom filter that
        ``TOPIC_DUPEFILTER=bloom`` builds, else the exact set."""
        seen = RedisTopicDupeFilter.from_crawler(crawler) if bloom else None
        frontier = RedisFrontier(
            get_client(crawler.settings),
            spider,
            prefix,
            worker=worker,
            partitions=partitions,
            worker_partitions=mine,
            slot_of=lambda request: urlsplit(request.url).hostname,
            fingerprint=lambda request: crawler.request_fingerprinter.fingerprint(request).hex(),
            slot_concurrency=limit,
            parse_backlog=backlog,
            backlog_after=backlog_after,
            delay=delay,
            dupefilter_key=seen.key if seen else f"{prefix}:dupefilter",
            bloom=seen.bloom if seen else None,
            seen_cache=cache,
        )
        frontier.heartbeat(60)
        made.append(frontier)
        return frontier

    yield make
    for frontier in made:
        frontier.server.close()


def request(path: str, score: float, host: str = "a.test") -> Request:
    return Request(f"http://{host}/{path}", meta={"topic_score": score})


def take(frontier: RedisFrontier, wanted: int = 100) -> list[str]:
    """Pop up to ``wanted`` requests and acknowledge them at once."""
    frontier.step(wanted=wanted)
    taken = []
    while (item := frontier.pop()) is not None:
        taken.append(urlsplit(item.url).path.strip("/"))
    frontier.step(done=list(frontier.leases))
    return taken


def test_float_scores_highest_first_ties_first_in(make_frontier):
    frontier = make_frontier(limit=100)
    for name, score in [("low", 0.1), ("high", 0.9), ("mid", 0.5), ("mid2", 0.50001)]:
        frontier.push(request(name, score))
    for i in range(10):
        frontier.push(request(f"tie{i}", 0.3))
    frontier.push(request("seed", float("inf")))
    step = frontier.step()
    assert (step.added, step.queued) == (15, 15)
    assert take(frontier) == [
        "seed",
        "high",
        "mid2",
        "mid",
        *(f"tie{i}" for i in range(10)),
        "low",
    ]


def test_duplicates_are_dropped_and_a_better_link_raises_the_queued_score(make_frontier):
    one, other = make_frontier("w1", limit=100), make_frontier("w2", limit=100)
    for name, score in [("a", 0.2), ("b", 0.5), ("c", 0.4)]:
        one.push(request(name, score))
    one.step()
    assert not one.push(request("a", 0.1)), "this worker sent it already, with a better score"
    assert one.pending == 0
    assert not one.push(request("a", 0.9)), "a known page is not new..."
    assert one.pending == 1, "...but its better score is sent"
    other.push(request("c", 0.45))  # another worker finds c again, with a better link
    other.push(request("b", 0.1))  # and b with a worse one
    step = other.step()
    assert (step.added, step.rediscovered) == (0, 2)
    assert one.step().rediscovered == 1
    assert take(one) == ["a", "b", "c"]
    other.push(request("a", 1.0))  # fetched already: a duplicate
    assert other.step().duplicates == 1
    assert other.push(request("a", 0.5, "a.test").replace(dont_filter=True), FORCE)
    assert other.step().added == 1


def paths(frontier: RedisFrontier) -> list[str]:
    return [urlsplit(frontier.pop().url).path for _ in range(frontier.buffered)]


def test_per_host_concurrency_holds_across_workers_who_share_it(make_frontier):
    first, second = make_frontier("w1", limit=2), make_frontier("w2", limit=2)
    for i in range(5):
        first.push(request(f"a{i}", 0.9 - i / 100, "a.test"))
        first.push(request(f"b{i}", 0.1 - i / 100, "b.test"))
    # Two workers share each host's two connections: one each.
    first.step(wanted=10)
    assert paths(first) == ["/a0", "/b0"]
    second.step(wanted=10)
    assert paths(second) == ["/a1", "/b1"]
    first.step(wanted=10)
    assert paths(first) == [], "both hosts have two requests in flight"
    # The first worker finished a0: the slot is its own to take again, not the second's.
    first.step(done=[next(iter(first.leases))], wanted=10)
    assert paths(first) == ["/a2"]
    second.step(wanted=10)
    assert paths(second) == []


def test_a_slot_downloads_while_its_pages_are_parsed_up_to_the_backlog(make_frontier, prefix):
    """TOPIC_PARSE_BACKLOG=1, one connection per host: a page downloaded and being parsed
    frees its slot for one more download, cluster-wide; a dead worker's parsing page goes back."""
    first, second = make_frontier("w1", limit=1, backlog=1), make_frontier("w2", limit=1, backlog=1)
    for i in range(4):
        first.push(request(f"p{i}", 0.9 - i / 10))
    assert first.step(wanted=10).chosen_early == 0
    assert paths(first) == ["/p0"]
    p0 = next(iter(first.leases))
    second.step(wanted=10)
    assert paths(second) == [], "p0 is downloading"
    assert first.step(downloaded=[p0], wanted=10).chosen_early == 1  # topic/chosen_early
    assert paths(first) == ["/p1"], "p0 is being parsed: its slot downloads p1"
    p1 = next(request for request in first.leases if request is not p0)
    first.step(downloaded=[p1, p0], wanted=10)  # p0 again: reported once, counted once
    assert paths(first) == [], "two pages of the slot being parsed: the backlog is full"
    assert first.server.hget(f"{prefix}:parsing", "a.test") == b"2"
    first.step(done=[p0], wanted=10)
    assert paths(first) == ["/p2"]
    assert first.server.hget(f"{prefix}:parsing", "a.test") == b"1"
    # The first worker dies with p1 parsing and p2 downloading: both go back.
    first.heartbeat(0.2)
    time.sleep(0.3)
    assert second.heartbeat(60) == (2, True)
    assert not first.server.hexists(f"{prefix}:parsing", "a.test")
    assert not first.server.hexists(f"{prefix}:busy", "a.test")
    assert take(second, wanted=1) == ["p1"]


def test_the_backlog_waits_for_pages_that_change_no_choice(make_frontier):
    """TOPIC_PARSE_BACKLOG_AFTER=2: a slot downloads while its page is parsed once the last
    two pages judged, by any worker, sent it no request ahead of its best; one that does
    starts the count again."""
    first = make_frontier("w1", limit=1, backlog=1, backlog_after=2)
    second = make_frontier("w2", limit=1, backlog=1, backlog_after=2)
    for i in range(4):
        first.push(request(f"p{i}", 0.9 - i / 10))
    first.step(wanted=1)
    p0 = first.pop()
    first.step(downloaded=[p0], wanted=10)
    assert paths(first) == [], "no page judged yet: the crawl's start chooses late"
    first.push(request("behind", 0.1))
    first.step(links_queued=[p0], wanted=10)
    p1 = first.pop()
    first.step(downloaded=[p1], wanted=10)
    assert paths(first) == [], "one page judged of two"
    second.push(request("elsewhere", 0.1, host="b.test"))
    second.step(wanted=1)
    assert urlsplit(second.pop().url).hostname == "b.test"
    second.step(links_queued=list(second.leases))
    first.step(wanted=10)
    p2 = first.pop()
    assert urlsplit(p2.url).path == "/p2", "two pages judged, none went ahead: p1 is parsed"
    first.push(request("ahead", 0.95))
    first.step(links_queued=[p1], downloaded=[p2], wanted=10)
    assert paths(first) == [], "p1 sent a request ahead: the slot waits for p2's links"
    first.step(done=[p1, p2], wanted=10)
    assert paths(first) == ["/ahead"]


def test_a_page_whose_links_are_queued_frees_its_slot_but_keeps_its_lease(make_frontier, prefix):
    """Without a parse backlog a slot waits for its pages' links, not for their items to be
    stored; the lease holds until acknowledged, and goes back if its worker dies first."""
    first, second = make_frontier("w1", limit=1), make_frontier("w2", limit=1)
    for i in range(3):
        first.push(request(f"p{i}", 0.9 - i / 10))
    first.step(wanted=10)
    assert paths(first) == ["/p0"]
    p0 = next(iter(first.leases))
    first.step(downloaded=[p0], wanted=10)
    assert paths(first) == [], "no backlog: p0's links are not in yet"
    first.push(request("child", 0.95))
    first.step(links_queued=[p0, p0], wanted=10)  # reported twice, counted once
    assert paths(first) == ["/child"], "p0's links are in: the best of them is next"
    assert first.server.hget(f"{prefix}:busy", "a.test") == b"1"
    assert not first.server.hexists(f"{prefix}:parsing", "a.test")
    assert first.active == 2, "p0 is still leased until acknowledged"
    first.heartbeat(0.2)
    time.sleep(0.3)
    assert second.heartbeat(60) == (2, True)
    assert not first.server.hexists(f"{prefix}:busy", "a.test")
    assert take(second, wanted=1) == ["child"]
    assert take(second, wanted=1) == ["p0"]


def test_a_high_scoring_host_does_not_starve_the_others(make_frontier):
    frontier = make_frontier(limit=2)
    for i in range(10):
        frontier.push(request(f"top{i}", 0.9, "big.test"))
        frontier.push(request(f"low{i}", 0.05, "small.test"))
    frontier.step(wanted=4)
    hosts = [urlsplit(frontier.pop().url).hostname for _ in range(4)]
    assert hosts == ["big.test", "big.test", "small.test", "small.test"]


def test_download_delay_holds_across_workers(make_frontier):
    first, second = (
        make_frontier("w1", limit=10, delay=0.5),
        make_frontier("w2", limit=10, delay=0.5),
    )
    for i in range(3):
        first.push(request(f"p{i}", 0.5))
    assert first.step(wanted=10).ready_in == 0.5  # the slot it started waits out the delay
    assert first.buffered == 1, "one request per delay, even with room for more"
    held_back = second.step(wanted=10)
    assert second.buffered == 0
    assert 0 < held_back.ready_in <= 0.5, "when to ask again, not at the next poll"
    time.sleep(held_back.ready_in + 0.01)
    second.step(wanted=10)
    assert second.buffered == 1


def test_workers_serve_only_their_partitions(make_frontier):
    hosts = [f"www.site{i}.com" for i in range(20)]
    zero, one = (
        make_frontier("w0", mine=(0,), partitions=2),
        make_frontier("w1", mine=(1,), partitions=2),
    )
    for host in hosts:
        zero.push(request("page", 0.5, host))
    zero.step()
    zero.step(wanted=100)
    one.step(wanted=100)
    served = {
        worker: {urlsplit(f.pop().url).hostname for _ in range(f.buffered)}
        for worker, f in ((0, zero), (1, one))
    }
    assert served[0] | served[1] == set(hosts)
    assert served[0], "each worker has some sites"
    assert served[1]
    for worker, served_hosts in served.items():
        assert {partition_of(host, 2) for host in served_hosts} == {worker}


def test_requests_of_a_dead_worker_go_back_to_the_frontier(make_frontier):
    dead, alive = make_frontier("dead", limit=10), make_frontier("alive", limit=10)
    for i in range(4):
        dead.push(request(f"p{i}", 0.5 - i / 10))
    dead.heartbeat(0.3)
    dead.step(wanted=2)  # p0 and p1 leased to the dead worker, which never acknowledges
    assert dead.step().active == 2
    alive.heartbeat(0.3)
    time.sleep(0.2)
    assert alive.heartbeat(0.3) == (0, True)
    time.sleep(0.2)
    reclaimed, _ = alive.heartbeat(0.3)
    assert reclaimed == 2
    assert take(alive) == ["p0", "p1", "p2", "p3"], "given back in their place"


def test_a_worker_declared_dead_that_popped_since_gives_those_back_too(make_frontier):
    """Stalled past its lease (a pause, its own link down) while the others went on, the
    worker pops once more before its heartbeat tells it it was declared dead: it drops what
    it holds, and Redis queues that again. Before, those requests stayed leased to it,
    renewed by every heartbeat: never fetched, and the crawl never finished."""
    slow, other = make_frontier("slow", limit=2), make_frontier("other", limit=10)
    for i in range(3):
        other.push(request(f"p{i}", 0.5 - i / 10))
    other.step()
    slow.heartbeat(0.3)
    other.heartbeat(0.3)
    for _ in range(5):  # only the other worker is heard of
        time.sleep(0.1)
        other.heartbeat(0.3)
    assert slow.step(wanted=2).popped == 2
    assert slow.heartbeat(0.3) == (2, False)
    assert take(other) == ["p0", "p1", "p2"]
    assert other.step(done=list(other.leases)).active == 0


def test_a_pause_of_redis_kills_no_worker(make_frontier):
    first, second = make_frontier("w1"), make_frontier("w2")
    first.push(request("p", 0.5))
    first.heartbeat(0.2)
    second.heartbeat(0.2)
    first.step(wanted=1)
    time.sleep(0.4)  # no heartbeat from anyone for two leases, as when Redis is down
    assert second.heartbeat(0.2) == (0, True)
    assert first.heartbeat(0.2) == (0, True)
    assert first.step().active == 1


def test_scripts_redis_forgot_are_loaded_again(make_frontier, redis_server):
    """``SCRIPT FLUSH``, or a failover to a replica that never ran them: the next call meets
    NOSCRIPT and loads its script again (redis-py's ``Script``), nothing is lost."""
    frontier = make_frontier()
    frontier.push(request("p", 0.5))
    admin = redis_server.client()
    admin.script_flush()
    assert frontier.step(wanted=1).popped == 1
    admin.script_flush()
    assert frontier.heartbeat(60) == (0, True)
    admin.script_flush()
    assert frontier.step(done=[frontier.pop()]).acked == 1
    admin.script_flush()
    assert frontier.leave() == 0


def test_leaving_gives_back_what_was_not_started_and_resync_what_was_lost(make_frontier):
    frontier = make_frontier(limit=10)
    for i in range(5):
        frontier.push(request(f"p{i}", 0.5 - i / 10))
    frontier.step(wanted=3)
    started = frontier.pop()
    frontier.step(done=[started])
    assert frontier.leave() == 2
    other = make_frontier("w2", limit=10)
    other.step(wanted=2)
    other._buffer.clear()  # the answer to this pop was lost on the way
    assert other.resync() == 2
    assert take(other) == ["p1", "p2", "p3", "p4"]


def test_a_crawl_gone_from_redis_is_not_made_again(make_frontier, redis_server, prefix):
    """Deleted (``redis-cli del``), or Redis restarted without its data: a worker's round
    trips and heartbeat change nothing and say so. Before, they made a crawl again around
    the links sent, with an empty seen-set, and the workers called it finished when those
    ran out."""
    frontier = make_frontier()
    frontier.push(request("p", 0.5))
    frontier.step(wanted=1)
    page = frontier.pop()
    admin = redis_server.client()
    admin.delete(*admin.keys(f"{prefix}:*"))
    frontier.push(request("q", 0.4))
    with pytest.raises(CrawlGone):
        frontier.step(done=[page], wanted=1)
    with pytest.raises(CrawlGone):
        frontier.heartbeat(60)
    assert not admin.keys(f"{prefix}:*")


def test_crawl_record_created_joined_and_checked(redis_server, prefix):
    record = CrawlRecord(redis_server.client(), prefix, "topic")
    assert record.join("足球 3\n", 1, ["a.test"], has_seeds=False) is None
    created = record.join("足球 3\n", 1, ["a.test"], has_seeds=True)
    assert (created.created, created.domains) == (True, ["a.test"])
    joined = record.join("足球 3\n", 1, None, has_seeds=False)
    assert (joined.created, joined.domains) == (False, ["a.test"])
    with pytest.raises(ConfigError, match="other keywords: 足球 3"):
        record.join("篮球 3\n", 1, None, has_seeds=False)
    with pytest.raises(ConfigError, match="TOPIC_PARTITIONS=1; this worker has 4"):
        record.join("足球 3\n", 4, None, has_seeds=False)
    with pytest.raises(ConfigError, match="keeps its seen URLs with TOPIC_DUPEFILTER=exact;"):
        record.join("足球 3\n", 1, None, False, seen_set(Settings({**PROJECT, **BLOOM})))


#: The deny the tester gave one worker of two: the odd-numbered pages.
ODD = r"p[0-9]*[13579]\.html"


def test_crawl_record_refuses_other_link_rules(redis_server, prefix):
    """Before: a worker with its own deny joined, and fetched and stored the pages its deny
    keeps out; a joiner's TOPIC_STAY_ON_SITE was replaced by the crawl's."""
    record = CrawlRecord(redis_server.client(), prefix, "topic")
    record.join("足球 3\n", 1, ["a.test"], True, links=LinkRules(deny=ODD))
    joined = record.join("足球 3\n", 1, None, False, links=LinkRules(deny=ODD))
    assert (joined.created, joined.domains) == (False, ["a.test"])
    with pytest.raises(ConfigError) as refused:
        record.join("足球 3\n", 1, None, has_seeds=False)
    assert str(refused.value) == (
        r"crawl 'topic' in Redis was started with deny='p[0-9]*[13579]\.html'; this worker has"
        " no deny. Give every worker of a crawl the same allow and deny arguments and"
        " TOPIC_STAY_ON_SITE, or set another TOPIC_CRAWL_ID"
    )
    with pytest.raises(ConfigError, match="started with no allow; this worker has allow=/news/"):
        record.join("足球 3\n", 1, None, False, links=LinkRules(allow="/news/", deny=ODD))
    with pytest.raises(
        ConfigError,
        match="started with TOPIC_STAY_ON_SITE=True; this worker has TOPIC_STAY_ON_SITE=False",
    ):
        record.join("足球 3\n", 1, None, False, links=LinkRules(stay_on_site=False, deny=ODD))
    assert record.stored() == ("足球 3\n", 1, "TOPIC_DUPEFILTER=exact", LinkRules(deny=ODD))


def test_a_crawl_recorded_without_allow_and_deny_had_none(redis_server, prefix):
    """A crawl record older versions wrote: its stay-on-site flag, no allow, no deny."""
    record = CrawlRecord(redis_server.client(), prefix, "topic")
    record.join("足球 3\n", 1, None, True, links=LinkRules(stay_on_site=False))
    redis_server.client().hdel(f"{prefix}:meta", "allow", "deny")
    joined = record.join("足球 3\n", 1, None, False, links=LinkRules(stay_on_site=False))
    assert (joined.created, joined.domains) == (False, None)
    with pytest.raises(ConfigError, match="started with no deny; this worker has deny=/login"):
        record.join("足球 3\n", 1, None, False, links=LinkRules(stay_on_site=False, deny="/login"))
    with pytest.raises(ConfigError, match="started with TOPIC_STAY_ON_SITE=False; this worker"):
        record.join("足球 3\n", 1, None, has_seeds=False)


def test_link_rules_are_checked_before_the_crawl(redis_server, prefix):
    name = prefix.split(":", 1)[1]
    CrawlRecord(redis_server.client(), prefix, name).join(
        parse_inline("football:3").to_text(), 1, ["a.test"], True, links=LinkRules(deny=ODD)
    )
    settings = Settings({**PROJECT, "REDIS_URL": redis_server.url})
    keywords = parse_inline("football:3")
    check_settings(settings, name, keywords, deny=ODD)
    with pytest.raises(ConfigError) as refused:
        check_settings(settings, name, keywords, deny="/login")
    assert (
        rf"crawl '{name}' in Redis was started with deny='p[0-9]*[13579]\.html'; this worker"
        " has deny=/login." in str(refused.value)
    )
    with pytest.raises(
        ConfigError,
        match="started with TOPIC_STAY_ON_SITE=True; this worker has TOPIC_STAY_ON_SITE=False",
    ):
        check_settings(
            Settings({**settings, "TOPIC_STAY_ON_SITE": False}), name, keywords, deny=ODD
        )


def test_a_worker_closing_as_it_finds_its_crawl_gone_waits_for_nothing(
    make_frontier, crawler, redis_server, prefix, caplog
):
    """Before, it took the crawl being gone for Redis being down: it said it waited for
    Redis, waited ``REDIS_IDLE_TIMEOUT`` (3 minutes by default) while Redis answered, and
    ended saying Redis had stayed unreachable."""
    frontier = make_frontier("w1")
    record = CrawlRecord(frontier.server, prefix, prefix)
    no_engine = SimpleNamespace(stats=MemoryStatsCollector(crawler), engine=None, crawling=True)
    scheduler = RedisScheduler(
        no_engine,
        frontier,
        record,
        RedisTopicDupeFilter.from_crawler(crawler),
        seen="TOPIC_DUPEFILTER=exact",
        stay_on_site=False,
        drop_barren=True,
        concurrency=16,
        lease=60,
        idle_timeout=180,
        poll_interval=0.2,
    )
    scheduler._joined = True  # as ``open`` leaves it, in a crawl it joined
    frontier.push(request("found", 0.5))  # a link found, not yet sent
    admin = redis_server.client()
    admin.delete(*admin.keys(f"{prefix}:*"))  # deleted, or Redis restarted empty
    ended = []
    scheduler.close("shutdown").addBoth(ended.append)
    assert ended == [None], "the close waited"  # no reactor runs here: a wait never ends
    said = caplog.text
    assert "is no longer in Redis" in said
    assert "Waiting up to" not in said
    assert not admin.keys(f"{prefix}:*"), "the crawl was made again"


def test_a_crawl_gone_from_redis_takes_no_more_sites(redis_server, prefix):
    """A worker whose seed redirected to another site, after Redis restarted without its
    data: before, its ``SADD`` made ``P:domains`` again, for a crawl nobody runs."""
    record = CrawlRecord(redis_server.client(), prefix, "topic")
    record.join("足球 3\n", 1, ["a.test"], has_seeds=True)
    record.add_domains(["b.test"])
    assert record.domains() == ["a.test", "b.test"]
    admin = redis_server.client()
    admin.delete(*admin.keys(f"{prefix}:*"))
    with pytest.raises(CrawlGone):
        record.add_domains(["c.test"])
    assert not admin.keys(f"{prefix}:*")


def test_push_in_check_mode_is_the_default(make_frontier):
    frontier = make_frontier()
    assert frontier.push(request("x", 0.5), CHECK)
    assert frontier.step().added == 1


def test_worker_settings_are_checked_before_the_crawl(redis_server, prefix):
    name = prefix.split(":", 1)[1]
    CrawlRecord(redis_server.client(), prefix, name).join(
        parse_inline("football:3").to_text(), 1, None, True
    )
    settings = Settings({**PROJECT, "REDIS_URL": redis_server.url, "TOPIC_PARTITIONS": 1})
    check_settings(settings, name, parse_inline("football:3"))
    with pytest.raises(ConfigError, match="other keywords"):
        check_settings(settings, name, parse_inline("asyncio:3"))
    with pytest.raises(ConfigError, match="TOPIC_PARTITIONS=1; this worker has 4"):
        check_settings(
            Settings({**settings, "TOPIC_PARTITIONS": 4}), name, parse_inline("football:3")
        )
    with pytest.raises(ConfigError, match="TOPIC_WORKER_PARTITIONS: 1 is not a partition"):
        check_settings(
            Settings({**settings, "TOPIC_WORKER_PARTITIONS": "1"}), name, parse_inline("football:3")
        )
    with pytest.raises(ConfigError, match="REDIS_URL='http://x'"):
        check_settings(
            Settings({**settings, "REDIS_URL": "http://x"}), name, parse_inline("football:3")
        )
    unreachable = Settings({**settings, "REDIS_URL": "redis://127.0.0.1:1/0"})
    check_settings(unreachable, name, parse_inline("asyncio:3"))  # the worker will wait for Redis


def commands(redis_server: RedisServer) -> Counter:
    """Commands Redis ran so far, by name, including those run by scripts."""
    stats = redis_server.client().info("commandstats")
    return Counter({name.removeprefix("cmdstat_"): row["calls"] for name, row in stats.items()})


def ran(redis_server: RedisServer, before: Counter, *names: str) -> dict[str, int]:
    """How many of each command Redis ran since ``before`` (the INFO call itself aside)."""
    after = commands(redis_server)
    return {name: after[name] - before[name] for name in names}


def test_workers_share_the_bloom_filter_checked_in_one_round_trip_per_batch(
    make_frontier, crawler, redis_server, prefix
):
    one, other = make_frontier("w1", 100, bloom=True), make_frontier("w2", 100, bloom=True)
    one.step(), other.step()  # scripts loaded
    before = commands(redis_server)
    for i in range(50):
        one.push(request(f"p{i}", 0.5 - i / 100))
    step = one.step()
    assert (step.added, step.bloom_urls) == (50, 50)
    assert ran(redis_server, before, "evalsha", "bitfield", "sadd") == {
        "evalsha": 1,  # one round trip for the batch
        "bitfield": 50,  # one Bloom check-and-set per URL, inside the script
        "sadd": 0,  # no exact set
    }
    # The other worker finds p0 (still queued: only its score is raised) and a new page.
    other.push(request("p0", 0.9))
    other.push(request("new", 0.95))
    step = other.step()
    assert (step.added, step.rediscovered, step.bloom_urls) == (1, 1, 51)
    assert take(one)[:3] == ["new", "p0", "p1"]
    other.push(request("p1", 1.0))  # fetched by the first worker: a duplicate
    assert other.step().duplicates == 1

    state = redis_server.client()
    assert not state.exists(f"{prefix}:dupefilter")
    assert state.strlen(f"{prefix}:bloom") <= (one.bloom.bits.size + 7) // 8
    assert int(state.get(f"{prefix}:bloom:urls")) == 51

    # The dupefilter's own request_seen (for other callers) uses the same bits and count.
    dupefilter = RedisTopicDupeFilter.from_crawler(crawler)
    assert isinstance(dupefilter, RedisBloomDupeFilter)
    assert dupefilter.request_seen(request("p7", 0.1))
    assert not dupefilter.request_seen(request("elsewhere", 0.1))
    assert dupefilter.bloom.count == 52
    dupefilter.log(request("p7", 0.1), QueueSpider())
    assert not crawler.stats.get_value("dupefilter/filtered"), "RedisScheduler counts them"
    one.push(request("elsewhere", 0.1))
    assert one.step().duplicates == 1


def test_the_local_cache_spares_redis_the_links_found_again(make_frontier, redis_server):
    cached = make_frontier("w1", 100, bloom=True, cache=100)
    uncached = make_frontier("w2", 100, bloom=True, cache=0)
    cached.step(), uncached.step()  # scripts loaded
    links = [request(f"link{i}", 0.5) for i in range(40)]
    for worker in cached, uncached:
        for link in links:
            worker.push(link)
        worker.step()

    # Found again on other pages, with no better score.
    before = commands(redis_server)
    assert not any(cached.push(link) for link in links)
    assert cached.pending == 0, "nothing to send, so no round trip for them"
    assert ran(redis_server, before, "evalsha", "bitfield") == {"evalsha": 0, "bitfield": 0}

    before = commands(redis_server)
    for link in links:
        uncached.push(link)
    assert uncached.pending == 40
    assert uncached.step().rediscovered == 40
    assert ran(redis_server, before, "evalsha", "bitfield") == {"evalsha": 1, "bitfield": 40}


def test_dupefilter_settings_are_checked_before_the_crawl(redis_server, prefix):
    name = prefix.split(":", 1)[1]
    bloom = Settings({**PROJECT, **BLOOM, "REDIS_URL": redis_server.url})
    CrawlRecord(redis_server.client(), prefix, name).join(
        parse_inline("football:3").to_text(), 1, None, True, seen_set(bloom)
    )
    keywords = parse_inline("football:3")
    check_settings(bloom, name, keywords)
    for other, given in [
        ({"TOPIC_DUPEFILTER": "exact"}, "TOPIC_DUPEFILTER=exact"),
        ({"TOPIC_BLOOM_CAPACITY": 20_000}, "TOPIC_BLOOM_CAPACITY=20000"),
        ({"TOPIC_BLOOM_ERROR_RATE": "0.01"}, "TOPIC_BLOOM_ERROR_RATE=0.01 "),
    ]:
        with pytest.raises(ConfigError) as refused:
            check_settings(Settings({**bloom, **other}), name, keywords)
        assert (
            f"crawl '{name}' in Redis keeps its seen URLs with TOPIC_DUPEFILTER=bloom"
            " TOPIC_BLOOM_CAPACITY=10000 TOPIC_BLOOM_ERROR_RATE=0.001 (143776 bits, 10 hashes);"
            " this worker has " in str(refused.value)
        )
        assert given in str(refused.value).split("this worker has")[1]
    with pytest.raises(ConfigError, match="TOPIC_DUPEFILTER='fuzzy'"):
        check_settings(Settings({**bloom, "TOPIC_DUPEFILTER": "fuzzy"}), name, keywords)
    with pytest.raises(ConfigError, match="a Redis string holds at most"):
        check_settings(Settings({**bloom, "TOPIC_BLOOM_CAPACITY": 10**9}), name, keywords)
