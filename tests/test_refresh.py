"""A page that refreshes to itself is a page, not a redirect loop."""

from __future__ import annotations

from typing import ClassVar
from urllib.parse import quote, unquote

import pytest

from tests.httpserver import Handler, serving
from tests.test_spider import crawl_seed, paths, read_jsonl

ARTICLE = "昨晚的足球比赛非常精彩，两队在上半场互有攻守，下半场主队连进两球锁定胜局。" * 3


def page(title: str, refresh: str = "", body: str = "") -> bytes:
    meta = f'<meta http-equiv="refresh" content="{refresh}">' if refresh else ""
    return (
        f'<html><head><meta charset="gbk">{meta}<title>{title}</title></head>'
        f"<body><p>{ARTICLE}</p>{body}</body></html>"
    ).encode("gbk")


class Portal(Handler):
    """A GBK sports portal: ``/`` refreshes to ``/index.html``, the front page, which
    reloads itself every minute; a gate that refreshes to itself at once; a JSP page that
    reloads itself under a new session id each time; articles."""

    gate_visits = 0
    sessions = 0

    def do_GET(self) -> None:
        links = (
            '<a href="/gate.html">足球比赛专题</a><a href="/news/1.html">足球比赛报道</a>'
            '<a href="/live/score.jsp">足球比赛直播</a>'
        )
        if self.path == "/robots.txt":
            self.send(b"", status=404)
        elif self.path == "/":
            self.send(page("体育频道", "60; url=/index.html"))
        elif self.path == "/index.html":
            self.send(page("体育频道 足球比赛", "60; url=/index.html", links))
        elif self.path == "/gate.html":
            Portal.gate_visits += 1
            self.send(page("足球比赛专题", "0; url=/gate.html"))
        elif self.path.startswith("/live/score.jsp"):
            Portal.sessions += 1
            self.send(page("足球比赛直播", f"30; url=/live/score.jsp;jsessionid={Portal.sessions}"))
        else:
            self.send(page("足球比赛报道"))


def test_a_front_page_that_reloads_itself_is_crawled(tmp_path):
    """Before: ``Not fetched …/: redirect loop (…/ -> …/index.html -> …/index.html -> …)``,
    ``No seed gave a page``, exit 1."""
    with serving(Portal) as url:
        result = crawl_seed(f"{url}/", tmp_path, "TOPIC_DUPLICATE_DISTANCE=-1")  # one article
    assert result.returncode == 0, result.stderr[-3000:]
    assert "redirect loop" not in result.stderr
    stored = paths(read_jsonl(tmp_path / "pages" / "index.jsonl"))
    assert sorted(stored) == ["/gate.html", "/index.html", "/live/score.jsp", "/news/1.html"]
    # A refresh to itself at once is followed once (a cookie gate); then it is the page.
    assert Portal.gate_visits == 2


def test_a_page_that_reloads_itself_under_a_new_session_id_is_crawled(tmp_path):
    """Its refresh leads to the page the seen-set knows (session ids left out). Before, the
    refresh was followed, then taken for a redirect loop, and the page was lost."""
    with serving(Portal) as url:
        result = crawl_seed(f"{url}/live/score.jsp", tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "redirect loop" not in result.stderr
    stored = paths(read_jsonl(tmp_path / "pages" / "index.jsonl"))
    assert stored == ["/live/score.jsp"]


class Redirecting(Handler):
    """GBK pages whose refresh Scrapy misread: one declaring no charset anywhere, whose
    target is a Chinese address; one whose refresh comes after 5 KB of inline script; one
    whose header names ``rot13``. Their targets are articles; requested paths are kept."""

    requested: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        path = unquote(self.path)
        Redirecting.requested.append(path)
        script = "<script>" + "var shown = 1;" * 400 + "</script>"
        gate = "<html><head>{}<meta http-equiv=refresh content='0; url={}'></head>"
        if path == "/robots.txt":
            self.send(b"", status=404)
        elif path == "/undeclared.html":
            self.send((gate.format("", "/新闻/足球.html") + "页面跳转中，请稍候").encode("gbk"))
        elif path == "/late.html":
            self.send(page("跳转", "").replace(b"<title>", (script + '<meta http-equiv="refresh"'
                      ' content="0; url=/late/target.html"><title>').encode()))  # fmt: skip
        elif path == "/rot13.html":
            self.send(gate.format("", "/rot13/target.html").encode(), "text/html; charset=rot13")
        else:
            self.send(page("足球比赛报道"))


@pytest.mark.parametrize(
    ("seed", "target"),
    [
        ("/undeclared.html", "/新闻/足球.html"),
        ("/late.html", "/late/target.html"),
        ("/rot13.html", "/rot13/target.html"),
    ],
)
def test_a_refresh_is_read_as_the_crawl_reads_the_page(seed, target, tmp_path):
    """Before: Scrapy read the undeclared GBK page as Thai (cp874) and asked for
    ``/ะยฮล/ืใว๒.html``; it read the first 4,096 characters only; and ``rot13`` was a
    ``LookupError``, the page not fetched."""
    Redirecting.requested = []
    with serving(Redirecting) as url:
        result = crawl_seed(f"{url}{seed}", tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert Redirecting.requested == ["/robots.txt", seed, target]
    assert paths(read_jsonl(tmp_path / "pages" / "index.jsonl")) == [quote(target)]
