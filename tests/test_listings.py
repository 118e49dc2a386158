import pickle
from urllib.parse import urlsplit

import pytest
from scrapy.http import HtmlResponse, Request
from scrapy.utils.test import get_crawler

from tests.test_redis_crawl import assert_finished_cleanly, start
from tests.test_settingtypes import PROJECT
from tests.test_spider import paths, read_jsonl
from tests.test_spider_focus import ARTICLE, ONE_AT_A_TIME, crawl, page, served
from topicspider import listings
from topicspider.analysis import Analyzer
from topicspider.items import PageItem
from topicspider.keywords import parse_inline
from topicspider.listings import LISTED_KEY, TopicalLists
from topicspider.signals import links_discovered, page_scored
from topicspider.spiders.topic import TUNNEL_KEY, TopicSpider

KEYWORDS = "足球:3,比赛:2"
#: The league's standings: a page of the league that says 比赛 once, and 足球 never.
STANDINGS = (
    "<p>联赛积分榜：红星队十胜二平，积二十四分，蓝海队九胜三平，积三十分，"
    "白云队八胜四负，积二十八分。本轮比赛过后，前三名的分差缩小到两分，"
    "下周三补赛一场。降级区的三支球队仍在争取保级，各队的净胜球和"
    "胜负关系将决定最后的排名，球票已在售票点和网上开售，票价与上季相同。</p>"
)
#: The editor's notes: as little about football as the standings, and on no list of it.
NOTES = (
    "<p>编辑手记：本周的读者来信很多，有人问起联赛的票价，有人想知道球场周边的交通，"
    "也有人关心周末的天气。地铁二号线在比赛日加开夜班车，公交也有三条专线，"
    "停车场的车位需要提前预约，球场周边的餐馆营业到深夜，售票点周末照常营业。</p>"
)
MENU = (
    '<p><a href="/index.html">首页</a> | <a href="/news.html">新闻</a>'
    ' | <a href="/ads.html">广告</a></p>'
)
ROUNDS = [f"/league/{n}.html" for n in range(1, 5)]


def league_contents() -> str:
    """The league's table of contents: a menu, four match reports, the standings and rules, and
    a footer linking to the editor's notes elsewhere on the site."""
    entries = "".join(
        f'<li><a href="{path}">足球联赛第{n}轮比赛回顾</a></li>' for n, path in enumerate(ROUNDS, 1)
    )
    entries += '<li><a href="/league/standings.html">本赛季联赛积分榜与排名</a></li>'
    entries += '<li><a href="/league/rules.html">本赛季联赛竞赛规程全文</a></li>'
    footer = '<p>体育报社编辑部维护。<a href="/notes.html">编辑部的读者来信与编辑手记</a></p>'
    return page("足球联赛", f"{MENU}<h1>足球联赛</h1><ul>{entries}</ul>{footer}")


def analyzed(url: str, html: str):
    return Analyzer(parse_inline(KEYWORDS)).analyze(url, html.encode(), "text/html")


def test_a_list_of_the_topic_lists_its_entries_not_the_menu_nor_the_footer():
    lists = TopicalLists()
    contents = analyzed("http://a.cn/league/index.html", league_contents())
    listed = lists.add(contents)
    # The standings mention no keyword: listed for the folder its neighbours share.
    assert sorted(listed) == sorted(
        f"http://a.cn{path}" for path in [*ROUNDS, "/league/standings.html", "/league/rules.html"]
    )
    assert "http://a.cn/league/standings.html" in lists
    assert "http://a.cn/notes.html" not in lists
    assert "http://a.cn/news.html" not in lists
    # What a crawl paused with JOBDIR keeps.
    assert "http://a.cn/league/standings.html" in pickle.loads(pickle.dumps(lists))


def test_a_page_a_list_names_with_its_host_in_capitals_is_listed():
    html = league_contents().replace('href="/league/', 'href="http://A.CN/league/')
    lists = TopicalLists()
    lists.add(analyzed("http://a.cn/league/index.html", html))
    assert Request("http://A.CN/league/standings.html").url in lists


def test_a_list_does_not_list_the_next_page_in_the_reading_order():
    """On a site kept in one folder (a manual), the next chapter is a neighbour of every
    entry, but the list's ``rel="next"`` link is no entry of it."""
    following = '<a href="/league/cup.html" rel="next">本赛季足协杯各轮赛程与结果</a>'
    following = f"<p>下一章：{following}</p>"
    html = league_contents().replace("<h1>", f"{following}<h1>")
    listed = TopicalLists().add(analyzed("http://a.cn/league/index.html", html))
    assert "http://a.cn/league/standings.html" in listed
    assert "http://a.cn/league/cup.html" not in listed


