import pickle

import pytest

from tests.test_analysis import KEYWORDS
from tests.test_spider import read_jsonl
from tests.test_spider_focus import ARTICLE, ONE_AT_A_TIME, crawl, page, served
from topicspider.analysis import Analyzer


def canonical(page_url: str, href: str, rel: str = "canonical") -> str | None:
    html = (
        f'<html><head><meta charset="gbk"><link rel="{rel}" href="{href}"><title>足球</title>'
        f"</head><body>{ARTICLE}</body></html>"
    )
    return (
        Analyzer(KEYWORDS).analyze(page_url, html.encode("gbk"), "text/html", ("a.cn",)).canonical
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
        ("http://a.cn/a.html", "http://b.cn/a.html", None),  # off the crawl's sites
        (
            "http://a.cn/%E8%B5%9B%E7%A8%8B.html?from=home",
            "/赛程.html",
            "http://a.cn/%E8%B5%9B%E7%A8%8B.html",
        ),
    ],
)
def test_the_address_a_page_names_as_its_own(page_url, href, expected):
    assert canonical(page_url, href) == expected


def test_only_a_canonical_link_names_it():
    assert canonical("http://a.cn/a.html?from=home", "/a.html", rel="Canonical") == (
        "http://a.cn/a.html"
    )
    assert canonical("http://a.cn/a.html?from=home", "/a.html", rel="alternate") is None


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

    resumed = crawl(f"{aliased_site}/index.html", tmp_path, *settings)
    assert "Resuming crawl" in resumed.log
    fetched = addresses(read_jsonl(tmp_path / "f.jsonl"), aliased_site)
    assert fetched == ["/index.html", "/match.html?from=index", "/list.html"]
