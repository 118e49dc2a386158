"""A page's bytes in, what the crawl needs of them out: charset, text, relevance, links."""

from __future__ import annotations

import pickle
import subprocess
import sys
from urllib.parse import urlsplit

import pytest
from scrapy.settings import Settings

from topicspider import settings as defaults
from topicspider.analysis import Analyzer, PageAnalysis
from topicspider.keywords import load_keywords

KEYWORDS = load_keywords("足球:3,比赛:2,football:2")

PAGE = """<html><head><title>足球比赛回顾</title></head><body>
<p>昨晚的足球比赛十分精彩，主队在比赛最后时刻打进制胜一球。
   阅读 <a href="/sports/final.html#score">决赛的完整报道</a> 和
   <a href="/sports/%E8%B6%B3%E7%90%83/league.html">联赛积分</a>。</p>
<ul><li><a href="/">首页</a></li><li><a href="/news/">新闻</a></li>
    <li><a href="/shop/">商城</a></li></ul>
<p><a href="/files/report.pdf">报告</a> <a href="javascript:void(0)">展开</a>
   <a href="mailto:editor@example.org">来信</a> <a href="http://elsewhere.example/">外站</a>
   <a href="/list.php?PHPSESSID=8f3a&amp;page=2">列表</a>
   <a href="/中文/页面.html?q=足球">中文链接</a></p>
</body></html>"""

#: A book's contents, as a sidebar lists them on every page: 45 chapters, some on football.
CHAPTERS = "".join(
    f'<li><a href="/book/ch{n}.html">第{n}章：{title}</a></li>'
    for n, title in enumerate(["足球比赛规则", "球员与教练", "联赛和杯赛"] * 15)
)
COOKING = "先把土豆切成细丝，用清水泡去淀粉，再下锅大火快炒。"


def project_settings() -> Settings:
    settings = Settings()
    settings.setmodule(defaults)
    return settings


def analyzer(**overrides) -> Analyzer:
    return Analyzer(KEYWORDS, **overrides)


def analyze(html: str, encoding: str = "utf-8", **overrides) -> PageAnalysis:
    return analyzer(**overrides).analyze(
        "http://127.0.0.1/sports/review.html",
        html.encode(encoding),
        f"text/html; charset={encoding}",
        ("127.0.0.1",),
    )


def test_title_text_and_relevance_of_an_on_topic_page():
    page = analyze(PAGE)
    assert page.charset == "utf-8"
    assert page.title == "足球比赛回顾"
    assert "制胜一球" in page.text
    assert page.relevance > 0.3
    off_topic = analyze(
        "<html><title>股票行情</title><body><p>今天股市上涨，投资者关注理财产品。</p>"
    )
    assert off_topic.relevance < 0.05


def test_gbk_page_without_declaration_is_decoded():
    html = PAGE.replace("<head>", "<head><meta charset=gbk>")
    body = html.encode("gbk")
    page = analyzer().analyze("http://127.0.0.1/gbk.html", body, "text/html")
    assert page.charset in {"gbk", "gb18030"}
    assert page.title == "足球比赛回顾"
    assert page.relevance == pytest.approx(analyze(PAGE).relevance)


def test_a_link_query_in_the_pages_encoding_is_read_in_it():
    """``?q=足球`` on a GBK page is sent, and written, in GBK: its words count as on a UTF-8
    page (before, they read as replacement characters and the link scored 0)."""
    html = PAGE.replace("<head>", "<head><meta charset=gbk>")
    gbk = analyzer().analyze(
        "http://127.0.0.1/sports/review.html", html.encode("gbk"), "text/html", ("127.0.0.1",)
    )
    utf8 = analyze(PAGE)
    query = gbk.links[-1]
    assert query.url.endswith("?q=%D7%E3%C7%F2")
    assert query.anchor == pytest.approx(utf8.links[-1].anchor)
    assert query.anchor > 0


