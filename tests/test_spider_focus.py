"""The spider's focus aids on small sites of their own: near-duplicates, noise URLs,
tables of contents, the tunnel, what a link inherits from the pages behind it, links
to a page's other languages, session ids in links and robots tags."""

from __future__ import annotations

import itertools
import pickle
import re
import secrets
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from demo.crawl import topic_args
from demo.site import serve
from tests.httpserver import Handler, serving
from tests.test_spider import crawl_seed, paths, read_jsonl, start_scrapy

ARTICLE = (
    "<p>昨晚的足球比赛非常精彩，两队在上半场互有攻守，下半场主队连进两球锁定胜局。"
    "赛后主教练表示，球队的目标是冲击联赛冠军，年轻球员的表现令人满意。"
    "本赛季球队引进了三名外援，前锋线的冲击力明显增强，中场的传球成功率也有提高。"
    "门将在比赛最后十分钟做出两次关键扑救，帮助球队保住了胜利果实。</p>"
)
#: A match report's own paragraph: a page of ``ARTICLE`` twice says what ``ARTICLE`` does.
REPORT = (
    "<p>第十轮比赛中，客队开场五分钟就由角球破门，主队随后调整阵型，凭借边路传中扳平比分。"
    "易边再战，替补登场的中锋两次头球攻门得手，主队最终三比一逆转取胜。</p>"
)


def page(title: str, body: str) -> str:
    return (
        f'<html><head><meta charset="utf-8"><title>{title}</title></head><body>{body}</body></html>'
    )


def write_gbk(path: Path, html: str) -> None:
    """A page written in GBK, declaring it (``html`` as :func:`page` writes it)."""
    path.write_bytes(html.replace('charset="utf-8"', 'charset="gbk"').encode("gbk"))


def served(root: Path):
    """Serve a fixture's folder on 127.0.0.1 for the fixture's lifetime."""
    server, base = serve(root)
    yield base
    server.shutdown()
    server.server_close()


@dataclass
class Crawl:
    log: str
    fetched: list[str]
    stored: list[str]


def crawl(seed: str, out: Path, *settings: str, **options: str) -> Crawl:
    """A crawl that must end cleanly: its log, and the paths it fetched and stored
    (``options``: :func:`crawl_seed`'s, the keywords)."""
    result = crawl_seed(seed, out, *settings, **options)
    assert result.returncode == 0, result.stderr[-2000:]
    return Crawl(
        result.stderr,
        paths(read_jsonl(out / "f.jsonl")),
        paths(read_jsonl(out / "pages" / "index.jsonl")),
    )


@pytest.fixture(scope="module")
def focus_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("focus-site")
    links = (
        '<p>本周足球比赛：<a href="/match.html">联赛第十轮比赛回顾</a>，'
        '<a href="/copy/match.html">同一场比赛的转载</a>，'
        '<a href="/match.html?print=1">打印本页比赛回顾</a>，'
        '<a href="/calendar.php?year=2031&amp;month=7">足球比赛日历</a>，'
        '<a href="/match.html;jsessionid=0AF3B2C4D5E6F708">足球新闻</a>。</p>'
    )
    (root / "index.html").write_text(page("足球比赛", ARTICLE + links), "utf-8")
    (root / "match.html").write_text(page("联赛第十轮比赛回顾", ARTICLE * 2), "utf-8")
    (root / "copy").mkdir()
    copy = ARTICLE * 2 + "<p>来源：转载自体育频道</p>"
    (root / "copy" / "match.html").write_text(page("联赛第十轮比赛回顾（转载）", copy), "utf-8")
    yield from served(root)


def test_near_duplicates_are_not_stored_and_noise_urls_not_fetched(focus_site, tmp_path):
    result = crawl(f"{focus_site}/index.html", tmp_path)
    # The link with a session id is the match report's: fetched once, without it.
    assert sorted(result.fetched) == ["/copy/match.html", "/index.html", "/match.html"]
    assert len({"/match.html", "/copy/match.html"} & set(result.stored)) == 1
    assert "'topic/duplicate': 1" in result.log
    assert "accepted 3 (harvest rate 0.75), not stored as near-duplicates: 1," in result.log
    assert "'topic/noise_url': 2" in result.log  # the print view and the calendar


def test_duplicate_detection_can_be_turned_off(focus_site, tmp_path):
    result = crawl(f"{focus_site}/index.html", tmp_path, "TOPIC_DUPLICATE_DISTANCE=-1")
    assert "/copy/match.html" in result.stored


SECTIONS = ["财经", "科技", "娱乐", "汽车", "房产", "教育", "旅游", "健康", "游戏", "读书"]


def off_topic_sections(root: Path) -> list[str]:
    """Write a portal's ten off-topic section pages; their entries in a front page's list."""
    for n, name in enumerate(SECTIONS):
        (root / f"{n}.html").write_text(page(f"{name}频道", f"<p>{name}新闻。</p>"), "utf-8")
    return [
        f'<li><a href="/{n}.html">{name}频道：{name}新闻与评论汇总</a></li>'
        for n, name in enumerate(SECTIONS)
    ]


@pytest.fixture(scope="module")
def portal(tmp_path_factory):
    """A front page that is a table of contents of the whole portal, football among its
    sections, and the football section's own table of contents."""
    root = tmp_path_factory.mktemp("portal")
    entries = off_topic_sections(root)
    entries.insert(3, '<li><a href="/football/index.html">足球比赛频道：联赛比赛回顾</a></li>')
    front = f"<ul>{''.join(entries)}</ul>"
    (root / "index.html").write_text(page("新闻网：足球比赛与财经科技", front), "utf-8")
    (root / "football").mkdir()
    matches = "".join(
        f'<li><a href="/football/{n}.html">足球联赛第{n}轮比赛回顾</a></li>' for n in range(1, 4)
    )
    (root / "football" / "index.html").write_text(
        page("足球比赛频道", f"<ul>{matches}</ul>"), "utf-8"
    )
    for n in range(1, 4):
        article = page(f"足球联赛第{n}轮比赛回顾", f"<p>第{n}轮。</p>{ARTICLE}")
        (root / "football" / f"{n}.html").write_text(article, "utf-8")
    yield from served(root)


def test_a_site_table_of_contents_is_followed_not_stored(portal, tmp_path):
    # The three match reports share most of their text: all of them are to be stored.
    result = crawl(f"{portal}/index.html", tmp_path, "TOPIC_DUPLICATE_DISTANCE=-1")
    articles = {f"/football/{n}.html" for n in range(1, 4)}
    assert "/index.html" in result.fetched
    assert "/index.html" not in result.stored
    # The football section's table of contents is all football: it is about the topic.
    assert set(result.stored) == articles | {"/football/index.html"}
    assert "'topic/hub': 1" in result.log


def test_tables_of_contents_are_stored_with_hub_ratio_1(portal, tmp_path):
    result = crawl(f"{portal}/index.html", tmp_path, "TOPIC_HUB_LINK_RATIO=1")
    assert "/index.html" in result.stored
    assert "topic/hub" not in result.log


