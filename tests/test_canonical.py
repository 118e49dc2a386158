import pickle
from urllib.parse import unquote

import pytest

from tests.httpserver import Handler, serving
from tests.test_analysis import KEYWORDS
from tests.test_spider import read_jsonl
from tests.test_spider_focus import ARTICLE, ONE_AT_A_TIME, crawl, page, served
from topicspider.analysis import Analyzer
from topicspider.canonical import DroppedParameters, KnownCanonicals, link_header_canonicals


def canonical(
    page_url: str,
    href: str | None,
    rel: str = "canonical",
    link: tuple[bytes, ...] = (),
    head: str = "",
) -> str | None:
    """What the page at ``page_url`` names as its own with a ``<link>`` to ``href`` (None:
    no ``<link>``), more ``head`` and ``Link`` headers ``link``, handed to the analyzer as
    the spider hands them."""
    if href is not None:
        head += f'<link rel="{rel}" href="{href}">'
    html = (
        f'<html><head><meta charset="gbk">{head}<title>足球</title></head>'
        f"<body>{ARTICLE}</body></html>"
    )
    return (
        Analyzer(KEYWORDS)
        .analyze(page_url, html.encode("gbk"), "text/html", ("a.cn",), link_header_canonicals(link))
        .canonical
    )


@pytest.mark.parametrize(
    ("page_url", "href", "expected"),
    [
        ("http://a.cn/news/index.html", "/news/", "http://a.cn/news/"),
        (
            "http://a.cn/news/",
            "http://www.a.cn/news/default.aspx",
            "http://www.a.cn/news/default.aspx",
        ),
        ("http://a.cn/a.html?from=home", "a.html", "http://a.cn/a.html"),
        ("http://a.cn/a.html;jsessionid=0AF3B2C4", "http://a.cn/a.html#top", None),  # its own
        ("http://a.cn/a.html", "http://a.cn/a.html", None),
        ("http://a.cn/list/2.html", "/list/1.html", None),  # another path: not believed
        # A list's later page naming its first: another page number, not believed.
        ("http://a.cn/forum.php?fid=2&page=2", "/forum.php?fid=2", None),
        ("http://a.cn/s?wd=足球&pn=20", "/s?wd=足球&pn=0", None),
        ("http://a.cn/list.php?Page=3", "/list.php?page=1", None),
        ("http://a.cn/news/list.jsp?currentPage=2", "/news/list.jsp", None),
        # The same page number, the order and the sort dropped: its own address.
        (
            "http://a.cn/list.php?sort=new&page=2",
            "/list.php?page=2",
            "http://a.cn/list.php?page=2",
        ),
        ("http://a.cn/a.html", "http://b.cn/a.html", None),  # off the crawl's sites
        (
            "http://a.cn/%E8%B5%9B%E7%A8%8B.html?from=home",
            "/赛程.html",
            "http://a.cn/%E8%B5%9B%E7%A8%8B.html",
        ),
        # Percent-escapes in lower case, as ASP.NET writes them: the page's own path.
        (
            "http://a.cn/%E8%B5%9B%E7%A8%8B.html?from=home",
            "/%e8%b5%9b%e7%a8%8b.html",
            "http://a.cn/%e8%b5%9b%e7%a8%8b.html",
        ),
        ("http://a.cn/a.html?from=home", "/a.html#comments", "http://a.cn/a.html"),
        ("http://a.cn/a.html?from=home", "https://a.cn/a.html", "https://a.cn/a.html"),
        # Its own address, its host and port written otherwise.
        ("http://a.cn/a.html", "http://A.CN:80/a.html", None),
        ("https://a.cn/", "https://a.cn:443", None),
    ],
)
def test_the_address_a_page_names_as_its_own(page_url, href, expected):
    assert canonical(page_url, href) == expected


def test_only_a_canonical_link_names_it():
    assert canonical("http://a.cn/a.html?from=home", "/a.html", rel="Canonical") == (
        "http://a.cn/a.html"
    )
    assert canonical("http://a.cn/a.html?from=home", "/a.html", rel="alternate") is None