#: ``PAGE`` as a Taiwanese or Hong Kong site writes it: Traditional characters, in Big5.
TRADITIONAL = str.maketrans(
    "赛顾队后时进制胜阅读决报联积页闻开来链",
    "賽顧隊後時進製勝閱讀決報聯積頁聞開來鏈",
)
TRADITIONAL_PAGE = PAGE.replace("<head>", "<head><meta charset=big5>").translate(TRADITIONAL)


def test_a_traditional_chinese_page_scores_as_its_simplified_original():
    """Simplified keywords (足球, 比赛) on a Big5 page in Traditional characters (比賽): the
    page and its links score as the Simplified page does, and it is its near-duplicate; its
    text is kept as written."""
    simplified = analyze(PAGE)
    traditional = analyzer().analyze(
        "http://127.0.0.1/sports/review.html",
        TRADITIONAL_PAGE.encode("big5"),
        "text/html",
        ("127.0.0.1",),
    )
    assert traditional.charset in {"big5", "cp950", "big5hkscs"}
    assert traditional.title == "足球比賽回顧"
    assert traditional.relevance == pytest.approx(simplified.relevance)
    assert [link.anchor for link in traditional.links] == pytest.approx(
        [link.anchor for link in simplified.links]
    )
    assert traditional.links[0].anchor > 0.2
    assert traditional.fingerprint == simplified.fingerprint  # one page, in two scripts


@pytest.mark.parametrize("content_type", ["text/html; charset=gbk", "text/html"])
def test_a_gbk_page_after_a_utf8_byte_order_mark_is_read_as_gbk(content_type):
    # A GBK site's PHP include saved as "UTF-8 with BOM" puts one before every page.
    html = PAGE.replace("<head>", "<head><meta charset=gbk>")
    body = b"\xef\xbb\xbf" + html.encode("gbk")
    page = analyzer().analyze("http://127.0.0.1/gbk.php", body, content_type)
    assert page.charset == "gb18030"
    assert page.title == "足球比赛回顾"
    assert page.text.startswith("昨晚的足球比赛")
    assert page.relevance == pytest.approx(analyze(PAGE).relevance)


def test_links_the_crawl_may_follow_on_site_web_pages_without_fragments():
    urls = [link.url for link in analyze(PAGE).links]
    assert "http://127.0.0.1/sports/final.html" in urls  # fragment dropped
    assert "http://127.0.0.1/sports/%E8%B6%B3%E7%90%83/league.html" in urls
    assert (
        "http://127.0.0.1/%E4%B8%AD%E6%96%87/%E9%A1%B5%E9%9D%A2.html?q=%E8%B6%B3%E7%90%83" in urls
    )
    assert not [url for url in urls if url.endswith(".pdf")]  # not a page
    assert not [
        url for url in urls if not url.startswith("http://127.0.0.1/")
    ]  # mailto, js, off-site
    assert len(urls) == len(set(urls))


def test_query_of_a_gbk_page_is_encoded_in_gbk():
    html = '<html><head><meta charset="gbk"></head><body><a href="/s?q=足球">搜</a></body></html>'
    page = analyze(html, "gbk")
    assert [link.url for link in page.links] == ["http://127.0.0.1/s?q=%D7%E3%C7%F2"]


def test_link_terms_anchor_navigation_template_and_noise():
    links = {link.text: link for link in analyze(PAGE).links}
    final, shop, session = links["决赛的完整报道"], links["商城"], links["列表"]
    assert final.anchor > 0.2 > shop.anchor
    assert all(links[text].navigation for text in ("首页", "新闻", "商城"))
    assert not final.navigation
    assert final.template == "127.0.0.1/sports/final.html"
    assert session.url == "http://127.0.0.1/list.php?page=2"  # the session id taken out
    assert not session.noise
    assert not final.noise