@pytest.fixture(scope="module")
def warmup_site(tmp_path_factory):
    """A front page of other news, one line of it on football (0.067), beside its list of
    the portal's ten sections (0) and twelve match reports (0.196 each; near-duplicates)."""
    root = tmp_path_factory.mktemp("warmup-site")
    sections = "".join(off_topic_sections(root))
    reports = "".join(f'<li><a href="/football/{n}.html">第{n}轮</a></li>' for n in range(1, 13))
    intro = (
        "<p>生活网每天为读者精选美食、旅行和理财方面的实用内容，网站改版后频道页面加载更快，"
        "在手机上阅读也更加方便。我们的文章都由编辑亲自撰写和核对，转载请注明出处。"
        "编辑部的十二位编辑来自不同城市，他们会把身边的好去处和好味道分享给你。"
        "订阅我们的周刊，就能第一时间收到最新的菜谱和旅行攻略。本周还新开了体育频道，"
        "刊登足球消息。</p>"
    )
    front = f"{intro}<ul>{sections}</ul><ul>{reports}</ul>"
    (root / "index.html").write_text(page("生活网", front), "utf-8")
    (root / "football").mkdir()
    for n in range(1, 13):
        report = page(f"联赛第{n}轮比赛回顾", f"<p>第{n}轮。</p>{REPORT}{ARTICLE}")
        (root / "football" / f"{n}.html").write_text(report, "utf-8")
    yield from served(root)


REPORTS_12 = {f"/football/{n}.html" for n in range(1, 13)}
ALL_STORED = "TOPIC_DUPLICATE_DISTANCE=-1"


def test_pages_judged_before_the_threshold_settles_are_judged_again_once_it_has(
    warmup_site, tmp_path
):
    """The front page meets the threshold at its floor (0.05), judged first: before, it was
    stored. Once ten pages have scored above 0 the threshold is 0.12, and so is the front
    page's verdict; the reports judged before that are stored."""
    result = crawl(f"{warmup_site}/index.html", tmp_path, ALL_STORED)
    assert set(result.stored) == REPORTS_12
    log = read_jsonl(tmp_path / "f.jsonl")
    assert result.fetched[0] == "/index.html"  # the fetch log keeps the order of judging
    assert len(result.fetched) == len(set(result.fetched)) == 23
    assert log[0]["relevance"] > 0.05
    assert not log[0]["accepted"]
    assert log[0]["threshold"] == 0.12
    assert "'topic/held':" in result.log


def test_a_crawl_that_ends_before_the_threshold_settles_judges_its_pages_by_it_as_it_is(
    warmup_site, tmp_path
):
    """Twenty pages to score above 0, thirteen on the site: at the crawl's end the
    threshold is over half-way up its best twenty (0.12)."""
    result = crawl(f"{warmup_site}/index.html", tmp_path, ALL_STORED, "TOPIC_THRESHOLD_TOP=20")
    assert set(result.stored) == REPORTS_12
    assert "(finished)" in result.log


def test_a_crawl_paused_before_the_threshold_settles_keeps_the_pages_that_wait(
    warmup_site, tmp_path
):
    """Stopped after 14 pages (the front page, the sections, a few reports), the crawl keeps
    the pages waiting for the threshold in its JOBDIR, and the crawl resumed judges them:
    each page is fetched once, and said once in the fetch logs of the two."""
    seed, job = f"{warmup_site}/index.html", f"JOBDIR={tmp_path / 'job'}"
    stopped = crawl(seed, tmp_path / "1", ALL_STORED, job, "CLOSESPIDER_PAGECOUNT=14")
    assert stopped.stored == []
    assert re.search(r"\d+ page\(s\) wait for the threshold to settle: kept in JOBDIR", stopped.log)
    resumed = crawl(seed, tmp_path / "2", ALL_STORED, job)
    assert set(resumed.stored) == REPORTS_12
    said = stopped.fetched + resumed.fetched
    assert sorted(said) == sorted({*said}) == sorted({*REPORTS_12, "/index.html", *said})
    assert "/index.html" in said


def test_a_crawl_killed_while_pages_wait_fetches_them_again_when_resumed(warmup_site, tmp_path):
    """``kill -9`` fourteen pages in (the front page, the ten sections, a few reports), before
    the threshold settled (twenty pages to score above 0): the reports that waited were
    never stored, their requests are still taken in the JOBDIR frontier, and the crawl
    resumed fetches and stores them."""
    seed, job = f"{warmup_site}/index.html", f"JOBDIR={tmp_path / 'job'}"
    waits = (ALL_STORED, job, "TOPIC_THRESHOLD_TOP=20", "CONCURRENT_REQUESTS=1")
    command = topic_args(
        seed,
        "足球:3,比赛:2",
        f"TOPIC_PAGES_DIR={tmp_path / 'pages'}",
        *waits,
        "DOWNLOAD_DELAY=0.2",
        "LOG_LEVEL=DEBUG",
    )
    killed = start_scrapy(*command, stderr=subprocess.PIPE, text=True)
    crawled = (line for line in killed.stderr if "Crawled (200)" in line)
    assert len(list(itertools.islice(crawled, 14))) == 14, "the crawl ended before the kill"
    killed.kill()
    killed.communicate(timeout=30)
    assert not read_jsonl(tmp_path / "pages" / "index.jsonl")
    resumed = crawl(seed, tmp_path, *waits)
    assert set(resumed.stored) == REPORTS_12


def test_verdicts_wait_only_behind_a_page_that_waits(warmup_site, tmp_path):
    """With a floor of 0.1 the front page (0.067) is dropped at once, as are the sections
    (0): paused before any report, the crawl has said every verdict, and nothing waits."""
    job = tmp_path / "job"
    paused = crawl(
        f"{warmup_site}/index.html",
        tmp_path,
        "TOPIC_THRESHOLD_MIN=0.1",
        f"JOBDIR={job}",
        "CLOSESPIDER_PAGECOUNT=6",
        "CONCURRENT_REQUESTS=1",
    )
    assert paused.fetched[0] == "/index.html"
    assert len(paused.fetched) >= 4
    assert not set(paused.fetched) & REPORTS_12
    assert pickle.loads((job / "spider.state").read_bytes())["waiting"] == []


def test_a_worker_of_a_crawl_in_redis_waits_for_the_threshold_too(
    warmup_site, redis_server, tmp_path
):
    """A page that waits keeps its lease till its item is stored: the front page is judged
    again once the threshold settled, and dropped."""
    result = crawl(
        f"{warmup_site}/index.html",
        tmp_path,
        ALL_STORED,
        f"REDIS_URL={redis_server.url}",
        "TOPIC_CRAWL_ID=waits",
        "REDIS_IDLE_TIMEOUT=2",
    )
    assert set(result.stored) == REPORTS_12
    assert "'topic/held':" in result.log