@pytest.mark.parametrize(
    ("link", "expected"),
    [
        ((b'</a.html>; rel="canonical"',), "http://a.cn/a.html"),
        # Among the links a server adds to every page, in one header or in several.
        (
            (b"</static/site.css>; rel=preload; as=style, <http://a.cn/a.html>; rel=canonical",),
            "http://a.cn/a.html",
        ),
        (
            (b"</static/site.css>; rel=preload; as=style", b'<a.html>; rel="preload canonical"'),
            "http://a.cn/a.html",  # relative to the page's address, not to its <base href>
        ),
        ((b'<http://a.cn/a.html?v=1,2>; title="a, b"; REL=Canonical',), "http://a.cn/a.html?v=1,2"),
        (
            (b"</static/site.css>; rel=preload, " * 700 + b"</a.html>; rel=canonical",),
            "http://a.cn/a.html",
        ),
        ((b"</a.html>; rel='canonical'",), "http://a.cn/a.html"),  # quoted, if not as RFCs do
        ((b'</a.html>; rel="alternate"; hreflang=en',), None),
        ((b"</a.html>; rel=alternate; rel=canonical",), None),  # the first rel counts
        ((b'</a.html>; rel=canonical; anchor="/b.html"',), None),  # about /b.html
        ((b"</list/1.html>; rel=canonical",), None),  # another path
        ((b"<http://b.cn/a.html>; rel=canonical",), None),  # off the crawl's sites
    ],
)
def test_a_link_header_names_it(link, expected):
    base = '<base href="http://a.cn/elsewhere/">'
    assert canonical("http://a.cn/a.html?from=home", None, link=link, head=base) == expected


def test_a_link_header_with_a_path_in_utf_8():
    link = ("</赛程.html>; rel=canonical".encode(),)
    assert canonical("http://a.cn/%E8%B5%9B%E7%A8%8B.html?from=home", None, link=link) == (
        "http://a.cn/%E8%B5%9B%E7%A8%8B.html"
    )


@pytest.mark.parametrize(
    "link",
    [
        b"</a.html; rel=canonical",  # < left open
        b'</a.html>; rel="canonical, </b.html>; rel=next',  # quote left open
        "</赛程.html>; rel=canonical".encode("gbk"),  # not UTF-8
        b"\xff\xfe<\x00>; rel=canonical",
        b"<" * 16384,
        b"<a,<b,<c>; rel=canonical" * 600,
        b"</a.html>" + b";" * 16384,
        b'</a.html>; rel="' + b"\\" * 8192,
    ],
)
def test_a_malformed_link_header_names_nothing(link):
    assert canonical("http://a.cn/a.html?from=home", None, link=(link,)) is None


def test_a_page_that_names_two_addresses_names_none():
    """As for Google: one is a mistake and nothing tells which."""
    page_url = "http://a.cn/a.html?from=home"
    header = b"<http://A.CN:80/a.html>; rel=canonical"
    assert canonical(page_url, "/a.html", link=(header,)) == "http://a.cn/a.html"  # one address
    header = b"<http://www.a.cn/a.html>; rel=canonical"
    assert canonical(page_url, "/a.html", link=(header,)) is None
    assert canonical(page_url, page_url, link=(b"</a.html>; rel=canonical",)) is None
    other = '<link rel="canonical" href="/a.html?lang=en">'
    assert canonical(page_url, "/a.html", head=other) is None
    header = b"</a.html>; rel=canonical, </a.html?lang=en>; rel=canonical"
    assert canonical(page_url, None, link=(header,)) is None


def test_a_canonical_is_known_however_a_link_writes_it():
    known = KnownCanonicals()
    known.add("http://A.CN:80/%e8%b5%9b.html")
    known.add("https://b.cn")
    assert "http://a.cn/%E8%B5%9B.html" in known
    assert "https://b.cn/" in known
    assert "https://a.cn/%E8%B5%9B.html" not in known