def test_a_url_linked_again_is_scored_by_its_new_anchor_and_judged_as_before():
    """What a URL alone says is worked out once per analyzer; what a link says, per link."""
    shared = analyzer(deny="league")
    first = shared.analyze("http://127.0.0.1/a.html", PAGE.encode(), "text/html")
    again = PAGE.replace("决赛的完整报道", "天气预报与交通路况").replace("商城", "足球商城")
    second = shared.analyze("http://127.0.0.1/b.html", again.encode(), "text/html")
    before = {link.url: link for link in first.links}
    after = {link.url: link for link in second.links}
    assert before.keys() == after.keys()
    assert not any("league" in url for url in after)
    final, shop = "http://127.0.0.1/sports/final.html", "http://127.0.0.1/shop/"
    assert after[final].anchor < before[final].anchor
    assert after[shop].anchor > before[shop].anchor
    for url, link in after.items():
        assert (link.template, link.noise) == (before[url].template, before[url].noise)


def test_allow_deny_and_the_cap_on_links():
    page = analyze(PAGE, allow="/sports/", deny="league")
    assert [link.url for link in page.links] == ["http://127.0.0.1/sports/final.html"]
    many = "".join(f'<a href="/p/{i}.html">第{i}页</a>' for i in range(50))
    capped = analyze(f"<html><body><p>{many}</p></body></html>", max_links=10)
    assert len(capped.links) == 10
    assert capped.truncated == 40
    assert capped.links[0].url.endswith("/p/0.html")  # page order


def test_past_the_cap_the_links_that_say_most_of_the_topic_are_kept():
    """An A-Z index lists more links than the cap: before, the first ones were kept, and an
    index of 1,300 classes lost `String` and `Thread` (review of a site not seen before:
    harvest@50 of the topics of the two 0.71 and 0.77 of the ceiling, 0.93 and 1.00 kept)."""
    names = [f'<li><a href="/p/{i}.html">第{i}页</a></li>' for i in range(150)]
    names[40] = '<li><a href="/football.html">足球比赛</a></li>'
    names[120] = '<li><a href="/football-late.html">足球联赛</a></li>'
    capped = analyze(f"<html><body><ul>{''.join(names)}</ul></body></html>", max_links=10)
    urls = [urlsplit(link.url).path for link in capped.links]
    assert len(urls) == 10
    assert capped.truncated == 140
    # The topic's link, then the first of the others, in page order; ten times the cap
    # are looked at, not a link farm's every link.
    assert urls == [
        "/p/0.html",
        "/p/1.html",
        "/p/2.html",
        "/p/3.html",
        "/p/4.html",
        "/p/5.html",
        "/p/6.html",
        "/p/7.html",
        "/p/8.html",
        "/football.html",
    ]


def test_a_seed_on_the_bare_domain_keeps_the_hosts_beside_it():
    hosts = ("example.com.cn", "www.example.com.cn", "news.example.com.cn", "example.cn")
    links = "".join(f'<a href="http://{host}/a.html">{host}</a>' for host in hosts)
    html = f"<html><body><p>{links}</p></body></html>".encode()

    def followed(domain: str) -> set[str]:
        page = Analyzer(KEYWORDS).analyze(f"http://{domain}/", html, "text/html", (domain,))
        return {urlsplit(link.url).hostname for link in page.links}

    assert followed("www.example.com.cn") == {"www.example.com.cn"}
    assert followed("example.com.cn") == set(hosts) - {"example.cn"}


def test_links_to_a_host_the_crawl_takes_on_later_are_followed_from_then():
    html = (
        b'<p><a href="http://example.com/a.html">a</a><a href="http://example.org/b.html">b</a></p>'
    )
    shared = Analyzer(KEYWORDS)

    def followed(*domains: str) -> list[str]:
        page = shared.analyze("http://example.com/", html, "text/html", domains)
        return [link.url for link in page.links]

    assert followed("example.com") == ["http://example.com/a.html"]
    assert followed("example.com", "example.org") == [
        "http://example.com/a.html",
        "http://example.org/b.html",
    ]


def test_same_text_same_fingerprint_and_off_when_asked():
    assert analyze(PAGE).fingerprint == analyze(PAGE.replace("新闻", "资讯")).fingerprint
    assert (
        analyze(PAGE).fingerprint != analyze("<p>完全不同的一段文字，讲的是烹饪。</p>").fingerprint
    )
    assert analyze(PAGE, fingerprints=False).fingerprint == 0


