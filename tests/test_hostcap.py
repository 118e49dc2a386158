"""TOPIC_MAX_PAGES_PER_HOST: no more pages from a host than the cap, whatever is queued."""

from __future__ import annotations

import pickle
import socket
import threading
from collections import Counter

import pytest
from scrapy import Request
from scrapy.http import Response
from scrapy.utils.test import get_crawler

from tests.httpserver import Handler, serving
from tests.test_spider import crawl_command, crawl_seed, read_jsonl, scrapy
from tests.test_spider_focus import ARTICLE, page
from topicspider.hostcap import HostFull, HostPageCapMiddleware
from topicspider.spiders.topic import TopicSpider


def test_a_host_gives_no_more_pages_than_its_cap(site, site_url, tmp_path):
    result = scrapy(*crawl_command(site_url, site, tmp_path, "TOPIC_MAX_PAGES_PER_HOST=12"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(read_jsonl(tmp_path / "fetch.jsonl")) == 12
    said = [line for line in result.stderr.splitlines() if "TOPIC_MAX_PAGES_PER_HOST" in line]
    assert len(said) == 1, said
    assert "127.0.0.1 has had its 12 pages" in said[0]
    assert "'topic/host_full_dropped'" in result.stderr
    assert result.stderr.count("has had its") == 1


def test_the_cap_holds_across_a_paused_crawl(site, site_url, tmp_path):
    jobdir = tmp_path / "job"
    command = crawl_command(
        site_url, site, tmp_path, f"JOBDIR={jobdir}", "TOPIC_MAX_PAGES_PER_HOST=15"
    )
    assert scrapy(*command, "-s", "CLOSESPIDER_PAGECOUNT=6").returncode == 0
    waiting = pickle.loads((jobdir / "spider.state").read_bytes())["waiting"]  # not said yet
    first = len(read_jsonl(tmp_path / "fetch.jsonl")) + len(waiting)
    assert 0 < first < 15
    assert scrapy(*command).returncode == 0
    assert len(read_jsonl(tmp_path / "fetch.jsonl")) == 15
    assert pickle.loads((jobdir / "spider.state").read_bytes())["host_downloads"] == {
        "127.0.0.1": 15
    }


def test_a_redirect_does_not_count_the_page_it_leads_to_does(site, site_url, redirect, tmp_path):
    seed = redirect(f"{site_url}{site.seed_path}")  # also on 127.0.0.1
    result = crawl_seed(seed, tmp_path, "TOPIC_MAX_PAGES_PER_HOST=3")
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(read_jsonl(tmp_path / "f.jsonl")) == 3


LINKS = "".join(f'<a href="/{n}.html">足球比赛{n}</a> ' for n in range(10))
FRONT = page("足球", f"{ARTICLE}<p>{LINKS}</p>").encode()


def _capped_crawl(seed_path: str, answer, tmp_path) -> tuple[list[str], Counter[str]]:
    """The pages a crawl with a cap of 3 parsed, and the requests the site answered;
    ``answer(handler, attempt)`` answers the seed's path, the rest are football pages."""
    served: Counter[str] = Counter()
    lock = threading.Lock()

    class Site(Handler):
        def do_GET(self) -> None:
            with lock:
                served[self.path] += 1
                attempt = served[self.path]
            if self.path == "/robots.txt":
                self.send(b"", status=404)
            elif self.path == seed_path:
                answer(self, attempt)
            elif self.path == "/home.html":
                self.send(FRONT)
            else:
                self.send(page("足球", f"{ARTICLE}<p>{self.path}</p>").encode())

    with serving(Site) as url:
        result = crawl_seed(f"{url}{seed_path}", tmp_path, "TOPIC_MAX_PAGES_PER_HOST=3")
    assert result.returncode == 0, result.stderr[-3000:]
    return [row["url"].removeprefix(url) for row in read_jsonl(tmp_path / "f.jsonl")], served


def test_a_retried_server_error_and_its_retry_count_once(tmp_path):
    """A 503 that Scrapy retries used a page of the cap, and its retry another."""

    def busy_first(handler: Handler, attempt: int) -> None:
        handler.send(b"busy", status=503) if attempt == 1 else handler.send(FRONT)

    parsed, served = _capped_crawl("/flaky.html", busy_first, tmp_path)
    assert served["/flaky.html"] == 2
    assert len(parsed) == 3, parsed
    assert parsed[0] == "/flaky.html"


def test_a_meta_refresh_counts_once_with_the_page_it_leads_to(tmp_path):
    """Scrapy follows a page's ``<meta refresh>`` as it follows a 302; the page that
    refreshed used a page of the cap besides."""
    refresh = b'<html><head><meta http-equiv="refresh" content="0; url=/home.html"></head></html>'

    parsed, served = _capped_crawl("/", lambda handler, attempt: handler.send(refresh), tmp_path)
    assert len(parsed) == 3, parsed
    assert parsed[0] == "/home.html"
    assert served["/"] == 1


def test_a_robots_txt_redirected_to_the_front_page_does_not_count(tmp_path):
    links = "".join(f'<a href="/{n}.html">足球比赛{n}</a> ' for n in range(5))
    front = page("足球", f"{ARTICLE}<p>{links}</p>").encode()

    class Site(Handler):
        def do_GET(self) -> None:
            if self.path == "/robots.txt":
                self.send(b"", status=302, Location="/")
            else:
                self.send(front)

    with serving(Site) as url:
        result = crawl_seed(f"{url}/", tmp_path, "TOPIC_MAX_PAGES_PER_HOST=3")
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(read_jsonl(tmp_path / "f.jsonl")) == 3


def test_a_page_from_the_http_cache_counts(site, site_url, tmp_path):
    command = crawl_command(
        site_url,
        site,
        tmp_path,
        "HTTPCACHE_ENABLED=True",
        f"HTTPCACHE_DIR={tmp_path / 'cache'}",
        "TOPIC_MAX_PAGES_PER_HOST=5",
    )
    assert scrapy(*command).returncode == 0
    second = scrapy(*command)
    assert second.returncode == 0
    assert "'httpcache/hit'" in second.stderr
    assert len(read_jsonl(tmp_path / "fetch.jsonl")) == 10  # 5 each run


def test_while_redis_is_away_a_worker_counts_alone(caplog):
    """REDIS_URL names a port nothing listens on: the cap still holds, counted locally."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    crawler = get_crawler(
        TopicSpider, {"REDIS_URL": f"redis://127.0.0.1:{port}", "TOPIC_MAX_PAGES_PER_HOST": 2}
    )
    cap = HostPageCapMiddleware.from_crawler(crawler)
    requests = [Request(f"http://127.0.0.1/{n}.html") for n in range(3)]
    for request in requests[:2]:
        cap.process_request(request)
    with pytest.raises(HostFull):
        cap.process_request(requests[2])
    said = [r.message for r in caplog.records if "Redis is unavailable" in r.message]
    assert len(said) == 1
    assert "counted by this worker alone until it is back" in said[0]


def _shared_cap(redis_server, crawl_id: str):
    """A cap of 2 pages per host for a crawl in Redis, and a client of that Redis."""
    settings = {
        "REDIS_URL": redis_server.url,
        "TOPIC_CRAWL_ID": crawl_id,
        "TOPIC_MAX_PAGES_PER_HOST": 2,
    }
    cap = HostPageCapMiddleware.from_crawler(get_crawler(TopicSpider, settings))
    client = redis_server.client()
    client.hset(f"topicspider:{crawl_id}:meta", "keywords", "asyncio 1")
    return cap, client


def test_a_crawl_gone_from_redis_is_counted_alone_and_not_made_again(redis_server):
    """Redis restarted without its data: the worker counts alone until its scheduler stops
    it; before, its counts made ``P:host_pages`` again, for a crawl nobody runs."""
    cap, client = _shared_cap(redis_server, "gone")
    cap.process_request(Request("http://127.0.0.1/1.html"))
    assert client.hgetall("topicspider:gone:host_pages") == {b"127.0.0.1": b"1"}
    client.flushall()
    cap.process_request(Request("http://127.0.0.1/2.html"))
    cap.process_request(Request("http://127.0.0.1/3.html"))
    with pytest.raises(HostFull):
        cap.process_request(Request("http://127.0.0.1/4.html"))
    assert client.keys("*") == []


def test_in_a_shared_crawl_a_redirect_and_a_failed_download_give_their_count_back(redis_server):
    """Before, giving a count back in Redis raised ``AttributeError``: the redirect was not
    followed and the host's count stayed up."""
    cap, client = _shared_cap(redis_server, "back")
    moved, failed = Request("http://127.0.0.1/old.html"), Request("http://127.0.0.1/1.html")
    cap.process_request(moved)
    cap.process_request(failed)
    assert client.hget("topicspider:back:host_pages", "127.0.0.1") == b"2"
    response = Response(moved.url, status=302, headers={"Location": "/new.html"})
    assert cap.process_response(moved, response) is response
    cap.process_exception(failed, ConnectionRefusedError())
    assert client.hget("topicspider:back:host_pages", "127.0.0.1") == b"0"
    # Once the crawl is gone from Redis, giving a count back makes none of it again.
    cap.process_request(failed := Request("http://127.0.0.1/2.html"))
    client.flushall()
    cap.process_exception(failed, ConnectionRefusedError())
    assert client.keys("*") == []