@pytest.fixture(scope="module")
def aliased_site(tmp_path_factory):
    """A football front page that links its match report at two addresses, one with a
    ``?from=`` the report's head names away, and a list page that links the report again."""
    root = tmp_path_factory.mktemp("aliased-site")
    (root / "index.html").write_text(
        page(
            "足球",
            ARTICLE + '<p><a href="/match.html?from=index">足球比赛回顾</a> '
            '<a href="/list.html">足球新闻列表</a></p>'
            '<div>天气预报：明天多云转晴。<a href="/match.html">更多</a></div>',
        ),
        "utf-8",
    )
    (root / "list.html").write_text(
        page("足球新闻", ARTICLE + '<p><a href="/match.html">足球比赛回顾</a></p>'), "utf-8"
    )
    report = page("足球比赛回顾", ARTICLE * 2).replace(
        "<title>", '<link rel="canonical" href="/match.html"><title>'
    )
    (root / "match.html").write_text(report, "utf-8")
    yield from served(root)


def addresses(rows: list[dict], site: str) -> list[str]:
    return [row["url"].removeprefix(site) for row in rows]


def test_a_page_is_not_fetched_again_at_the_address_it_names_as_its_own(aliased_site, tmp_path):
    result = crawl(f"{aliased_site}/index.html", tmp_path, *ONE_AT_A_TIME)
    fetched = addresses(read_jsonl(tmp_path / "f.jsonl"), aliased_site)
    # /match.html was queued from the front page, behind the report's other address, and
    # dropped as it left the frontier; found again on the list, it was not sent.
    assert fetched == ["/index.html", "/match.html?from=index", "/list.html"]
    assert "'topic/canonical_known': 2" in result.log
    # (The list is a near-duplicate of the front page.)
    stored = addresses(read_jsonl(tmp_path / "pages" / "index.jsonl"), aliased_site)
    assert stored == ["/index.html", "/match.html?from=index"]
    assert "Not fetched" not in result.log


def test_the_addresses_already_fetched_are_kept_across_a_pause(aliased_site, tmp_path):
    jobdir = tmp_path / "job"
    settings = (*ONE_AT_A_TIME, f"JOBDIR={jobdir}")
    # robots.txt, the front page and the report, then the crawl pauses.
    crawl(f"{aliased_site}/index.html", tmp_path, *settings, "CLOSESPIDER_PAGECOUNT=3")
    state = pickle.loads((jobdir / "spider.state").read_bytes())
    assert f"{aliased_site}/match.html" in state["canonicals"]
    assert isinstance(state["dropped_parameters"], DroppedParameters)

    resumed = crawl(f"{aliased_site}/index.html", tmp_path, *settings)
    assert "Resuming crawl" in resumed.log
    fetched = addresses(read_jsonl(tmp_path / "f.jsonl"), aliased_site)
    assert fetched == ["/index.html", "/match.html?from=index", "/list.html"]


def aliased_pages(report: str, report_head: str) -> dict[str, str]:
    """The aliased site's pages, its report at ``report``, naming its address with
    ``report_head`` in its head."""
    return {
        "/index.html": page(
            "足球",
            ARTICLE + f'<p><a href="{report}?from=index">足球比赛回顾</a> '
            '<a href="/list.html">足球新闻列表</a></p>'
            f'<div>天气预报：明天多云转晴。<a href="{report}">更多</a></div>',
        ),
        "/list.html": page("足球新闻", ARTICLE + f'<p><a href="{report}">足球比赛回顾</a></p>'),
        report: page("足球比赛回顾", ARTICLE * 2).replace("<title>", f"{report_head}<title>"),
    }