#: Two stories, and the headlines of other stories that portals set around a story.
STORY = (
    "山东泰山在中超第二十六轮比赛中以三比一战胜上海海港，克雷桑梅开二度。",
    "赛后山东泰山主教练表示，球队下半场的进攻更加坚决，克雷桑的进球改变了比赛走势。",
    "本场比赛上海海港控球率达到百分之六十，但射门转化率不高，只有一次打门命中目标。",
    "积分榜上，山东泰山以五十二分排名第三，与领头羊的差距缩小到四分。",
)
OTHER_STORY = (
    "北京国安客场与成都蓉城战成二比二平，张玉宁在补时阶段头球扳平比分。",
    "成都蓉城上半场凭借两次定位球取得领先，北京国安在下半场加强了边路进攻。",
    "国安主教练赛后说，球员们在落后的情况下没有放弃，这场平局来之不易。",
    "此役过后，成都蓉城仍然排在积分榜第四位，北京国安升至第五位。",
)
SPORTS_HEADLINES = [
    f"{team}{event}"
    for team in ("武汉三镇", "浙江队", "天津津门虎", "河南队", "长春亚泰")
    for event in ("主场取胜", "宣布新帅人选", "门将伤愈复出")
]
NEWS_HEADLINES = [
    f"{city}{event}"
    for city in ("北京", "上海", "广州", "深圳", "杭州")
    for event in ("地铁新线开通运营", "发布寒潮预警", "新建公园正式开放")
]


def story_page(title: str, paragraphs: tuple[str, ...], channel: str, headlines: list[str]) -> str:
    """A story as a portal's article template shows it: breadcrumb, byline, the text, tags,
    related stories of its channel, and the site's hot list."""
    links = [f'<li><a href="/{n}.shtml">{text}</a></li>' for n, text in enumerate(headlines)]
    return (
        f"<html><head><title>{title}</title></head><body>"
        f'<div class="crumb"><a href="/">首页</a> &gt; <a href="/{channel}/">{channel}</a>'
        f' &gt; 正文</div><div class="main"><h1>{title}</h1><div class="info">2026-11-20</div>'
        + "".join(f"<p>{text}</p>" for text in paragraphs)
        + '<div class="tags">标签：<a href="/tag/1.html">足球</a> '
        f'<a href="/tag/2.html">{channel}</a></div>'
        f'<div class="related"><h3>相关新闻</h3><ul>{"".join(links[:5])}</ul></div></div>'
        f'<div class="side"><h3>热点新闻</h3><ol>{"".join(links[5:15])}</ol></div></body></html>'
    )


def test_a_story_republished_in_other_surroundings_is_a_near_duplicate():
    """Portals republish a story in another channel, or syndicate it to another of their
    sites: the text is the same, the related stories, hot list, tags and breadcrumb around
    it are not. Its fingerprint leaves out those lists of links to other pages; another
    story in the same surroundings stays apart."""
    shared = analyzer()

    def fingerprint(path: str, html: str) -> int:
        return shared.analyze(f"http://127.0.0.1{path}", html.encode(), "text/html").fingerprint

    title = "山东泰山3比1胜上海海港"
    sports = fingerprint("/sports/1.shtml", story_page(title, STORY, "体育", SPORTS_HEADLINES))
    news = fingerprint("/news/1.shtml", story_page(title, STORY, "新闻", NEWS_HEADLINES))
    other = fingerprint(
        "/sports/2.shtml",
        story_page("北京国安2比2平成都蓉城", OTHER_STORY, "体育", SPORTS_HEADLINES),
    )
    assert (sports ^ news).bit_count() <= 3
    assert (sports ^ other).bit_count() > 3
    # A list's links are what it says: two lists in one template stay apart.
    lists = [
        fingerprint(
            f"/{n}/",
            "<h2>列表</h2><ul>"
            + "".join(f"<li><a href='/{h}'>{h}</a></li>" for h in heads)
            + "</ul>",
        )
        for n, heads in enumerate((SPORTS_HEADLINES, NEWS_HEADLINES))
    ]
    assert (lists[0] ^ lists[1]).bit_count() > 3


