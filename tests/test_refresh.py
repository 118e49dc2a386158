"""A page that refreshes to itself is a page, not a redirect loop."""

from __future__ import annotations

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