class LinkHeaderSite(Handler):
    """The aliased site with its report naming its address in a ``Link`` header only,
    among the links its server adds to every page."""

    pages = aliased_pages("/match.html", "")

    def do_GET(self):
        path = self.path.split("?")[0]
        if path not in self.pages:
            self.send(b"", status=404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Link", "</static/site.css>; rel=preload; as=style")
        if path == "/match.html":
            self.send_header(
                "Link", '</static/app.js>; rel=preload, </match.html>; rel="canonical"'
            )
        self.end_headers()
        self.wfile.write(self.pages[path].encode())


@pytest.fixture(scope="module")
def link_header_site():
    with serving(LinkHeaderSite) as url:
        yield url


def test_a_page_is_not_fetched_again_at_the_address_its_link_header_names(
    link_header_site, tmp_path
):
    result = crawl(f"{link_header_site}/index.html", tmp_path, *ONE_AT_A_TIME)
    fetched = addresses(read_jsonl(tmp_path / "f.jsonl"), link_header_site)
    assert fetched == ["/index.html", "/match.html?from=index", "/list.html"]
    assert "'topic/canonical_known': 2" in result.log


@pytest.fixture(scope="module")
def escaped_site(tmp_path_factory):
    """The aliased site with its report at a Chinese address, which its head writes with
    percent-escapes in lower case (as ASP.NET does) and its links in capitals (as browsers
    do)."""
    root = tmp_path_factory.mktemp("escaped-site")
    report = "/%E8%B5%9B%E7%A8%8B.html"
    head = f'<link rel="canonical" href="{report.lower()}">'
    for path, html in aliased_pages(report, head).items():
        (root / unquote(path).removeprefix("/")).write_text(html, "utf-8")
    yield from served(root)


def test_a_canonical_is_known_however_the_site_writes_it(escaped_site, tmp_path):
    result = crawl(f"{escaped_site}/index.html", tmp_path, *ONE_AT_A_TIME)
    fetched = addresses(read_jsonl(tmp_path / "f.jsonl"), escaped_site)
    assert fetched == ["/index.html", "/%E8%B5%9B%E7%A8%8B.html?from=index", "/list.html"]
    assert "'topic/canonical_known': 2" in result.log


class PagedForumSite(Handler):
    """A forum whose front page links the second page of its football board before the
    first, and whose every later page names the first as its canonical, as many list
    templates do."""

    def do_GET(self):
        board, _, query = self.path.partition("?")
        if board == "/index.html":
            links = (
                '<p><a href="/forum.php?page=2">足球比赛讨论区 第2页</a></p>'
                '<div>天气预报：明天多云转晴。<a href="/forum.php">论坛</a></div>'
            )
            self.send(page("社区", ARTICLE + links).encode())
        elif board == "/forum.php" and query in ("", "page=2"):
            number = query.removeprefix("page=") or "1"
            threads = f"<p>第{number}页：{ARTICLE}</p>" * (3 - int(number))
            html = page(f"足球比赛讨论区 第{number}页", threads)
            head = '<link rel="canonical" href="/forum.php"><title>'
            self.send(html.replace("<title>", head).encode())
        else:
            self.send(b"", status=404)


def test_a_list_page_naming_its_first_page_as_canonical_leaves_the_first_page_fetched(
    tmp_path,
):
    with serving(PagedForumSite) as site:
        crawl(f"{site}/index.html", tmp_path, *ONE_AT_A_TIME)
        fetched = addresses(read_jsonl(tmp_path / "f.jsonl"), site)
    assert fetched == ["/index.html", "/forum.php?page=2", "/forum.php"]


def test_a_parameter_is_dropped_once_pages_at_two_paths_drop_it():
    parameters = DroppedParameters()
    parameters.learn("http://a.cn/s1.html?from=index", "http://a.cn/s1.html")
    parameters.learn("http://a.cn/s1.html?from=index&x=1", "http://a.cn/s1.html?x=1")
    assert parameters.address("http://a.cn/s9.html?from=index") == "http://a.cn/s9.html?from=index"
    parameters.learn("http://A.CN:80/s2.html?from=index", "http://a.cn/s2.html")
    assert parameters.address("http://a.cn/s9.html?from=index") == "http://a.cn/s9.html"
    assert (
        parameters.address("http://a.cn:80/s9.html?from=index#top") == "http://a.cn:80/s9.html#top"
    )
    # The other parameters stay as the link wrote them (GBK escapes are no UTF-8).
    assert (
        parameters.address("http://a.cn/list.php?c=%c4%e3&from=index&page=2")
        == "http://a.cn/list.php?c=%c4%e3&page=2"
    )
    assert parameters.address("http://a.cn/s9.html?from=hot") == "http://a.cn/s9.html?from=hot"
    assert parameters.address("http://b.cn/s9.html?from=index") == "http://b.cn/s9.html?from=index"


def test_a_key_is_dropped_with_any_value_once_two_of_its_values_at_two_paths_are():
    """LibreOffice's help links a page with the module it is read from: ``DbPAR=WRITER``,
    ``CALC``, ``IMPRESS``, each changing nothing."""
    parameters = DroppedParameters()
    parameters.learn_same("http://a.cn/print.html?DbPAR=WRITER", "http://a.cn/print.html")
    assert parameters.address("http://a.cn/s.html?DbPAR=CALC") == "http://a.cn/s.html?DbPAR=CALC"
    parameters.learn_same("http://a.cn/tray.html", "http://a.cn/tray.html?DbPAR=DRAW")
    assert parameters.address("http://a.cn/s.html?DbPAR=CALC&x=1") == "http://a.cn/s.html?x=1"
    assert parameters.address("http://a.cn/s.html?DbPAR") == "http://a.cn/s.html"
    assert parameters.address("http://b.cn/s.html?DbPAR=CALC") == "http://b.cn/s.html?DbPAR=CALC"


def test_a_key_whose_one_value_is_the_default_keeps_its_other_values():
    """English is the pages' default: ``lang=en`` changes nothing, ``lang=zh`` does."""
    parameters = DroppedParameters()
    for n in range(3):
        parameters.learn(f"http://a.cn/s{n}.html?lang=en", f"http://a.cn/s{n}.html")
    assert parameters.address("http://a.cn/s9.html?lang=en") == "http://a.cn/s9.html"
    assert parameters.address("http://a.cn/s9.html?lang=zh") == "http://a.cn/s9.html?lang=zh"


def test_parameters_saved_before_keys_were_learned_learn_them():
    """A JOBDIR's state from before: its ``DroppedParameters`` had no values by key."""
    saved = DroppedParameters()
    saved.learn("http://a.cn/s1.html?from=index", "http://a.cn/s1.html")
    del saved._values
    parameters = pickle.loads(pickle.dumps(saved))
    parameters.learn("http://a.cn/s2.html?from=nav", "http://a.cn/s2.html")
    parameters.learn("http://a.cn/s3.html?from=hot", "http://a.cn/s3.html")
    assert parameters.address("http://a.cn/s9.html?from=top") == "http://a.cn/s9.html"


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        # A template that names the script the canonical of every record behind it.
        ("http://a.cn/show.php?id={n}", "http://a.cn/show.php"),
        # Another host, another path: what it drops is not said of this one.
        ("http://www.a.cn/s{n}.html?from=index", "http://a.cn/s{n}.html"),
        ("http://a.cn/s{n}.html?from=index", "http://a.cn/s{n}/index.html"),
        # The canonical adds a parameter of its own.
        ("http://a.cn/s{n}.html?from=index", "http://a.cn/s{n}.html?lang=zh"),
        # A list's first page served for a number past its last (near-duplicates).
        ("http://a.cn/list{n}.php?page=9", "http://a.cn/list{n}.php"),
    ],
)
def test_a_parameter_is_not_learned_from_what_does_not_show_it_changes_nothing(url, canonical):
    parameters = DroppedParameters()
    for n in range(5):
        parameters.learn(url.format(n=n), canonical.format(n=n))
    for n in range(5, 7):
        assert parameters.address(url.format(n=n)) == url.format(n=n)


