"""The spider's focus aids on a small site of their own: near-duplicates and noise URLs."""

from __future__ import annotations

import json

import pytest

from demo.site import serve
from tests.test_spider import crawl_seed, paths, read_jsonl

ARTICLE = (
    "<p>昨晚的足球比赛非常精彩，两队在上半场互有攻守，下半场主队连进两球锁定胜局。"
    "赛后主教练表示，球队的目标是冲击联赛冠军，年轻球员的表现令人满意。"
    "本赛季球队引进了三名外援，前锋线的冲击力明显增强，中场的传球成功率也有提高。"
    "门将在比赛最后十分钟做出两次关键扑救，帮助球队保住了胜利果实。</p>"
)


def page(title: str, body: str) -> str:
    return (
        f'<html><head><meta charset="utf-8"><title>{title}</title></head><body>{body}</body></html>'
    )


@pytest.fixture(scope="module")
def focus_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("focus-site")
    links = (
        '<p>本周足球比赛：<a href="/match.html">联赛第十轮比赛回顾</a>，'
        '<a href="/copy/match.html">同一场比赛的转载</a>，'
        '<a href="/match.html?print=1">打印本页比赛回顾</a>，'
        '<a href="/calendar.php?year=2031&amp;month=7">足球比赛日历</a>，'
        '<a href="/news.jsp;jsessionid=0AF3?id=9">足球新闻</a>。</p>'
    )
    (root / "index.html").write_text(page("足球比赛", ARTICLE + links), "utf-8")
    (root / "match.html").write_text(page("联赛第十轮比赛回顾", ARTICLE * 2), "utf-8")
    (root / "copy").mkdir()
    copy = ARTICLE * 2 + "<p>来源：转载自体育频道</p>"
    (root / "copy" / "match.html").write_text(page("联赛第十轮比赛回顾（转载）", copy), "utf-8")
    server, base = serve(root)
    yield base
    server.shutdown()


def test_near_duplicates_are_not_stored_and_noise_urls_not_fetched(focus_site, tmp_path):
    result = crawl_seed(f"{focus_site}/index.html", tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    fetched = paths(read_jsonl(tmp_path / "f.jsonl"))
    assert {"/index.html", "/match.html", "/copy/match.html"} == set(fetched)
    stored = paths(read_jsonl(tmp_path / "pages" / "index.jsonl"))
    assert len({"/match.html", "/copy/match.html"} & set(stored)) == 1
    assert "'topic/duplicate': 1" in result.stderr
    assert "'topic/noise_url': 3" in result.stderr


def test_duplicate_detection_can_be_turned_off(focus_site, tmp_path):
    result = crawl_seed(f"{focus_site}/index.html", tmp_path, "TOPIC_DUPLICATE_DISTANCE=-1")
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [
        json.loads(line) for line in (tmp_path / "pages" / "index.jsonl").open(encoding="utf-8")
    ]
    assert "/copy/match.html" in paths(rows)