def test_a_worker_stopped_before_the_threshold_settles_gives_the_pages_that_wait_back(
    warmup_site, redis_server, tmp_path
):
    """Stopped after 14 pages, one at a time (the front page, the ten sections, then
    reports), the worker gives the leases of the pages that wait back to the shared
    frontier with its others: the next worker fetches them again and stores them, and the
    first stored none."""
    seed = f"{warmup_site}/index.html"
    shared = (ALL_STORED, f"REDIS_URL={redis_server.url}", "TOPIC_CRAWL_ID=given-back")
    stopped = crawl(
        seed, tmp_path / "1", *shared, "CLOSESPIDER_PAGECOUNT=14", "CONCURRENT_REQUESTS=1"
    )
    assert stopped.stored == []
    given_back = r"(\d+) accepted page\(s\) wait for the threshold to settle: given back"
    assert int(re.search(given_back, stopped.log)[1]) > 1, "no report waited"
    assert "not stored" not in stopped.log
    resumed = crawl(seed, tmp_path / "2", *shared, "REDIS_IDLE_TIMEOUT=2")
    assert set(resumed.stored) == REPORTS_12


def test_a_crawl_stopped_before_the_threshold_settles_without_a_jobdir_stores_what_waited(
    warmup_site, tmp_path
):
    """Without JOBDIR there is nowhere to keep them: once the pages in progress are parsed
    (the one that reached the budget at least), the pages that wait are judged by the
    threshold as it is, and stored before the item pipelines close. Before, none was
    stored, and the log said how many were lost."""
    stopped = crawl(f"{warmup_site}/index.html", tmp_path, ALL_STORED, "CLOSESPIDER_PAGECOUNT=14")
    accepted = [row for row in read_jsonl(tmp_path / "f.jsonl") if row["accepted"]]
    assert "/index.html" in paths(accepted)  # judged by the threshold at the stop: 0.05
    assert sorted(stopped.stored) == sorted(paths(accepted))
    assert set(stopped.stored) & REPORTS_12
    assert "not stored" not in stopped.log


@pytest.mark.parametrize("processor", ["topicspider.pipelines.ItemPipelines", "scrapy's"])
def test_a_crawl_stopped_with_no_page_left_to_parse_stores_what_waited(processor, tmp_path):
    """Ctrl-C while the one request in flight is a slow page that then fails: no page is
    parsed once the stop began, and the pages that wait are judged by the threshold as it
    is when the item pipelines close, and stored. Before, none was stored, and the log
    said how many were lost: as it still does with Scrapy's own ``ITEM_PROCESSOR``."""
    reports = "".join(f'<li><a href="/football/{n}.html">第{n}轮</a></li>' for n in range(1, 13))
    site = {"/index.html": page("足球", f"<p>本周足球比赛回顾。</p><ul>{reports}</ul>")}
    for n in range(1, 13):
        site[f"/football/{n}.html"] = page(f"第{n}轮", f"<p>第{n}轮。</p>{REPORT}{ARTICLE}")
    served, asked, answer = [], threading.Event(), threading.Event()

    class Site(Handler):
        def do_GET(self):
            if self.path not in site:  # robots.txt
                self.send(b"", status=404)
                return
            served.append(self.path)
            if len(served) == 8:  # after the front page and six reports
                asked.set()
                answer.wait(60)
                self.send(b"gone", status=404)
            else:
                self.send(site[self.path].encode())

    with serving(Site) as base:
        command = topic_args(
            f"{base}/index.html",
            "足球:3,比赛:2",
            f"TOPIC_PAGES_DIR={tmp_path / 'pages'}",
            f"TOPIC_FETCH_LOG={tmp_path / 'f.jsonl'}",
            ALL_STORED,
            "TOPIC_THRESHOLD_TOP=20",  # thirteen pages: it never settles
            "CONCURRENT_REQUESTS=1",
            "RETRY_ENABLED=False",
        )
        if processor == "scrapy's":
            command += ["-s", "ITEM_PROCESSOR=scrapy.pipelines.ItemPipelineManager"]
        stopped = start_scrapy(*command, stderr=subprocess.PIPE, text=True)
        assert asked.wait(60), "the crawl ended first"
        time.sleep(1)  # the seventh page parsed
        stopped.send_signal(signal.SIGINT)
        log = []
        for line in stopped.stderr:
            log.append(line)
            if "Closing spider (shutdown)" in line:
                answer.set()
        stopped.wait(30)
    log = "".join(log)
    accepted = [row for row in read_jsonl(tmp_path / "f.jsonl") if row["accepted"]]
    stored = paths(read_jsonl(tmp_path / "pages" / "index.jsonl"))
    assert len(accepted) >= 6, log[-3000:]
    if processor == "scrapy's":
        assert stored == []
        assert f"{len(accepted)} accepted page(s) not stored: the crawl stopped (shutdown)" in log
    else:
        assert sorted(stored) == sorted(paths(accepted))
        assert "not stored" not in log


@pytest.fixture(scope="module")
def deep_site(tmp_path_factory):
    """A football report below three off-topic pages in a row: the third links to it and
    to a finance page."""
    root = tmp_path_factory.mktemp("deep-site")
    chain = ["index", "help", "topics"]
    for name, next_name in itertools.pairwise(chain):
        body = f'<p>{name}说明文字。<a href="/{next_name}.html">下一页：{next_name}</a></p>'
        (root / f"{name}.html").write_text(page(f"{name}帮助", body), "utf-8")
    topics = (
        "<p>本站帮助：账号注册、密码找回、订阅设置、评论规则、隐私政策与联系方式。</p>"
        * 8
        + '<p>股票行情：<a href="/finance.html">财经新闻</a></p>'
        '<p>周末赛事：<a href="/report.html">足球比赛回顾</a></p>'
    )
    (root / "topics.html").write_text(page("topics帮助", topics), "utf-8")
    (root / "report.html").write_text(page("联赛第十轮比赛回顾", ARTICLE * 2), "utf-8")
    (root / "finance.html").write_text(page("财经新闻", "<p>股票与基金。</p>"), "utf-8")
    yield from served(root)


def test_past_the_tunnel_only_links_that_mention_the_topic_are_followed(deep_site, tmp_path):
    result = crawl(f"{deep_site}/index.html", tmp_path)
    # index and help are the tunnel's two irrelevant pages; topics.html is the third in a
    # row, so of its links only the one that mentions football is followed.
    assert set(result.fetched) == {"/index.html", "/help.html", "/topics.html", "/report.html"}
    assert result.stored == ["/report.html"]
    assert "'topic/tunnel_closed': 1" in result.log