#: Sentences of the headline site's stories, four a story: no two stories are near-duplicates.
SENTENCES = (
    "主队门将扑出点球，全场观众起立鼓掌。",
    "客队前锋梅开二度，帮助球队客场取胜。",
    "中场核心伤愈复出，传球调度依旧精准。",
    "主教练赛后批评裁判，认为判罚影响了比赛走势。",
    "年轻后卫首次首发，防守端表现稳健。",
    "比赛第八十分钟，替补前锋头球破门绝杀。",
    "两队在雨中鏖战，场地湿滑导致多次失误。",
    "联赛积分榜上，球队上升至第三名。",
    "球迷在看台上打出巨幅标语支持球队。",
)


class HeadlineSite(Handler):
    """A portal whose front page links six stories as headlines with ``?from=index``, and a
    football list that links them plainly; every story names its plain address."""

    stories = range(1, 7)
    canonical = True

    def do_GET(self):
        path, _, query = self.path.partition("?")
        number = path.removeprefix("/s").removesuffix(".html")
        if path == "/index.html":
            headlines = "".join(
                f'<li><a href="/s{n}.html?from=index">头条{n}</a></li>' for n in self.stories
            )
            body = f'{ARTICLE}<p><a href="/list.html">足球比赛新闻</a></p><ul>{headlines}</ul>'
            self.send(page("首页", body).encode())
        elif path == "/list.html":
            items = "".join(
                f'<p><a href="/s{n}.html">足球比赛回顾{n}</a></p>' for n in self.stories
            )
            self.send(page("足球新闻", ARTICLE + items).encode())
        elif number.isdigit() and query in ("", "from=index"):
            text = "".join(
                f"<p>{SENTENCES[(int(number) * 2 + i) % len(SENTENCES)]}</p>" for i in range(4)
            )
            story = page(f"足球比赛回顾{number}", text)
            if self.canonical:
                story = story.replace("<title>", f'<link rel="canonical" href="{path}"><title>')
            self.send(story.encode())
        else:
            self.send(b"", status=404)


