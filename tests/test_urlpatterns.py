import doctest

import pytest

import topicspider.urlpatterns
from topicspider.urlpatterns import PatternStats, is_noise, template, without_session


def test_doctests():
    assert doctest.testmod(topicspider.urlpatterns).failed == 0


def test_urls_of_one_kind_share_a_template():
    assert template("http://a.cn/news/2024/10/123.html") == template(
        "http://a.cn/news/2023/1/7.html"
    )
    assert template("http://a.cn/news/1.html") != template("http://a.cn/video/1.html")
    assert template("http://a.cn/list?page=2&cat=3") == template("http://a.cn/list?cat=9&page=1")


def test_noise_urls():
    assert is_noise("http://a.cn/calendar/2031/07/")
    assert is_noise("http://a.cn/news/5.html?print=1")
    assert not is_noise("http://a.cn/sports/football/2024/derby.html")
    assert not is_noise("http://a.cn/archive.php?year=2024")
    assert not is_noise("http://a.cn/article.jsp;jsessionid=ABCDEF0123?id=3")


@pytest.mark.parametrize(
    "url",
    [
        "http://bbs.a.cn/forum.php?mod=viewthread&action=printable&tid=101",  # Discuz X
        "http://bbs.a.cn/viewthread.php?action=printable&tid=5",  # Discuz 7
        "http://bbs.a.cn/home.php?mod=space&do=calendar",
        "http://a.cn/index.php?act=Print&id=3",
    ],
)
def test_print_and_calendar_views_named_by_a_query_value(url):
    """Before, only keys were looked at: every thread of a Discuz forum was stored twice,
    once as its printable view."""
    assert is_noise(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://bbs.a.cn/member.php?mod=logging&action=login",  # Discuz X
        "http://bbs.a.cn/member.php?mod=register",
        "http://bbs.a.cn/forum.php?mod=post&action=reply&fid=2&tid=101",
        "http://bbs.a.cn/forum.php?mod=post&action=newthread&fid=2",
        "http://bbs.a.cn/posting.php?mode=reply&t=9",  # phpBB
        "http://bbs.a.cn/ucp.php?mode=login",
    ],
)
def test_a_forums_forms_to_log_in_or_reply_are_noise(url):
    """A forum links a reply form from every thread and a login form from every page; a
    crawler without an account gets the same prompt from each, and no post."""
    assert is_noise(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://bbs.a.cn/forum.php?mod=viewthread&tid=101",
        "http://bbs.a.cn/forum.php?mod=forumdisplay&fid=2",
        "http://bbs.a.cn/viewtopic.php?t=5",
        "http://a.cn/list.php?tag=print",  # a section on printing, not a print view
        "http://a.cn/search.php?q=login",
        "http://a.cn/stock.php?action=quote&code=600000",  # a stock's page
        "http://a.cn/search.php?q=calendar",
    ],
)
def test_other_query_values_are_no_noise(url):
    assert not is_noise(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://a.cn/gb/news_print.jsp?id=2016",
        "http://a.cn/article_print.php?id=7",
        "http://a.cn/print_article.asp?ArticleID=7",
        "http://a.cn/news/PrintPage.aspx?id=7",
        "http://a.cn/news-print.do;jsessionid=0AF3?id=7",
    ],
)
def test_print_scripts_named_with_another_word(url):
    """Before, only a script named ``print`` itself was a print view: on a JSP portal in GBK
    every article of the sports channel was stored twice, once as ``news_print.jsp?id=``."""
    assert is_noise(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://a.cn/print_media.html",  # a page about print media
        "http://a.cn/blueprint.php?id=3",
        "http://a.cn/sprint_news.php?id=3",
        "http://a.cn/3d-print/",
    ],
)
def test_pages_about_printing_are_no_print_views(url):
    assert not is_noise(url)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "http://a.cn/article.jsp;jsessionid=ABCDEF0123.node1?id=3",
            "http://a.cn/article.jsp?id=3",
        ),
        ("http://a.cn/a.do;JSESSIONID=ABCDEF0123", "http://a.cn/a.do"),
        ("http://a.cn/(S(lit3py55t21z5v55vlm25s55))/news/1.aspx", "http://a.cn/news/1.aspx"),
        ("http://a.cn/(X(1)S(lit3py55t21z5v55vlm25s55))/a.aspx?p=2", "http://a.cn/a.aspx?p=2"),
        ("http://a.cn/list.php?PHPSESSID=8f3a&page=2", "http://a.cn/list.php?page=2"),
        ("http://a.cn/a.asp?ASPSESSIONIDQSCTDRBA=KLMHGGODOF&id=7", "http://a.cn/a.asp?id=7"),
        ("http://a.cn/a.cfm?id=7&CFID=1234&CFTOKEN=56789", "http://a.cn/a.cfm?id=7"),
        ("http://a.cn/forum.php?fid=2&sid=k9Xq2mZ7Lp4Rt8Wc", "http://a.cn/forum.php?fid=2"),
        (
            "http://a.cn/showthread.php?s=0f9e8d7c6b5a49382716afbecd001122&t=5",
            "http://a.cn/showthread.php?t=5",
        ),
        ("http://a.cn/a.html?utm_source=weibo&utm_medium=social", "http://a.cn/a.html"),
        (
            "http://a.cn/s?q=%D7%E3%C7%F2&spm=a2c4g.11186623.0.0.5f3a",
            "http://a.cn/s?q=%D7%E3%C7%F2",
        ),
        ("http://a.cn/a.html?fbclid=IwAR0xyz&id=1&gclid=Cj0KCQ", "http://a.cn/a.html?id=1"),
    ],
)
def test_session_ids_and_tracking_parameters_are_taken_out(url, expected):
    assert without_session(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "http://a.cn/list.php?sid=3&page=2",  # a section, not a session
        "http://a.cn/?s=football",  # a search
        "http://a.cn/news/2024/derby.html",
        "http://a.cn/static/(notes)/a.html",
        "http://a.cn/a.php?session=2024",
        "http://a.cn/a.php?spmx=1&xutm_source=2",
    ],
)
def test_other_urls_are_left_as_they_are(url):
    assert without_session(url) == url


def test_yield_is_learned_and_smoothed():
    stats = PatternStats(prior=0.2, strength=4, noise_after=10)
    assert stats.yield_of(template("http://a.cn/sports/1.html")) == 0.2
    for i in range(8):
        stats.record(template(f"http://a.cn/sports/{i}.html"), accepted=True)
        stats.record(template(f"http://a.cn/shop/{i}.html"), accepted=False)
    assert stats.yield_of(template("http://a.cn/sports/99.html")) > 0.7
    assert stats.yield_of(template("http://a.cn/shop/99.html")) < 0.1
    assert not stats.is_barren(template("http://a.cn/shop/99.html"))
    for i in range(8, 12):
        stats.record(template(f"http://a.cn/shop/{i}.html"), accepted=False)
    assert stats.is_barren(template("http://a.cn/shop/99.html"))
    assert not stats.is_barren(template("http://a.cn/sports/99.html"))
