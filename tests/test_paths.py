import doctest
import os
from urllib.parse import quote

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from topicspider import paths
from topicspider.paths import MAX_NAME_BYTES, MAX_PATH_CHARS, url_to_path

UNSAFE_IN_NAMES = set('\\:*?"<>|\x00')


def test_doctests():
    assert doctest.testmod(paths).failed == 0


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com", "example.com/index.html"),
        ("https://example.com/", "example.com/index.html"),
        ("https://Example.COM:443/news/", "example.com/news/index.html"),
        ("http://example.com/news/", "example.com_80/news/index.html"),
        ("https://example.com:8443/a.html", "example.com_8443/a.html"),
        ("https://example.com/news/page.html", "example.com/news/page.html"),
        ("https://example.com/news/page.HTM", "example.com/news/page.HTM"),
        ("https://example.com/news/2024", "example.com/news/2024~.html"),
        ("https://example.com/page.php", "example.com/page.php~.html"),
        ("https://example.com/a.html#top", "example.com/a.html"),
        ("https://example.com/a.html?", "example.com/a.html"),
        # Chinese, raw or percent-encoded, stays readable.
        ("https://体育.example.cn/足球/比赛.html", "体育.example.cn/足球/比赛.html"),
        ("https://example.cn/%E8%B6%B3%E7%90%83/", "example.cn/足球/index.html"),
        # Dot segments are plain names, however spelled.
        ("https://example.com/../../etc/passwd", "example.com/.%2E/.%2E/etc/passwd~.html"),
        ("https://example.com/%2e%2e/%2E%2E/x.html", "example.com/.%2E/.%2E/x.html"),
        ("https://example.com/./a/.", "example.com/%2E/a/.~.html"),
        (
            "https://example.com/a/..%2F..%2Fetc%2Fpasswd",
            "example.com/a/..%2F..%2Fetc%2Fpasswd~.html",
        ),
        ("https://example.com//etc/passwd", "example.com/~/etc/passwd~.html"),
        # Windows separators, drives, reserved characters and device names.
        (
            "https://example.com/C:%5Cwindows%5Csystem32",
            "example.com/C%3A%5Cwindows%5Csystem32~.html",
        ),
        ("https://example.com/a\\..\\b.html", "example.com/a%5C..%5Cb.html"),
        ("https://example.com/a%3Cb%3E%7C%2A%22.html", "example.com/a%3Cb%3E%7C%2A%22.html"),
        ("https://example.com/con.html", "example.com/%63on.html"),
        ("https://example.com/aux/x.html", "example.com/%61ux/x.html"),
        ("https://example.com/dir. /x.html", "example.com/dir.%20/x.html"),
        # Controls and invisible characters.
        ("https://example.com/a%00b%0Ac.html", "example.com/a%00b%0Ac.html"),
        ("https://example.com/a%E2%80%AEb.html", "example.com/a%E2%80%AEb.html"),
        # Not UTF-8: the bytes are kept.
        ("https://example.com/%D7%E3%C7%F2.html", "example.com/%D7%E3%C7%F2.html"),
        # Our escape and marker characters are escaped when literal.
        ("https://example.com/~user/100%25.html", "example.com/%7Euser/100%25.html"),
        # A page is never where a folder must be, nor where index.html of "/" is.
        ("https://example.com/x.html/y.html", "example.com/x.htm%6C/y.html"),
        ("https://example.com/index.html", "example.com/%69ndex.html"),
        ("https://index.jsonl/", "%69ndex.jsonl/index.html"),
    ],
)
def test_url_to_path(url, expected):
    assert url_to_path(url) == expected


