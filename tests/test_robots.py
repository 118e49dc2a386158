"""A robots.txt that cannot be downloaded: one line, and the crawl goes on; a server error
for it: one line, and the host is not crawled; one that Scrapy would misread (in GBK, huge)
read as the site meant it."""

from __future__ import annotations

import gzip
from urllib.parse import unquote

import pytest

from demo.site import serve
from tests.httpserver import Handler, serving
from tests.test_spider import crawl_seed, read_jsonl
from tests.test_spider_focus import ARTICLE, page


@pytest.fixture
def site_without_robots(site):
    """The fixture site, but a request for robots.txt gets its connection closed unanswered."""
    server, url = serve(site.root)

    class NoRobots(server.RequestHandlerClass):
        def do_GET(self) -> None:
            if self.path == "/robots.txt":
                self.close_connection = True
                return
            super().do_GET()

    server.RequestHandlerClass = NoRobots
    yield url
    server.shutdown()
    server.server_close()


def test_a_site_whose_robots_txt_fails_is_crawled_and_said_so_in_one_line(
    site, site_without_robots, tmp_path
):
    result = crawl_seed(f"{site_without_robots}{site.seed_path}", tmp_path, "RETRY_TIMES=0")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    robots = f"{site_without_robots}/robots.txt"
    warnings = [line for line in result.stderr.splitlines() if f"Not fetched {robots}" in line]
    assert len(warnings) == 1, result.stderr[-3000:]
    assert "as if it allowed all" in warnings[0]
    assert " ERROR: " not in result.stderr  # not Scrapy's "Gave up retrying" too
    assert len(read_jsonl(tmp_path / "pages" / "index.jsonl")) >= 10


def test_an_unreachable_seed_is_one_line_per_request_not_a_traceback(tmp_path):
    seed = "http://127.0.0.1:9/"
    result = crawl_seed(seed, tmp_path, "RETRY_TIMES=0")
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert f"Not fetched {seed}robots.txt (the host's pages are fetched as if" in result.stderr
    assert f"WARNING: Not fetched {seed}: Connection was refused" in result.stderr


def serve_site(robots):
    """A football front page linking its reports, with ``robots(handler)`` answering for
    robots.txt."""
    reports = ["/a.html", "/搜索?q=足球", "/private/b.html", "/late/c.html"]
    links = "".join(f'<a href="{url}">足球比赛{n}</a> ' for n, url in enumerate(reports))
    front = page("足球", f"{ARTICLE}<p>{links}</p>").encode()

    class Site(Handler):
        def do_GET(self) -> None:
            if self.path == "/robots.txt":
                robots(self)
            else:
                self.send(front)

    return serving(Site)


def crawl_site(robots, tmp_path):
    with serve_site(robots) as url:
        result = crawl_seed(f"{url}/", tmp_path, "RETRY_TIMES=0")
    assert result.returncode == 0, result.stderr[-2000:]
    fetched = [unquote(row["url"].removeprefix(url)) for row in read_jsonl(tmp_path / "f.jsonl")]
    return result.stderr, url, sorted(fetched)


def test_a_robots_txt_that_gives_a_server_error_forbids_the_host_said_in_one_line(tmp_path):
    """RFC 9309: a server error for robots.txt means complete disallow. Before, the host was
    crawled as if it allowed all (Scrapy reads the error page as the rules)."""
    error_page = b"<html><body><h1>503 Service Unavailable</h1></body></html>"
    with serve_site(lambda site: site.send(error_page, status=503)) as url:
        result = crawl_seed(f"{url}/", tmp_path, "RETRY_TIMES=0")
    assert result.returncode == 1, result.stderr[-2000:]
    assert not read_jsonl(tmp_path / "f.jsonl")
    said = [line for line in result.stderr.splitlines() if "robots.txt" in line]
    assert said[0].endswith(
        f"WARNING: {url}/robots.txt answered HTTP 503 Service Unavailable: the host's pages are"
        " not fetched (RFC 9309: a server error for robots.txt means complete disallow;"
        " ROBOTSTXT_OBEY=False fetches them)"
    )
    assert "'robotstxt/forbidden': 1" in result.stderr
    assert "No seed gave a page" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_robots_txt_answered_too_many_requests_is_said_in_one_line_not_read(tmp_path):
    """A status Scrapy retries that is no server error (429): the rules are not known, and
    the host is crawled as if it allowed all; the answer is not read as rules."""
    answer = b"<html><body><pre>\nUser-agent: *\nDisallow: /\n</pre></body></html>"
    log, url, fetched = crawl_site(lambda site: site.send(answer, status=429), tmp_path)
    assert fetched == ["/", "/a.html", "/late/c.html", "/private/b.html", "/搜索?q=足球"]
    said = [line for line in log.splitlines() if "robots.txt" in line and "Not fetched" in line]
    assert len(said) == 1, log[-3000:]
    assert (
        f"WARNING: Not fetched {url}/robots.txt (the host's pages are fetched as if it" in said[0]
    )
    assert said[0].endswith("): HTTP 429 Too Many Requests")
    assert " ERROR: " not in log