@pytest.fixture(scope="module")
def buried_site(tmp_path_factory):
    """Three off-topic pages in a row, then ten off-topic sections (two pages deep) and a
    "getting started" page whose link to the football channel names nothing of football."""
    root = tmp_path_factory.mktemp("buried-site")
    for name, next_name in (("index", "help"), ("help", "guide")):
        body = f'<p>{name}说明文字。<a href="/{next_name}.html">下一页</a></p>'
        (root / f"{name}.html").write_text(page(f"{name}帮助", body), "utf-8")
    sections = off_topic_sections(root)
    for n, name in enumerate(SECTIONS):
        more = f'<p>{name}新闻。<a href="/{n}-more.html">更多</a></p>'
        (root / f"{n}.html").write_text(page(f"{name}频道", more), "utf-8")
        older = f'<p>{name}旧闻。<a href="/{n}-old.html">更早</a></p>'
        (root / f"{n}-more.html").write_text(page(f"{name}旧闻", older), "utf-8")
        (root / f"{n}-old.html").write_text(page(f"{name}往事", f"<p>{name}往事。</p>"), "utf-8")
    start = '<li><a href="/start.html">第一个步骤</a></li>'
    (root / "guide.html").write_text(
        page("使用指南", f"<ul>{''.join(sections)}{start}</ul>"), "utf-8"
    )
    channels = '<p>本站栏目一览。<a href="/channel/index.html">其他栏目</a></p>'
    (root / "start.html").write_text(page("入门", channels), "utf-8")
    (root / "channel").mkdir()
    reports = "".join(
        f'<li><a href="/channel/{n}.html">足球联赛第{n}轮比赛回顾</a></li>' for n in range(1, 4)
    )
    (root / "channel" / "index.html").write_text(page("频道", f"<ul>{reports}</ul>"), "utf-8")
    for n in range(1, 4):
        article = page(f"足球联赛第{n}轮比赛回顾", f"<p>第{n}轮。</p>{ARTICLE}")
        (root / "channel" / f"{n}.html").write_text(article, "utf-8")
    # The last report links to the last section's oldest page, last in the reserve.
    last = root / "channel" / "3.html"
    last.write_text(
        last.read_text("utf-8").replace("</body>", '<a href="/9-old.html">往事</a></body>'), "utf-8"
    )
    yield from served(root)


REPORTS = [f"/channel/{n}.html" for n in range(1, 4)]


@pytest.mark.parametrize(
    "settings",
    [(), ("CLOSESPIDER_PAGECOUNT=40", "TOPIC_TUNNEL_RESERVE=False")],
    ids=["no budget", "reserve off"],
)
def test_without_a_budget_a_crawl_ends_where_its_focus_does(buried_site, tmp_path, settings):
    result = crawl(f"{buried_site}/index.html", tmp_path, *settings)
    assert result.fetched == ["/index.html", "/help.html", "/guide.html"]
    assert result.stored == []
    assert "topic/reserved" not in result.log


def test_with_a_budget_the_links_past_the_tunnel_are_kept_in_reserve(buried_site, tmp_path):
    # The three match reports share most of their text: all of them are to be stored.
    budget = ("CLOSESPIDER_PAGECOUNT=40", "TOPIC_DUPLICATE_DISTANCE=-1")
    result = crawl(f"{buried_site}/index.html", tmp_path, *ONE_AT_A_TIME, *budget)
    assert set(REPORTS) <= set(result.stored) <= {*REPORTS, "/channel/index.html"}
    # The reserve goes breadth-first: the sections and "getting started", then what they
    # link to; once the channel is found, its reports go before the rest of the reserve.
    assert set(result.fetched[3:14]) == {f"/{n}.html" for n in range(10)} | {"/start.html"}
    channel = result.fetched.index("/channel/index.html")
    assert result.fetched[channel + 1 : channel + 4] == REPORTS
    assert {f"/{n}-old.html" for n in range(10)} == set(result.fetched[channel + 4 :])
    # Found again on a relevant page, it scores as that page's link and goes first.
    assert result.fetched[channel + 4] == "/9-old.html"
    assert "'topic/reserved': 32" in result.log


def test_a_worker_of_a_crawl_in_redis_keeps_the_reserve_in_the_shared_frontier(
    buried_site, redis_server, tmp_path
):
    budget = ("CLOSESPIDER_PAGECOUNT=40", "TOPIC_DUPLICATE_DISTANCE=-1")
    result = crawl(
        f"{buried_site}/index.html",
        tmp_path,
        *ONE_AT_A_TIME,
        *budget,
        f"REDIS_URL={redis_server.url}",
        "TOPIC_CRAWL_ID=reserve",
        "REDIS_IDLE_TIMEOUT=2",
    )
    assert set(REPORTS) <= set(result.stored)
    channel = result.fetched.index("/channel/index.html")
    assert result.fetched[channel + 1 : channel + 4] == REPORTS
    assert len(result.fetched) == len(set(result.fetched)) == 3 + 11 + 10 + 10 + 1 + 3


@pytest.fixture(scope="module")
def lineage_site(tmp_path_factory):
    """An off-topic front page with ten off-topic sections and one match report; the
    report's "more" page says nothing of football and links to a second report."""
    root = tmp_path_factory.mktemp("lineage-site")
    sections = "".join(off_topic_sections(root))
    report = '<li><a href="/report.html">联赛第十轮比赛回顾</a></li>'
    (root / "index.html").write_text(page("新闻网", f"<ul>{sections}{report}</ul>"), "utf-8")
    more = '<p><a href="/more.html">更多文章</a></p>'
    (root / "report.html").write_text(page("联赛第十轮比赛回顾", ARTICLE + more), "utf-8")
    story = '<p>往期回顾：<a href="/story.html">第九轮</a></p>'
    (root / "more.html").write_text(page("更多文章", f"<p>本栏目文章列表。</p>{story}"), "utf-8")
    (root / "story.html").write_text(page("联赛第九轮比赛回顾", ARTICLE * 2), "utf-8")
    yield from served(root)


# One request at a time, each chosen once the links of the page before are in.
ONE_AT_A_TIME = (
    "CONCURRENT_REQUESTS=1",
    "CONCURRENT_REQUESTS_PER_DOMAIN=1",
    "TOPIC_PARSE_BACKLOG=0",
)


def test_links_one_page_past_an_on_topic_page_go_before_links_with_nothing_behind_them(
    lineage_site, tmp_path
):
    fetched = crawl(f"{lineage_site}/index.html", tmp_path, *ONE_AT_A_TIME).fetched
    assert fetched[:4] == ["/index.html", "/report.html", "/more.html", "/story.html"]


def test_parent_decay_of_1_or_more_is_refused(lineage_site, tmp_path):
    result = crawl_seed(f"{lineage_site}/index.html", tmp_path, "TOPIC_PARENT_DECAY=1")
    assert result.returncode != 0
    assert "TOPIC_PARENT_DECAY=1: expected 0 <= it < 1" in result.stderr
    assert not (tmp_path / "f.jsonl").exists()


def test_parent_decay_0_scores_links_by_their_own_page_only(lineage_site, tmp_path):
    fetched = crawl(
        f"{lineage_site}/index.html", tmp_path, *ONE_AT_A_TIME, "TOPIC_PARENT_DECAY=0"
    ).fetched
    assert fetched.index("/story.html") > fetched.index("/9.html")