def test_an_analysis_crosses_process_boundaries():
    page = analyze(PAGE)
    assert pickle.loads(pickle.dumps(page)) == page
    arguments = pickle.loads(pickle.dumps(Analyzer.arguments(KEYWORDS, project_settings())))
    assert Analyzer(**arguments).analyze("http://127.0.0.1/", PAGE.encode(), "text/html") == (
        Analyzer(KEYWORDS).analyze("http://127.0.0.1/", PAGE.encode(), "text/html")
    )


def test_a_worker_analyzes_without_loading_scrapy_or_twisted():
    """A worker starts with every crawl (and again if one dies): loading Scrapy and Twisted
    would double its start. Its arguments carry Scrapy's list of binary file extensions, so
    it still follows no link to a PDF."""
    check = (
        "import pickle, sys; from topicspider.analysis import Analyzer; "
        "page = Analyzer(**pickle.load(sys.stdin.buffer)).analyze("
        "'http://127.0.0.1/', sys.argv[1].encode(), 'text/html'); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'scrapy', 'twisted'})); "
        "print(' '.join(link.url for link in page.links))"
    )
    worker = subprocess.run(
        [sys.executable, "-c", check, PAGE],
        input=pickle.dumps(Analyzer.arguments(KEYWORDS, project_settings())),
        capture_output=True,
        check=True,
    )
    imported, links = worker.stdout.decode().splitlines()
    assert imported == "[]"
    assert "http://127.0.0.1/sports/final.html" in links.split()
    assert "report.pdf" not in links


def test_topical_link_share_tells_a_topic_index_from_a_site_index():
    def index(*entries: str) -> str:
        items = "".join(
            f'<li><a href="/{n}.html">{entry}</a></li>' for n, entry in enumerate(entries)
        )
        return f"<html><body><ul>{items}</ul></body></html>"

    # Entries longer than a menu's: a table of contents is content.
    topic = analyze(index("足球联赛第一轮比赛回顾", "足球联赛第二轮比赛回顾", "财经新闻与评论汇总"))
    site = analyze(
        index("足球比赛与联赛回顾", *(f"{name}新闻与评论汇总" for name in ("财经", "科技", "汽车")))
    )
    assert min(topic.link_share, site.link_share) > 0.9
    assert topic.topical_link_share > 0.5 > site.topical_link_share


def test_a_chapter_page_s_topical_share_leaves_out_the_site_s_navigation():
    """A Read the Docs chapter page lists its sections in its body, beside a sidebar of
    every chapter: the sidebar says nothing of what the chapter lists."""
    sections = "".join(
        f'<li><a href="/ch2/{n}.html">足球联赛第{n}轮比赛回顾</a></li>' for n in range(4)
    )
    chapters = "".join(
        f'<li><a href="/ch{n}.html">第{n}章 财经新闻与评论汇总</a></li>' for n in range(12)
    )
    html = (
        f'<html><body><div role="navigation"><ul>{chapters}</ul></div>'
        f'<div role="main"><h1>足球比赛</h1><ul>{sections}</ul></div></body></html>'
    )
    page = analyze(html)
    assert page.topical_link_share > 0.9
    assert all(link.site_wide for link in page.links if "/ch2/" not in link.url)


def test_a_site_sidebar_naming_the_topic_does_not_make_every_page_relevant():
    """mdBook, Sphinx and blog sidebars list every chapter on every page: a page about
    something else scores nothing for the topic a sidebar entry names."""

    def page(title: str, text: str) -> str:
        return (
            f"<html><head><title>{title}</title></head><body>"
            f'<nav class="sidebar"><ol>{CHAPTERS}</ol></nav><main><p>{text}</p></main>'
            "</body></html>"
        )

    cooking = analyze(page("家常菜谱", COOKING))
    match = analyze(page("足球比赛规则", "一场足球比赛分上下两个半场，每队上场十一名球员。"))
    assert cooking.relevance == 0
    assert match.relevance > 0.3
    assert "http://127.0.0.1/book/ch44.html" in {link.url for link in cooking.links}