def test_a_robots_txt_in_gbk_forbids_what_it_says_not_the_whole_site(tmp_path):
    robots = "User-agent: *\n# 不抓取站内搜索\nDisallow: /搜索\nDisallow: /private/\n"
    log, _, fetched = crawl_site(
        lambda site: site.send(robots.encode("gbk"), "text/plain"), tmp_path
    )
    assert fetched == ["/", "/a.html", "/late/c.html"]
    assert "'robotstxt/forbidden': 2" in log


def test_a_robots_txt_in_utf16_its_header_names_forbids_what_it_says(tmp_path):
    """Without a byte order mark, UTF-16 is valid UTF-8 too (ASCII and NUL bytes): it was
    handed on as it was, and read as no rules at all."""
    robots = "User-agent: *\nDisallow: /private/\n".encode("utf-16-le")
    log, _, fetched = crawl_site(
        lambda site: site.send(robots, "text/plain; charset=utf-16le"), tmp_path
    )
    assert "/private/b.html" not in fetched
    assert "'robotstxt/forbidden': 1" in log


def test_a_huge_robots_txt_is_read_up_to_500_kib_as_google_reads_it(tmp_path):
    """Past that, its rules are not obeyed: parsing megabytes of them would hold the crawl."""
    padding = "".join(f"Disallow: /archive/{n}/\n" for n in range(30_000))
    robots = f"User-agent: *\nDisallow: /private/\n{padding}Disallow: /late/\n".encode()
    assert len(robots) > 600 * 1024
    log, url, fetched = crawl_site(lambda site: site.send(robots, "text/plain"), tmp_path)
    assert fetched == ["/", "/a.html", "/late/c.html", "/搜索?q=足球"]
    assert f"{url}/robots.txt is {len(robots) // 1024} KiB: only its first 500 KiB are read" in log


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_a_robots_txt_not_in_the_encoding_its_header_says_is_read_as_sent(tmp_path, coding):
    """Plain text said to be gzip (a server's misconfiguration): Scrapy's decompression
    raised, an ERROR with a traceback of sixty lines named the front page, not robots.txt,
    and its rules were not obeyed."""
    robots = b"User-agent: *\nDisallow: /private/\n"
    log, url, fetched = crawl_site(
        lambda site: site.send(robots, "text/plain", **{"Content-Encoding": coding}), tmp_path
    )
    assert "/private/b.html" not in fetched
    assert "Traceback" not in log
    assert " ERROR: " not in log
    said = [line for line in log.splitlines() if "robots.txt" in line and "WARNING" in line]
    assert said == [
        said[0].split(" [", 1)[0]
        + f" [topicspider.robots] WARNING: {url}/robots.txt is not the {coding} its"
        " Content-Encoding header says: read as sent"
    ]


def test_a_compressed_robots_txt_is_read(tmp_path):
    robots = gzip.compress(b"User-agent: *\nDisallow: /private/\n")
    log, _, fetched = crawl_site(
        lambda site: site.send(robots, "text/plain", **{"Content-Encoding": "gzip"}), tmp_path
    )
    assert "/private/b.html" not in fetched
    assert "WARNING" not in log