@pytest.fixture(scope="module")
def bilingual_site(tmp_path_factory):
    """A Chinese site whose pages link to their English versions, which are untranslated
    copies, as on sites whose translations lag behind."""
    root = tmp_path_factory.mktemp("bilingual-site")

    def bilingual(path: str, language: str, title: str, body: str) -> None:
        other = "en" if language == "zh-CN" else "zh-CN"
        prefix = "/en" if language == "zh-CN" else ""
        switch = f'<p class="lang"><a href="{prefix}/{path}" hreflang="{other}">{other}</a></p>'
        html = page(title, switch + body).replace("<html>", f'<html lang="{language}">')
        target = root / ("" if language == "zh-CN" else "en") / path
        target.parent.mkdir(exist_ok=True)
        target.write_text(html, "utf-8")

    links = '<p>本周：<a href="/match.html">联赛第十轮比赛回顾</a></p>'
    for language in ("zh-CN", "en"):
        bilingual("index.html", language, "足球比赛", ARTICLE + links)
        bilingual("match.html", language, "联赛第十轮比赛回顾", ARTICLE + REPORT)
    yield from served(root)


def test_links_to_the_page_in_another_language_are_not_followed(bilingual_site, tmp_path):
    result = crawl(f"{bilingual_site}/index.html", tmp_path)
    assert set(result.fetched) == {"/index.html", "/match.html"}
    assert "'topic/translation_link': 2" in result.log


def test_follow_translations_crawls_every_language(bilingual_site, tmp_path):
    result = crawl(f"{bilingual_site}/index.html", tmp_path, "TOPIC_FOLLOW_TRANSLATIONS=True")
    assert {"/en/index.html", "/en/match.html"} <= set(result.fetched)
    assert "topic/translation_link" not in result.log


#: Untranslated: an English page of a Chinese site, with the site's Chinese menu word.
UNTRANSLATED_MATCH = (
    "<p>首页</p><p>Last night's football match was a thriller. The home side trailed at half"
    " time, then scored twice in ten minutes to win the match. The coach said the young"
    " players had earned their places, and the club hopes to win the league this season.</p>"
)
UNTRANSLATED_RECIPE = (
    "<p>首页</p><p>Slow-cooked pork belly: brown the meat, add soy sauce, sugar and rice wine,"
    " and simmer for an hour until the sauce is thick. Serve with rice and greens.</p>"
)


@pytest.fixture(scope="module")
def untranslated_site(tmp_path_factory):
    """A Chinese site some of whose pages are still in English."""
    root = tmp_path_factory.mktemp("untranslated-site")
    links = (
        '<p>本周：<a href="/round-ten.html">第十轮比赛回顾</a>，'
        '<a href="/recipe.html">球员的菜谱</a></p>'
    )
    (root / "index.html").write_text(page("足球比赛", ARTICLE + links), "utf-8")
    title = "Round ten: a comeback at home"
    (root / "round-ten.html").write_text(page(title, UNTRANSLATED_MATCH), "utf-8")
    (root / "recipe.html").write_text(page("Red-braised pork", UNTRANSLATED_RECIPE), "utf-8")
    yield from served(root)


def test_an_english_page_of_a_chinese_site_is_judged_by_the_english_keywords(
    untranslated_site, tmp_path
):
    """The keyword file is in both languages; the English match report can only meet its
    English terms, and is stored (0.256 against them; 0.111 against the whole file, under
    the threshold, before). The English recipe stays out."""
    result = crawl(
        f"{untranslated_site}/index.html",
        tmp_path,
        "TOPIC_THRESHOLD_MODE=fixed",
        keywords="足球:3,比赛:2,球员:1,football:1.5,match:1",
    )
    assert set(result.fetched) == {"/index.html", "/round-ten.html", "/recipe.html"}
    relevance = {
        row["url"].rsplit("/", 1)[1]: row["relevance"] for row in read_jsonl(tmp_path / "f.jsonl")
    }
    assert relevance["round-ten.html"] > 0.2
    assert relevance["recipe.html"] == 0.0
    assert sorted(result.stored) == ["/index.html", "/round-ten.html"]


@pytest.fixture(scope="module")
def switcher_site(tmp_path_factory):
    """Texinfo-style translations: ``x.zh.html`` beside the default ``x.html`` and copies in
    other languages, the switcher on every page naming them without ``hreflang``."""
    root = tmp_path_factory.mktemp("switcher-site")
    for name, title, text in (
        ("index", "足球比赛", ARTICLE),
        ("match", "联赛第十轮比赛回顾", ARTICLE + REPORT),
    ):
        for code in ("zh.", "", "de.", "fr."):
            switch = " | ".join(
                f'<a href="{name}.{other}html">{other or "en"}</a>'
                for other in ("zh.", "", "de.", "fr.")
            )
            links = f'<p>本周：<a href="match.{code}html">联赛第十轮比赛回顾</a></p>'
            html = page(title, f'<p class="lang">{switch}</p>{text}{links}')
            (root / f"{name}.{code}html").write_text(html, "utf-8")
    yield from served(root)


def test_a_language_switcher_without_hreflang_is_not_followed_but_to_the_default(
    switcher_site, tmp_path
):
    result = crawl(f"{switcher_site}/index.zh.html", tmp_path)
    assert set(result.fetched) == {"/index.zh.html", "/match.zh.html", "/index.html", "/match.html"}
    assert "topic/translation_link" in result.log


@pytest.fixture(scope="module")
def framed_site(tmp_path_factory):
    """A GBK site in frames: the front page is a frameset of a menu and a main page, and the
    main page loads its list of match reports in an ``iframe``."""
    root = tmp_path_factory.mktemp("framed-site")
    write_gbk(
        root / "index.html",
        '<html><head><meta charset="utf-8"><title>体育新闻网</title></head>'
        '<frameset cols="20%,80%"><frame src="menu.html"><frame src="main.html"></frameset></html>',
    )
    write_gbk(
        root / "menu.html",
        page("导航", '<a href="main.html">首页</a> <a href="about.html">关于</a>'),
    )
    write_gbk(root / "about.html", page("关于我们", "<p>本站创办于二〇〇一年。</p>"))
    write_gbk(root / "main.html", page("足球比赛", f'{ARTICLE}<iframe src="list.html"></iframe>'))
    items = "".join(f'<li><a href="{n}.html">足球联赛第{n}轮比赛回顾</a></li>' for n in (1, 2))
    write_gbk(root / "list.html", page("比赛列表", f"<ul>{items}</ul>"))
    for n in (1, 2):
        write_gbk(
            root / f"{n}.html", page(f"足球联赛第{n}轮比赛回顾", f"<p>第{n}轮。</p>{ARTICLE}")
        )
    yield from served(root)


def test_a_site_in_frames_is_crawled_through_its_frames(framed_site, tmp_path):
    result = crawl(f"{framed_site}/index.html", tmp_path, "TOPIC_DUPLICATE_DISTANCE=-1")
    assert {"/menu.html", "/main.html", "/list.html", "/1.html", "/2.html"} <= set(result.fetched)
    assert {"/main.html", "/1.html", "/2.html"} <= set(result.stored)
    assert "/about.html" not in result.stored
    stored = read_jsonl(tmp_path / "pages" / "index.jsonl")
    assert {row["charset"] for row in stored} == {"gb18030"}