def test_a_sidebar_in_a_plain_div_stops_counting_once_another_page_had_it():
    """Texinfo manuals and most templates of Chinese sites put the whole site's contents in
    a ``div`` on every page. Counted as text it makes every page look like every topic and
    every page a near-duplicate of every other; the analyzer learns it from the pages."""

    def page(title: str, text: str) -> bytes:
        return (
            f"<html><head><title>{title}</title></head><body><div id='main'><p>{text}</p></div>"
            f"<div id='toc'><ul>{CHAPTERS}</ul></div></body></html>"
        ).encode()

    shared = analyzer()
    pages = [
        shared.analyze(f"http://127.0.0.1/{n}.html", page(title, text), "text/html")
        for n, (title, text) in enumerate(
            [
                ("目录", "欢迎阅读本书。"),
                ("家常菜谱", COOKING),
                ("天气", "明天白天多云转晴，夜间有小雨，气温十二到十八度。"),
            ]
        )
    ]
    assert pages[0].relevance > 0  # the first page cannot know
    assert pages[1].relevance == pages[2].relevance == 0
    assert bin(pages[1].fingerprint ^ pages[2].fingerprint).count("1") > 3


def test_a_section_whose_title_does_not_name_the_topic_scores_by_its_chapter():
    contents = (
        '<ul><li><a href="/football.html">第3章 足球比赛</a><ul>'
        '<li><a href="/s/31.html">3.1 规则与裁判</a></li></ul></li>'
        '<li><a href="/cooking.html">第4章 家常菜谱</a><ul>'
        '<li><a href="/s/41.html">4.1 规则与火候</a></li></ul></li></ul>'
    )
    page = analyze(f"<html><body>{contents}</body></html>")
    score = {link.url: link.anchor for link in page.links}
    assert score["http://127.0.0.1/s/31.html"] > 0
    assert score["http://127.0.0.1/s/41.html"] == 0


def index_page(
    groups: dict[str, list[str]], heading: str = "<p><strong>{}</strong></p>", after: str = ""
) -> str:
    """An index page of groups of links, each list under its heading (``after``: what
    closes the heading's markup after the list)."""
    numbers = iter(range(1000))
    lists = "".join(
        heading.format(name)
        + "".join(["<ul>", *(f'<li><a href="/{next(numbers)}.html">{e}</a></li>' for e in items)])
        + "</ul>"
        + after
        for name, items in groups.items()
    )
    return f"<html><body>{lists}</body></html>"


@pytest.mark.parametrize(
    ("heading", "after"),
    [
        ("<p><strong>{}</strong></p>", ""),
        ("<h3>{}</h3>", ""),
        ('<h2><a href="/section.html">{}</a></h2>', ""),
        ('<div class="hd"><h2>{}</h2></div><div class="bd">', "</div>"),
        ('<h3>{}</h3><div class="dlist">', "</div>"),
    ],
    ids=[
        "bold paragraph",
        "heading",
        "heading linking to its section",
        "both in boxes of their own",
        "list in a box of its own",
    ],
)
def test_a_link_scores_by_the_heading_of_the_group_it_is_listed_under(heading, after):
    """A hand-written index groups its pages under headings, and an entry's own words may
    not name the topic (Postfix's "SMTP connection triage" under "SMTP relay and access
    control"): before, such entries scored 0, as every other link of the page."""
    groups = {"足球比赛": ["赛程与裁判安排", "球场与门票"], "家常菜谱": ["火候与调味", "刀工入门"]}
    page = analyze(index_page(groups, heading, after))
    score = {link.text: link.anchor for link in page.links}
    assert min(score["赛程与裁判安排"], score["球场与门票"]) > 0
    assert score["火候与调味"] == score["刀工入门"] == 0


