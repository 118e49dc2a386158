"""Hostile and broken pages: the crawl goes on and says in its stats why a page was skipped."""

from __future__ import annotations

import os
import random

import pytest

from tests.httpserver import Handler, serving
from tests.test_spider import crawl_seed, paths, read_jsonl

ARTICLE = "昨晚的足球比赛非常精彩，两队在上半场互有攻守，下半场主队连进两球锁定胜局。" * 3
BIG = 50 * 1024 * 1024


def html(title: str, body: str, charset: str = "utf-8") -> bytes:
    return (
        f'<html><head><meta charset="{charset}"><title>{title}</title></head>'
        f"<body><p>{ARTICLE}</p>{body}</body></html>"
    ).encode(charset)


def hostile_links() -> str:
    long_path = "a" * 3000
    return "".join(
        f'<p>足球比赛 <a href="{href}">足球比赛链接</a></p>'
        for href in (
            "/wrong-charset.html",
            "/mixed.html",
            "/binary.html",
            "/big.html",
            "/truncated.html",
            "/redirect-loop",
            "/meta-loop.html",
            "/many-links.html",
            "javascript:alert(1)",
            "data:text/html,<p>足球</p>",
            "mailto:editor@example.invalid",
            f"/{long_path}.html",
            "/gbk-page.html",
            "/upper-case-type.html",
            "/deep.html",
            "/utf16-bom.html",
            "/utf16le.html",
            "/nul.html",
        )
    )