@pytest.fixture(scope="module")
def headline_site(tmp_path_factory):
    """A GBK news list whose headlines are cut short, each given whole in its link's
    ``title``: the football story's cut headline names no keyword, and it is listed last."""
    root = tmp_path_factory.mktemp("headline-site")
    (root / "news").mkdir()
    stories = [
        (
            "家常红烧肉的做法",
            "家常红烧肉的做法与火候技巧",
            "<p>五花肉切块焯水，加冰糖炒出糖色，小火慢炖一小时。</p>",
        ),
        (
            "央行宣布下调存款",
            "央行宣布下调存款准备金率",
            "<p>此次下调释放长期资金，银行的融资成本随之降低。</p>",
        ),
        (
            "暑期出游线路推荐",
            "暑期出游线路推荐与订票提示",
            "<p>海边和山区的线路最受欢迎，建议提前两周订票。</p>",
        ),
        ("国家队主场迎战", "国家队主场迎战对手的足球比赛以二比一获胜", ARTICLE),
    ]
    items = "".join(
        f'<li><a href="/news/{n}.html" title="{title}">{shown}…</a></li>'
        for n, (shown, title, _) in enumerate(stories, 1)
    )
    pages = {"index.html": page("新闻", f"<ul>{items}</ul>")}
    for n, (_, title, text) in enumerate(stories, 1):
        pages[f"news/{n}.html"] = page(title, text)
    for name, html in pages.items():
        write_gbk(root / name, html)
    yield from served(root)


def test_a_headline_cut_short_is_scored_by_its_whole_title(headline_site, tmp_path):
    result = crawl(f"{headline_site}/index.html", tmp_path, *ONE_AT_A_TIME)
    assert result.fetched[:2] == ["/index.html", "/news/4.html"]
    assert result.stored == ["/news/4.html"]


class SessionSite(Handler):
    """An old JSP site, in GBK, that writes a new session id into every link of every page
    it serves (as servers do before they know the client keeps cookies)."""

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        path = parts.path.split(";", 1)[0]  # the servlet container reads the id off the path
        article = parse_qs(parts.query).get("id", [""])[0]
        if path == "/robots.txt":
            self.send(b"User-agent: *\nAllow: /\n", "text/plain")
        elif path == "/start.jsp":  # a first visit, without the session cookie
            self.send(b"", status=302, Location=f"/index.jsp;jsessionid={secrets.token_hex(16)}")
        elif path == "/portal.jsp" and path == parts.path:  # the same page, given an id
            self.send(b"", status=302, Location=f"/portal.jsp;jsessionid={secrets.token_hex(16)}")
        elif path in {"/index.jsp", "/portal.jsp"} or (
            path == "/news.jsp" and article in {"1", "2", "3", "4"}
        ):
            title = f"足球新闻第{article}篇" if article else "足球新闻"
            home = "/portal.jsp" if path == "/portal.jsp" else "/index.jsp"
            body = page(title, ARTICLE + self._links(home))
            self.send(body.encode("gbk"), "text/html; charset=gbk")
        else:
            self.send(b"not found", "text/plain", 404)

    def _links(self, home: str) -> str:
        def session() -> str:
            return secrets.token_hex(16).upper()

        items = "".join(
            f'<li><a href="/news.jsp;jsessionid={session()}?id={n}&amp;spm=a2c4g.{n}">'
            f"足球比赛第{n}篇</a></li>"
            for n in range(1, 5)
        )
        return f'<ul>{items}</ul><a href="{home};jsessionid={session()}">首页</a>'


@pytest.fixture(scope="module")
def session_site():
    with serving(SessionSite) as url:
        yield url


def test_session_ids_in_links_are_taken_out_and_each_page_fetched_once(session_site, tmp_path):
    crawl(f"{session_site}/index.jsp", tmp_path, "TOPIC_DUPLICATE_DISTANCE=-1")
    fetched = [row["url"] for row in read_jsonl(tmp_path / "f.jsonl")]
    news = [f"{session_site}/news.jsp?id={n}" for n in range(1, 5)]
    assert sorted(fetched) == [f"{session_site}/index.jsp", *news]
    assert set(news) <= {row["url"] for row in read_jsonl(tmp_path / "pages" / "index.jsonl")}


ROBOTS_ARTICLES = ("noindex", "nofollow", "header", "googlebot")
ROBOTS_TAGS = {
    "noindex": '<meta name="robots" content="noindex, follow">',
    "nofollow": '<meta name="topicspider" content="nofollow">',
    "googlebot": '<meta name="googlebot" content="noindex, nofollow">',
}
ROBOTS_HEADERS = {
    "header": {"X-Robots-Tag": "topicspider: none"},
    "googlebot": {"X-Robots-Tag": "googlebot: noindex, nofollow"},
}


class RobotsSite(Handler):
    """A football site whose articles ask robots, in tags and headers, not to store them or
    not to follow their links; each article links to a sequel only it leads to."""

    def do_GET(self) -> None:
        name = self.path.strip("/").removesuffix(".html")
        if self.path == "/robots.txt":
            self.send(b"User-agent: *\nAllow: /\n", "text/plain")
        elif self.path == "/index.html":
            items = "".join(
                f'<li><a href="/{article}.html">足球比赛报道：{article}</a></li>'
                for article in ROBOTS_ARTICLES
            )
            self.send(page("足球比赛", f"{ARTICLE}<ul>{items}</ul>").encode())
        elif name in ROBOTS_ARTICLES:
            sequel = f'<p><a href="/{name}-more.html">足球比赛报道续篇</a></p>'
            markup = page(f"足球比赛：{name}", f"<p>{name}</p>{ARTICLE}{sequel}")
            markup = markup.replace("<head>", f"<head>{ROBOTS_TAGS.get(name, '')}")
            self.send(markup.encode(), **ROBOTS_HEADERS.get(name, {}))
        elif name.removesuffix("-more") in ROBOTS_ARTICLES:
            self.send(page(f"足球比赛续篇：{name}", f"<p>{name}</p>{ARTICLE}").encode())
        else:
            self.send(b"not found", "text/plain", 404)


@pytest.fixture(scope="module")
def robots_site():
    with serving(RobotsSite) as url:
        yield url


def test_robots_tags_and_headers_keep_pages_out_of_the_store_and_their_links_unfollowed(
    robots_site, tmp_path
):
    result = crawl(f"{robots_site}/index.html", tmp_path, "TOPIC_DUPLICATE_DISTANCE=-1")
    assert sorted(result.fetched) == sorted(
        [
            "/index.html",
            "/noindex.html",
            "/noindex-more.html",
            "/nofollow.html",
            "/header.html",
            "/googlebot.html",
            "/googlebot-more.html",
        ]
    )
    assert sorted(result.stored) == sorted(
        [
            "/index.html",
            "/noindex-more.html",
            "/nofollow.html",
            "/googlebot.html",
            "/googlebot-more.html",
        ]
    )
    assert "'topic/robots/noindex': 2" in result.log
    assert "'topic/robots/nofollow': 2" in result.log