def test_the_oldest_listed_addresses_are_forgotten_past_the_limit(monkeypatch):
    monkeypatch.setattr(listings, "LISTED", 10)
    lists = TopicalLists()
    for host in ("a.cn", "b.cn", "c.cn"):  # five listed addresses each
        lists.add(analyzed(f"http://{host}/league/index.html", league_contents()))
    assert "http://a.cn/league/1.html" not in lists
    assert "http://c.cn/league/standings.html" in lists


#: What a chapter page says above its list of sections: with it, the league's contents are
#: 0.57 link text, as DocBook's chapter pages are (0.58 on the Wireshark guide's).
INTRO = "<p>本章回顾本赛季足球联赛的各轮比赛，并附积分榜与竞赛规程，供读者查阅与参考。</p>"


@pytest.fixture(scope="module", params=["contents", "chapter"])
def league_site(tmp_path_factory, request):
    """A match report linking to the league's table of contents (or a chapter page: its
    introduction above the same list) and, in its text, to the editor's notes."""
    root = tmp_path_factory.mktemp("league-site")
    links = (
        '<p>本周专题：<a href="/league/index.html">足球联赛各轮比赛回顾目录</a>；'
        '另见<a href="/notes.html">编辑部的读者来信与编辑手记</a>。</p>'
    )
    (root / "index.html").write_text(page("足球比赛", ARTICLE + links), "utf-8")
    (root / "league").mkdir()
    contents = league_contents()
    if request.param == "chapter":
        contents = contents.replace("<ul>", f"{INTRO}<ul>")
    (root / "league" / "index.html").write_text(contents, "utf-8")
    for n, path in enumerate(ROUNDS, 1):
        report = page(f"足球联赛第{n}轮比赛回顾", f"<p>第{n}轮。</p>{ARTICLE}")
        (root / path.lstrip("/")).write_text(report, "utf-8")
    standings = page("本赛季联赛积分榜与排名", STANDINGS)
    (root / "league" / "standings.html").write_text(standings, "utf-8")
    # Listed too, and as weak, but it asks not to be indexed.
    rules = standings.replace("<head>", '<head><meta name="robots" content="noindex">')
    (root / "league" / "rules.html").write_text(rules, "utf-8")
    (root / "notes.html").write_text(page("编辑手记", NOTES), "utf-8")
    for name in ("news", "ads"):
        (root / f"{name}.html").write_text(page(name, "<p>本站公告。</p>"), "utf-8")
    yield from served(root)


FIXED = ("TOPIC_THRESHOLD_MODE=fixed", "TOPIC_DUPLICATE_DISTANCE=-1")


def test_a_page_a_list_of_the_topic_names_is_stored_from_the_listed_threshold(
    league_site, tmp_path
):
    result = crawl(f"{league_site}/index.html", tmp_path, *FIXED)
    assert {"/league/standings.html", "/league/rules.html", "/notes.html"} <= set(result.fetched)
    # Both score between TOPIC_LISTED_THRESHOLD (0.05) and the threshold (0.12).
    assert sorted(result.stored) == sorted(
        ["/index.html", "/league/index.html", *ROUNDS, "/league/standings.html"]
    )
    assert "'topic/listed': 1" in result.log
    verdicts = {
        urlsplit(row["url"]).path: (row["listed"], row["threshold"])
        for row in read_jsonl(tmp_path / "f.jsonl")
    }
    assert verdicts["/league/standings.html"] == (True, 0.05)
    assert verdicts["/notes.html"] == (False, 0.12)


def test_a_list_of_the_topic_is_more_link_text_than_the_list_link_ratio(
    league_site, tmp_path, request
):
    """The test above, with a chapter page, failed before ``TOPIC_LIST_LINK_RATIO``: a list
    of the topic was more than ``TOPIC_HUB_LINK_RATIO`` (0.7) link text, and a chapter page
    listed its sections for nothing (on the Wireshark guide, 6 of telephony's 19 pages
    fetched were not stored)."""
    result = crawl(f"{league_site}/index.html", tmp_path, *FIXED, "TOPIC_LIST_LINK_RATIO=0.6")
    listed = request.node.callspec.params["league_site"] == "contents"
    assert ("/league/standings.html" in result.stored) == listed
    assert ("'topic/listed': 1" in result.log) == listed
    assert "/league/index.html" in result.stored


def test_a_listed_threshold_as_high_as_the_threshold_turns_it_off(league_site, tmp_path):
    result = crawl(f"{league_site}/index.html", tmp_path, *FIXED, "TOPIC_LISTED_THRESHOLD=0.12")
    assert "/league/standings.html" in result.fetched
    assert "/league/standings.html" not in result.stored
    assert "topic/listed" not in result.log