class Hostile(Handler):
    def do_GET(self):
        path = self.path
        if path == "/robots.txt":
            self.send(b"User-agent: *\nAllow: /\n", "text/plain")
        elif path == "/index.html":
            self.send(html("足球比赛", hostile_links()))
        elif path == "/wrong-charset.html":
            # GBK bytes, declared UTF-8 in the header and the page.
            self.send(
                html("足球比赛回顾", "", "gbk").replace(b"gbk", b"utf-8"),
                "text/html; charset=utf-8",
            )
        elif path == "/gbk-page.html":
            self.send(html("足球联赛新闻", "", "gbk"), "text/html")
        elif path == "/utf16-bom.html":
            self.send(html("足球周报", "").replace(b"utf-8", b"utf-16").decode().encode("utf-16"))
        elif path == "/utf16le.html":
            page = html("足球简讯", "").replace(b'<meta charset="utf-8">', b"")
            self.send(page.decode().encode("utf-16-le"), "text/html; charset=utf-16le")
        elif path == "/nul.html":
            # A NUL in a form's value, from a database field padded with them.
            body = '<form><input type="hidden" name="id" value="42\x00\x00"></form>'
            self.send(html("足球比赛快讯", body, "gbk"), "text/html; charset=gbk")
        elif path == "/upper-case-type.html":
            self.send(html("足球比赛报道", ""), "Text/HTML; Charset=UTF-8")
        elif path == "/deep.html":
            # Nested deeper than Python's recursion limit, with a script inside.
            depth = 1200
            nested = "<div>" * depth + "<script>var x;</script>" + "</div>" * depth
            self.send(html("足球比赛深层", nested))
        elif path == "/mixed.html":
            self.send(html("足球比赛", "").replace(b"</p>", "混合编码的比赛</p>".encode("gbk")))
        elif path == "/binary.html":
            self.send(random.Random(1).randbytes(20000))
        elif path == "/big.html":
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(BIG))
            self.end_headers()
            chunk = b"<p>" + "足球".encode() * 10000 + b"</p>"
            try:
                for _ in range(BIG // len(chunk)):
                    self.wfile.write(chunk)
            except OSError:
                pass  # the crawler hung up: what it should do
        elif path == "/truncated.html":
            self.send(html("足球比赛", "<div><p><a href='/index.html'>首页")[:-40])
        elif path == "/redirect-loop":
            self.send(b"", status=302, Location="/redirect-loop")
        elif path == "/meta-loop.html":
            self.send(
                b'<html><head><meta http-equiv="refresh" content="0; url=/meta-loop.html">'
                b"</head><body>football</body></html>"
            )
        elif path.startswith("/trap/list"):
            # ?page=N without end, each page on topic, with a calendar and a link to one
            # article under a new session id each time.
            page = int(path.rsplit("=", 1)[1]) if "=" in path else 1
            links = (
                f'<a href="/trap/list?page={page + 1}">下一页足球比赛</a>'
                f'<a href="/trap/cal?year=2031&amp;month={page % 12 + 1}">足球比赛日历</a>'
                f'<a href="/trap/news.jsp;jsessionid={page:08X}?id=1">足球新闻</a>'
            )
            self.send(
                html(f"足球比赛列表第{page}页", f"<p>第{page}页的比赛{page * 7919}</p>{links}")
            )
        elif path.startswith("/trap/news.jsp"):
            self.send(html("足球新闻", ""))
        elif path == "/many-links.html":
            links = "".join(f'<a href="/page-{i}.html">比赛{i}</a> ' for i in range(10000))
            self.send(html("足球比赛索引", f"<div>{links}</div>"))
        else:
            self.send(b"not found", "text/plain", status=404)

    do_HEAD = do_GET


@pytest.fixture(scope="module")
def hostile_url():
    with serving(Hostile) as url:
        yield url


def _stats(dump: str) -> dict:
    stats = {}
    for line in dump.splitlines():
        line = line.strip(" {},")
        if line.startswith("'") and "':" in line:
            key, value = line.split("':", 1)
            stats[key.strip("'")] = value.strip()
    return stats


def crawl(seed: str, tmp_path, *settings: str):
    """Near-duplicate detection off: the hostile pages share one article."""
    return crawl_seed(seed, tmp_path, "TOPIC_DUPLICATE_DISTANCE=-1", *settings)


def test_hostile_pages_are_skipped_with_reasons_and_the_crawl_goes_on(hostile_url, tmp_path):
    result = crawl(
        f"{hostile_url}/index.html", tmp_path, "CLOSESPIDER_PAGECOUNT=60", "RETRY_TIMES=0"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    stats = _stats(result.stderr.split("Dumping Scrapy stats:", 1)[1])
    assert int(stats["topic/skipped/binary"]) == 1
    assert int(stats["topic/links_truncated"]) == 1
    assert int(stats["topic/failed/DownloadCancelledError"]) == 1  # the 50 MB page
    assert int(stats["topic/failed/HttpError/404"]) >= 1
    assert "downloader/exception_type_count/scrapy.exceptions.IgnoreRequest" in stats or (
        "Cancelling download" in result.stderr or "maxsize" in result.stderr.lower()
    )
    assert "redirect" in result.stderr.lower()  # the loop is given up on, and said so
    assert int(stats.get("urllength/request_ignored_count", 0)) >= 1
    fetched = set(paths(read_jsonl(tmp_path / "f.jsonl")))
    assert "/big.html" not in fetched
    stored = {
        row["url"].rsplit("/", 1)[1]: row for row in read_jsonl(tmp_path / "pages" / "index.jsonl")
    }
    # Their hanzi are bytes of every value, NULs and control bytes too: before, not scored.
    assert stored["utf16-bom.html"]["title"] == "足球周报"
    assert stored["utf16le.html"]["title"] == "足球简讯"
    assert stored["utf16le.html"]["charset"] == stored["utf16-bom.html"]["charset"] == "utf-16-le"
    assert stored["wrong-charset.html"]["charset"] == "gb18030"
    assert stored["wrong-charset.html"]["title"] == "足球比赛回顾"
    assert stored["gbk-page.html"]["title"] == "足球联赛新闻"
    assert "mixed.html" in stored
    assert stored["nul.html"]["title"] == "足球比赛快讯"  # before, skipped as binary
    assert stored["upper-case-type.html"]["title"] == "足球比赛报道"  # media types ignore case
    assert stored["deep.html"]["title"] == "足球比赛深层"
    assert "truncated.html" in stored
    assert not any(name.startswith(("javascript", "data", "mailto")) for name in stored)
    assert os.path.getsize(tmp_path / "pages" / "index.jsonl") < 1_000_000


def test_spider_traps_are_bounded(hostile_url, tmp_path):
    result = crawl(f"{hostile_url}/trap/list", tmp_path, "TOPIC_MAX_PAGES_PER_HOST=30")
    assert result.returncode == 0, result.stderr[-3000:]
    fetched = paths(read_jsonl(tmp_path / "f.jsonl"))
    assert len(fetched) == 30, "the per-host cap bounds endless pagination"
    assert fetched.count("/trap/news.jsp") == 1, "one article under many session ids"
    assert fetched.count("/trap/list") == 29, "calendar URLs were followed"
    stats = _stats(result.stderr.split("Dumping Scrapy stats:", 1)[1])
    assert int(stats["topic/noise_url"]) >= 25
    assert int(stats["topic/host_capped"]) >= 1


def test_links_queued_to_a_dead_folder_are_given_up_after_30_failures(hostile_url, tmp_path):
    """The index links a thousand pages of one template, all 404."""
    result = crawl(f"{hostile_url}/many-links.html", tmp_path, "RETRY_TIMES=0")
    assert result.returncode == 0, result.stderr[-3000:]
    stats = _stats(result.stderr.split("Dumping Scrapy stats:", 1)[1])
    assert 30 <= int(stats["topic/failed/HttpError/404"]) <= 32  # and those in flight
    assert int(stats["topic/noise_url"]) >= 950
    assert result.stderr.count("Not fetched") == int(stats["topic/failed/HttpError/404"])


def test_depth_limit_bounds_a_trap_without_a_cap(hostile_url, tmp_path):
    result = crawl(f"{hostile_url}/trap/list", tmp_path, "DEPTH_LIMIT=12")
    assert result.returncode == 0, result.stderr[-3000:]
    fetched = paths(read_jsonl(tmp_path / "f.jsonl"))
    assert sorted(fetched) == ["/trap/list"] * 13 + ["/trap/news.jsp"]