def test_robots_tags_and_headers_are_ignored_when_told_to(robots_site, tmp_path):
    result = crawl(
        f"{robots_site}/index.html",
        tmp_path,
        "TOPIC_DUPLICATE_DISTANCE=-1",
        "TOPIC_OBEY_ROBOTS_META=False",
    )
    assert len(result.fetched) == len(result.stored) == 9
    assert "topic/robots/" not in result.log


def test_a_page_a_redirect_gave_a_session_id_is_stored_under_its_address_without_it(
    session_site, tmp_path
):
    crawl(f"{session_site}/start.jsp", tmp_path, "TOPIC_DUPLICATE_DISTANCE=-1")
    fetched = [row["url"] for row in read_jsonl(tmp_path / "f.jsonl")]
    assert ";jsessionid=" in fetched[0]
    # Its links back to it, without the id, do not fetch it once more.
    assert [url for url in fetched if "/index.jsp" in url] == fetched[:1]
    stored = read_jsonl(tmp_path / "pages" / "index.jsonl")
    news = [f"{session_site}/news.jsp?id={n}" for n in range(1, 5)]
    assert sorted(row["url"] for row in stored) == [f"{session_site}/index.jsp", *news]
    parents = {row["parent_url"] for row in stored} - {None}
    assert parents
    assert parents <= {row["url"] for row in stored}


def test_a_page_that_redirects_to_itself_with_a_session_id_is_fetched_under_it_once(
    session_site, tmp_path
):
    crawl(f"{session_site}/portal.jsp", tmp_path, "TOPIC_DUPLICATE_DISTANCE=-1")
    fetched = [row["url"] for row in read_jsonl(tmp_path / "f.jsonl")]
    assert [url for url in fetched if "/portal.jsp" in url] == fetched[:1]
    assert fetched[0].startswith(f"{session_site}/portal.jsp;jsessionid=")
    stored = read_jsonl(tmp_path / "pages" / "index.jsonl")
    news = [f"{session_site}/news.jsp?id={n}" for n in range(1, 5)]
    pages = [f"{session_site}/index.jsp", *news, f"{session_site}/portal.jsp"]
    assert sorted(row["url"] for row in stored) == pages


TEAMS = ("红星", "海港", "泰山", "国安", "蓉城", "申花", "津门虎", "亚泰")


class EndlessListSite(Handler):
    """A football list of two pages whose CMS serves its last page again for any page
    number past it, each with links to the next five; and a home page with other news."""

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/robots.txt":
            self.send(b"User-agent: *\nAllow: /\n", "text/plain")
        elif parts.path == "/index.html":
            news = "".join(f'<li><a href="/news/{n}.html">新闻{n}</a></li>' for n in range(1, 41))
            body = f'{ARTICLE}<p><a href="/list.jsp">足球新闻</a></p><ul>{news}</ul>'
            self.send(page("足球", body).encode())
        elif parts.path == "/list.jsp":
            number = int(parse_qs(parts.query).get("page", ["1"])[0])
            shown = min(number, 2)  # past the last page, the last page again
            items = "".join(
                f"<li>{home}对{away}的足球比赛：{home}主场取胜，联赛积分升至第{shown}位</li>"
                for home, away in itertools.permutations(TEAMS[shown * 4 - 4 : shown * 4], 2)
            )
            pager = "".join(
                f'<a href="/list.jsp?page={n}">{n}</a> ' for n in range(number + 1, number + 6)
            )
            self.send(page("足球新闻", f"<ul>{items}</ul><p>{pager}</p>").encode())
        elif parts.path.startswith("/news/"):
            number = parts.path.removeprefix("/news/").removesuffix(".html")
            text = f"<p>本市第{number}号新闻：天气晴朗，道路畅通，市场供应充足。</p>"
            self.send(page(f"新闻{number}", text).encode())
        else:
            self.send(b"not found", "text/plain", 404)


@pytest.fixture(scope="module")
def endless_list_site():
    with serving(EndlessListSite) as url:
        yield url


def test_a_list_served_again_past_its_last_page_is_not_followed_far(endless_list_site, tmp_path):
    """Each page past the end is a near-duplicate of the last one: before, the duplicates
    counted as on topic for the list's URL template and raised the mix's pattern weight:
    35 pages past the end of 40 fetched, one of the home page's news."""
    result = crawl(f"{endless_list_site}/index.html", tmp_path, "CLOSESPIDER_PAGECOUNT=40")
    lists = [row for row in read_jsonl(tmp_path / "f.jsonl") if "/list.jsp" in row["url"]]
    numbers = [int(parse_qs(urlsplit(row["url"]).query).get("page", ["1"])[0]) for row in lists]
    assert len([number for number in numbers if number > 2]) <= 10
    assert [row["duplicate"] for row in lists if row["accepted"]] == [False, False] + [True] * (
        len([row for row in lists if row["accepted"]]) - 2
    )
    assert len([path for path in result.fetched if path.startswith("/news/")]) >= 20
    assert result.stored.count("/list.jsp") == 2  # its two pages


def test_a_page_that_says_what_the_page_linking_to_it_said_sends_no_link(
    endless_list_site, tmp_path
):
    """Past its last page the list is its last page again, linking five pages further.
    Its second page links pages 3-7, better than the first page linked 3-6: fetched one
    at a time, each of them is a copy of the page that sent it and sends no link, so the
    list ends at 7. Before, 27 pages of the list were fetched in this crawl. (Fetched
    side by side, a page 3 fetched before page 2 is judged is no copy of page 1 and
    links on to 8: the order would depend on timing.)"""
    result = crawl(
        f"{endless_list_site}/index.html", tmp_path, "CLOSESPIDER_PAGECOUNT=60", *ONE_AT_A_TIME
    )
    lists = [row["url"] for row in read_jsonl(tmp_path / "f.jsonl") if "/list.jsp" in row["url"]]
    numbers = sorted(int(parse_qs(urlsplit(url).query).get("page", ["1"])[0]) for url in lists)
    assert numbers == list(range(1, 8))
    assert "'topic/parent_copy': 5," in result.log
    assert "'finish_reason': 'finished'" in result.log  # out of links before the budget