@pytest.mark.parametrize(("listed", "stored"), [(True, True), (False, False)])
def test_a_request_from_a_list_another_worker_judged_says_so_itself(listed, stored):
    """In Redis, the list's page may have been judged by another worker: the request for
    the link carries what the list said."""
    crawler = get_crawler(TopicSpider, {**PROJECT, "TOPIC_THRESHOLD_MODE": "fixed"})
    spider = TopicSpider.from_crawler(crawler, seeds="http://a.cn/", keywords=KEYWORDS)
    url = "http://a.cn/league/standings.html"
    html = page("本赛季联赛积分榜与排名", STANDINGS)
    request = Request(url, meta={LISTED_KEY: True} if listed else {})
    response = HtmlResponse(url, body=html.encode(), encoding="utf-8", request=request)
    judged = list(spider._judge(response, analyzed(url, html)))
    assert any(isinstance(item, PageItem) for item in judged) == stored


def test_the_links_of_a_page_fetched_with_a_session_id_name_it_without_the_id():
    """``links_discovered`` (the MySQL ``links`` rows) names the page as its item and row
    do, without the session id: before, its links joined no page."""
    crawler = get_crawler(TopicSpider, {**PROJECT, "TOPIC_THRESHOLD_MODE": "fixed"})
    spider = TopicSpider.from_crawler(crawler, seeds="http://a.cn/", keywords=KEYWORDS)
    crawler.stats.open_spider()
    fetched = "http://a.cn/league/index.jsp;jsessionid=0AF3B2C4D5E6F708"
    html = league_contents()
    sent = []

    def discovered(**found):
        sent.append(found)

    crawler.signals.connect(discovered, signal=links_discovered)
    response = HtmlResponse(fetched, body=html.encode(), encoding="utf-8", request=Request(fetched))
    list(spider._judge(response, analyzed(fetched, html)))
    assert [found["page_url"] for found in sent] == ["http://a.cn/league/index.jsp"]


def site_map() -> str:
    """A portal's site map: 48 channels and, among them, the league (relevance 0.096)."""
    names = "新闻财经娱乐科技汽车房产教育旅游健康读书时尚游戏"
    names += "军事历史文化动漫股票基金彩票星座育儿美食家居数码"
    channels = [names[i : i + 2] for i in range(0, len(names), 2)]
    channels += [f"{name}专栏" for name in channels]
    entries = "".join(
        f'<li><a href="/{n}/index.html">{name}频道首页与最新报道</a></li>'
        for n, name in enumerate(channels)
    )
    entries += '<li><a href="/league/index.html">足球联赛各轮比赛回顾</a></li>'
    return page("网站地图", f"<h1>网站地图</h1><ul>{entries}</ul>")


def test_a_site_map_that_a_list_names_is_judged_by_the_crawl_threshold():
    """The lower bar is for storing pages; a site's table of contents is never stored, so
    it is not made a relevant page by a list that names it (its links go on counting
    towards TOPIC_TUNNEL_DEPTH)."""
    crawler = get_crawler(TopicSpider, {**PROJECT, "TOPIC_THRESHOLD_MODE": "fixed"})
    spider = TopicSpider.from_crawler(crawler, seeds="http://a.cn/", keywords=KEYWORDS)
    crawler.stats.open_spider()
    url = "http://a.cn/sitemap.html"
    html = site_map()
    request = Request(url, meta={LISTED_KEY: True, TUNNEL_KEY: 1})
    response = HtmlResponse(url, body=html.encode(), encoding="utf-8", request=request)
    analysis = analyzed(url, html)
    assert 0.05 < analysis.relevance < 0.12
    verdicts = []

    def scored(**verdict):
        verdicts.append(verdict)

    crawler.signals.connect(scored, signal=page_scored)
    judged = list(spider._judge(response, analysis))
    assert (verdicts[0]["listed"], verdicts[0]["threshold"]) == (False, 0.12)
    assert not any(isinstance(item, PageItem) for item in judged)
    assert {item.meta[TUNNEL_KEY] for item in judged} == {2}
    assert crawler.stats.get_value("topic/hub") is None
    assert crawler.stats.get_value("topic/dropped") == 1


def test_in_redis_a_worker_stores_a_page_that_a_list_another_worker_judged_names(
    league_site, redis_server, tmp_path
):
    settings = (*ONE_AT_A_TIME, *FIXED, "REDIS_IDLE_TIMEOUT=2")
    shared = {"keywords": KEYWORDS, "redis": redis_server, "crawl_id": "listed"}
    # robots.txt, the report and the league's contents.
    first = start(tmp_path, "first", league_site, *settings, "CLOSESPIDER_PAGECOUNT=3", **shared)
    assert_finished_cleanly(first)
    assert paths(read_jsonl(first.fetch_log)) == ["/index.html", "/league/index.html"]
    second = start(tmp_path, "second", None, *settings, **shared)
    assert_finished_cleanly(second)
    verdicts = {urlsplit(row["url"]).path: row for row in read_jsonl(second.fetch_log)}
    assert verdicts["/league/standings.html"]["listed"]
    assert not verdicts["/notes.html"]["listed"]
    stored = paths(read_jsonl(tmp_path / "second" / "index.jsonl"))
    assert sorted(stored) == sorted([*ROUNDS, "/league/standings.html"])