class UncanonicalHeadlineSite(HeadlineSite):
    """The headline site with no canonical link: a story and its headline's copy are
    near-duplicates, and that shows the same."""

    canonical = False


@pytest.mark.parametrize("site_class", [HeadlineSite, UncanonicalHeadlineSite])
def test_queued_links_lose_a_parameter_their_pages_were_seen_to_drop(site_class, tmp_path):
    with serving(site_class) as site:
        result = crawl(f"{site}/index.html", tmp_path, *ONE_AT_A_TIME)
        fetched = addresses(read_jsonl(tmp_path / "f.jsonl"), site)
    plain = [f"/s{n}.html" for n in HeadlineSite.stories]
    assert sorted(url for url in fetched if "?" not in url and url.startswith("/s")) == plain
    # Two stories fetched again by their headlines show that the front page's ?from=index
    # changes nothing; the four headlines still queued go without it, to pages fetched.
    assert len([url for url in fetched if url.endswith("?from=index")]) == 2
    assert "'topic/parameters_dropped': 4" in result.log


def test_a_paused_crawl_still_knows_the_stored_pages_their_copies_repeat(tmp_path):
    """The stored pages' addresses are kept across a pause: a copy fetched after it, at its
    headline's address, shows what the headline's parameter changes (nothing)."""
    jobdir = tmp_path / "job"
    settings = (*ONE_AT_A_TIME, f"JOBDIR={jobdir}")
    with serving(UncanonicalHeadlineSite) as site:
        # robots.txt, the front page, the list and the six stories; then the crawl pauses.
        crawl(f"{site}/index.html", tmp_path, *settings, "CLOSESPIDER_PAGECOUNT=9")
        resumed = crawl(f"{site}/index.html", tmp_path, *settings)
        fetched = addresses(read_jsonl(tmp_path / "f.jsonl"), site)
    assert "Resuming crawl" in resumed.log
    assert len([url for url in fetched if url.endswith("?from=index")]) == 2
    assert "'topic/parameters_dropped': 4" in resumed.log