@pytest.fixture(scope="module")
def scripted_site(tmp_path_factory):
    """A GBK site whose only table of contents is written by a script every page loads (as
    LibreOffice's help writes its own), and whose front page's one link an inline script
    writes."""
    root = tmp_path_factory.mktemp("scripted-site")
    (root / "js").mkdir()
    (root / "football").mkdir()
    head = '<script src="/js/contents.js"></script><script src="/js/stats.js"></script>'
    inline = "<script>document.write('<p><a href=\"/news.html\">足球新闻</a></p>');</script>"
    front = page("生活网", f'{inline}<p>欢迎访问生活网。</p><div id="Contents"></div>')
    write_gbk(root / "index.html", front.replace("<title>", f"{head}<title>"))
    contents = (
        'document.getElementById("Contents").innerHTML=\'\\\n'
        '<ul><li><a href="football/1.html">足球比赛报道</a></li>\\\n'
        '<li><a href="football/2.html">联赛足球比赛回顾</a></li></ul>\';\n'
    )
    (root / "js" / "contents.js").write_bytes(contents.encode("gbk"))
    (root / "js" / "stats.js").write_text("var visits = 0; function count() { visits++; }")
    for name, report in (("football/1.html", ARTICLE), ("football/2.html", REPORT + ARTICLE)):
        write_gbk(root / name, page("足球比赛", report).replace("<title>", f"{head}<title>"))
    write_gbk(root / "news.html", page("足球新闻", REPORT * 3).replace("<title>", f"{head}<title>"))
    yield from served(root)


def test_the_links_a_sites_scripts_write_are_followed(scripted_site, tmp_path):
    result = crawl(f"{scripted_site}/index.html", tmp_path)
    assert sorted(result.stored) == ["/football/1.html", "/football/2.html", "/news.html"]
    # The seed's scripts once each, and never as pages.
    assert "'topic/script/requested': 2" in result.log
    assert "'topic/script/no_links': 1" in result.log  # stats.js
    assert not [path for path in result.fetched if path.endswith(".js")]


def test_without_script_links_only_the_pages_markup_is_read(scripted_site, tmp_path):
    result = crawl(f"{scripted_site}/index.html", tmp_path, "TOPIC_SCRIPT_LINKS=False")
    assert result.fetched == ["/index.html"]
    assert "topic/script" not in result.log


@pytest.fixture(scope="module")
def nav_script_site(tmp_path_factory):
    """An old portal's front page whose one menu a GBK script writes, and no other link."""
    root = tmp_path_factory.mktemp("nav-script-site")
    (root / "js").mkdir()
    (root / "news").mkdir()
    front = page("生活网", '<p>欢迎访问生活网。</p><script src="/js/nav.js"></script>')
    write_gbk(root / "index.html", front)
    nav = "document.write(\"<a href='/news/football.html'>足球新闻</a> | <a href='/'>首页</a>\");"
    (root / "js" / "nav.js").write_bytes(nav.encode("gbk"))
    write_gbk(root / "news" / "football.html", page("足球新闻", REPORT * 3))
    yield from served(root)


@pytest.mark.parametrize(
    "settings",
    [(), ("DEPTH_LIMIT=1",), ("TOPIC_MAX_PAGES_PER_HOST=2",)],
    ids=["defaults", "depth-limit-1", "two-pages-a-host"],
)
def test_a_seeds_script_menu_is_followed_one_click_from_the_seed(
    nav_script_site, tmp_path, settings
):
    """The seed's script is the site's though no other page loads it; its links are the
    seed's, one click deep, and the script is no page of the host's."""
    result = crawl(f"{nav_script_site}/", tmp_path, *settings)
    assert result.fetched == ["/", "/news/football.html"]
    assert result.stored == ["/news/football.html"]


@pytest.fixture(scope="module")
def shared_script_site(tmp_path_factory):
    """Two chapters load the site's contents script, which links the football pages; one
    chapter loads a script of its own too."""
    root = tmp_path_factory.mktemp("shared-script-site")
    (root / "js").mkdir()
    chapters = '<p>目录：<a href="/a.html">第一章 球场</a>，<a href="/b.html">第二章 球员</a>。</p>'
    (root / "index.html").write_text(page("手册", chapters), "utf-8")
    toc = '<script src="/js/toc.js"></script>'
    (root / "a.html").write_text(page("第一章", f"<p>球场的尺寸。</p>{toc}"), "utf-8")
    own = '<script src="/js/a-only.js"></script>'
    (root / "b.html").write_text(page("第二章", f"<p>球员的位置。</p>{toc}{own}"), "utf-8")
    menu = "document.write('<a href=\"/football.html\">足球比赛规则</a>');"
    (root / "js" / "toc.js").write_text(menu, "utf-8")
    (root / "js" / "a-only.js").write_text(menu.replace("football", "other"), "utf-8")
    (root / "football.html").write_text(page("足球比赛规则", REPORT * 3), "utf-8")
    yield from served(root)


def test_a_script_two_pages_load_is_the_sites_and_one_only_one_loads_is_not(
    shared_script_site, tmp_path
):
    result = crawl(f"{shared_script_site}/index.html", tmp_path)
    assert "/football.html" in result.stored
    assert "/other.html" not in result.fetched
    assert "'topic/script/requested': 1" in result.log


@pytest.fixture(scope="module")
def deep_script_site(tmp_path_factory):
    """Two chapters and a page two clicks deep load the contents script, which links the
    rules; the news page between is what the crawl fetches first after one chapter."""
    root = tmp_path_factory.mktemp("deep-script-site")
    (root / "js").mkdir()
    toc = '<script src="/js/toc.js"></script>'
    chapters = (
        '<p><a href="/a.html">足球比赛第一章</a>，<a href="/x1.html">足球新闻</a>，'
        '<a href="/b.html">第二章</a>。</p>'
    )
    (root / "index.html").write_text(page("手册", chapters), "utf-8")
    (root / "a.html").write_text(page("第一章", f"<p>球场。</p>{toc}"), "utf-8")
    (root / "b.html").write_text(page("第二章", f"<p>球员。</p>{toc}"), "utf-8")
    x1 = f'{ARTICLE}<p><a href="/x2.html">足球比赛新闻回顾</a></p>'
    (root / "x1.html").write_text(page("足球新闻", x1), "utf-8")
    (root / "x2.html").write_text(page("足球比赛", f"{REPORT}{toc}"), "utf-8")
    menu = "document.write('<a href=\"/rules.html\">足球比赛规则</a>');"
    (root / "js" / "toc.js").write_text(menu, "utf-8")
    rules = "<p>足球比赛规则：每队十一名球员上场，比赛分上下两个半场，越位与犯规由裁判判罚。</p>"
    (root / "rules.html").write_text(page("足球比赛规则", rules * 2), "utf-8")
    yield from served(root)


def test_a_script_loaded_at_the_depth_limit_waits_for_a_page_above_it(deep_script_site, tmp_path):
    """With ``DEPTH_LIMIT=2`` the second page to load the contents script is two clicks deep:
    its request, three deep, was dropped by Scrapy's depth limit, and the script was never
    asked for again (it is due once). Now a page at the limit does not count as loading it,
    and the next chapter's request for it is fetched, with the page it links."""
    result = crawl(f"{deep_script_site}/index.html", tmp_path, "DEPTH_LIMIT=2", *ONE_AT_A_TIME)
    assert result.fetched.index("/x2.html") < result.fetched.index("/b.html")
    assert "/rules.html" in result.stored
    assert "'topic/script/requested': 1" in result.log