def test_query_is_a_hash_in_the_name():
    first = url_to_path("https://example.com/list.html?page=1")
    second = url_to_path("https://example.com/list.html?page=2")
    assert first.startswith("example.com/list~")
    assert first.endswith(".html")
    assert first != second
    assert url_to_path("https://example.com/list?page=1") not in (first, second)
    assert url_to_path("https://example.com/?q=足球").startswith("example.com/index~")


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("https://example.com/a%2Fb.html", "https://example.com/a/b.html"),
        ("https://example.com/news", "https://example.com/news.html"),
        ("https://example.com/", "https://example.com/index.html"),
        ("https://example.com/a", "https://example.com/a~.html"),
        ("http://example.com/a.html", "https://example.com/a.html"),
        ("http://a_80/x.html", "http://a:80/x.html"),
        ("ftp://a/x.html", "ftp://a:2121/x.html"),
        ("http://a:0/", "http://a/"),
        ("https://user@example.com/a.html", "https://example.com/a.html"),
        ("https://example.com/a.html", " https://example.com/a.html"),
        ("https://example.com/a\t.html", "https://example.com/a.html"),
        ("https://example.com/x.html", "https://example.com/x.html/"),
        # Scrapy fetches these apart: each was stored over the other.
        ("https://example.com/cars;color=red", "https://example.com/cars%3Bcolor=red"),
        ("https://example.com/x;y/z.html", "https://example.com/x%3by/z.html"),
        ("https://example.com/sale/100%", "https://example.com/sale/100%25"),
    ],
)
def test_different_urls_different_paths(first, second):
    assert url_to_path(first) != url_to_path(second)


def test_pages_and_folders_never_share_a_name():
    page = url_to_path("https://example.com/news")
    folder = url_to_path("https://example.com/news/2024").rsplit("/", 1)[0]
    assert not folder.startswith(page)
    assert url_to_path("https://example.com/v1.2") != url_to_path("https://example.com/v1.2/")[:-11]


def test_long_urls_are_bounded():
    long_name = url_to_path("https://example.com/" + "a" * 4000 + ".html")
    assert long_name.startswith("example.com/aaa")
    assert long_name.endswith(".html")
    assert len(long_name.split("/")[-1].encode()) <= MAX_NAME_BYTES
    assert long_name != url_to_path("https://example.com/" + "a" * 3999 + ".html")

    chinese = url_to_path("https://example.cn/" + "足球" * 100)
    assert len(chinese.split("/")[-1].encode()) <= MAX_NAME_BYTES
    assert chinese.split("/")[-1].startswith("足球足球")

    deep = url_to_path("https://example.com/" + "/".join(["section"] * 600) + "?q=1")
    assert len(deep) <= MAX_PATH_CHARS
    assert deep.startswith("example.com/section/section/")
    assert deep.endswith(".html")


def test_unparsable_urls_still_get_a_path():
    assert url_to_path("http://[::1/x").startswith("~/~")
    assert url_to_path("http://example.com:port/") != url_to_path("http://example.com:other/")


def assert_safe(path: str, base: str) -> None:
    segments = path.split("/")
    assert not os.path.isabs(path)
    assert all(segment not in ("", ".", "..") for segment in segments)
    assert not UNSAFE_IN_NAMES.intersection(path)
    assert all(len(segment.encode()) <= MAX_NAME_BYTES for segment in segments)
    assert len(path) <= MAX_PATH_CHARS
    assert segments[-1].endswith((".html", ".htm"))
    full = os.path.realpath(os.path.join(base, *segments))
    assert full.startswith(base + os.sep)


url_parts = st.text(alphabet=st.characters(codec="utf-8"), max_size=80)
urls = st.one_of(
    st.text(max_size=300),
    st.builds(
        "{}://{}/{}?{}".format,
        st.sampled_from(["http", "https", "ftp", "HTTPS", ""]),
        url_parts,
        st.lists(url_parts, max_size=12).map("/".join),
        url_parts,
    ),
    st.lists(
        st.sampled_from(["..", "%2e%2e", ".", "%2F", "\\", "C:", "%00", "a"]), max_size=20
    ).map(lambda parts: "https://example.com/" + "/".join(parts)),
)


@given(urls)
def test_any_url_maps_to_a_safe_path(url):
    assert_safe(url_to_path(url), os.path.realpath("/srv/pages"))


tricky_segments = st.lists(
    st.text(alphabet="a.~%/\\:_ 足\x00lmth", max_size=8), min_size=1, max_size=4
)


@given(tricky_segments, tricky_segments)
def test_different_segments_different_paths(first, second):
    assume(first != second)
    urls = [
        "https://example.com/" + "/".join(quote(s, safe="") for s in x) for x in (first, second)
    ]
    first_path, second_path = url_to_path(urls[0]), url_to_path(urls[1])
    assert first_path != second_path
    # Neither page stands where the other needs a folder.
    assert not second_path.startswith(first_path + "/")
    assert not first_path.startswith(second_path + "/")