def test_a_link_scores_by_the_headings_of_the_sections_its_group_stands_in():
    """git(1)'s command list: ``Manipulation commands`` under ``Low-level commands
    (plumbing)``. Before, only the heading right above a list was read (review of a site
    not seen before: harvest@50 of plumbing 15 of 19 labelled pages, 16 with the section's
    heading). The page's title (``h1``) is no section: it would lift every group alike."""
    groups = {"赛程": ["周末", "夜场"], "票务": ["门票"], "火候": ["调味"], "刀工": ["入门"]}
    lists = index_page(groups, "<h3>{}</h3>")
    sections = lists.replace("<h3>赛程", "<h2>足球比赛</h2><h3>赛程").replace(
        "<h3>火候", "<h2>家常菜谱</h2><h3>火候"
    )
    page = analyze(sections.replace("<body>", "<body><h1>足球比赛</h1>"))
    score = {link.text: link.anchor for link in page.links}
    assert min(score["周末"], score["夜场"], score["门票"]) > 0
    assert score["调味"] == score["入门"] == 0
    titled = analyze(lists.replace("<body>", "<body><h1>足球比赛</h1>"))
    assert all(link.anchor == 0 for link in titled.links)


def test_a_heading_that_names_no_topic_takes_nothing_from_a_link():
    """The heading is read with the link, not instead: one that says nothing of the topic
    would thin out what the link itself says."""
    alone = analyze(index_page({"目录": ["足球比赛规则", "家常菜谱"]}))
    grouped = analyze(index_page({"目录": ["足球比赛规则", "家常菜谱"], "附录": ["索引"]}))
    assert [link.anchor for link in grouped.links][:2] == [link.anchor for link in alone.links]


def test_one_list_under_one_heading_is_no_group():
    """``Table of Contents`` over a page's only list tells no entry from another."""
    page = analyze(index_page({"足球比赛": ["赛程与裁判安排", "火候与调味"]}))
    assert all(link.anchor == 0 for link in page.links)


@pytest.mark.parametrize(
    "head",
    [
        f"<style>{'p { margin: 0 } ' * 400}</style><base href='/sports/2024/'>",
        "<!-- <base href='/old/'> --><base href='/sports/2024/'>",
    ],
    ids=["after 4 KB of style", "after a commented-out one"],
)
def test_links_start_from_the_page_s_first_base_element(head):
    page = analyze(
        f"<html><head><title>足球</title>{head}</head><body>"
        "<p>足球比赛的<a href='final.html'>决赛报道</a>。</p></body></html>"
    )
    assert [link.url for link in page.links] == ["http://127.0.0.1/sports/2024/final.html"]


def test_an_index_whose_entries_name_the_topic_in_passing_is_no_list_of_the_topic():
    """Exim's index of options merges each chapter's options into one link text, and a word
    of the topic here and there (``log_file_path``) made half of it count: before, it was a
    list of the topic, and the 35 pages it named were stored from the lower bar, 18 of them
    off topic (review of a site not seen before: stored on topic 0.20, 0.33 with it)."""
    keywords = load_keywords(
        "configuration:3,config file:3,option:1,main section:2,macro:2,include:1.5,"
        "string expansion:2,syntax:1.5,comment:1,default:1,setting:1.5,runtime:2,"
        "parameter:1.5,file:1"
    )
    options = (
        "accept_8bitmime acl_not_smtp acl_smtp_connect bounce_return_body check_spool_space"
        " daemon_smtp_ports delay_warning dns_again_means_nonexist errors_copy freeze_tell"
        " helo_accept_junk_hosts host_lookup ignore_bounce_errors_after keep_malformed"
    )
    entries = "".join(
        f'<li><a href="/ch{n}.html">{options}{" log_file_path" if n % 2 else ""}</a></li>'
        for n in range(10)
    )
    index = Analyzer(keywords).analyze(
        "http://127.0.0.1/index.html",
        f"<html><body><ul>{entries}</ul></body></html>".encode(),
        "text/html",
        ("127.0.0.1",),
    )
    assert max(link.anchor for link in index.links) > 0
    assert index.topical_link_share == 0
