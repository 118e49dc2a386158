"""A small fuzz run of the page path: random bytes through charset, text and relevance."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topicspider.charset import decode
from topicspider.keywords import parse_inline
from topicspider.relevance import BestFirst, LinkCandidate, Relevance, link_text
from topicspider.text import extract_page, parse_html

RELEVANCE = Relevance(parse_inline("足球:3,比赛:2,football:2"))
STRATEGY = BestFirst()
HEADERS = st.sampled_from(
    [
        None,
        "text/html",
        "text/html; charset=utf-8",
        "text/html; charset=gbk",
        "text/html; charset=x",
    ]
)
HTML_BITS = st.sampled_from(
    [
        b"<html>",
        b"<title>",
        "足球".encode("gbk"),
        "比赛".encode(),
        b"<a href='/x'>",
        b"</a>",
        b"<meta charset='gb2312'>",
        b"\xff\xfe",
        b"\x00",
        b"<p>",
        b"<script>",
        b"<base href='//'>",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(HTML_BITS, st.binary(max_size=40)), max_size=30), HEADERS)
def test_random_bytes_never_break_scoring(parts, content_type):
    body = b"".join(parts)
    encoding, text = decode(body, content_type)
    assert isinstance(text, str)
    page = extract_page(parse_html(text), "http://127.0.0.1/a/b.html")
    relevance = RELEVANCE.page(page.title, page.body)
    assert 0.0 <= relevance <= 1.0 + 1e-9
    for link in page.links.values():
        anchor = RELEVANCE.text(link_text(link))
        score = STRATEGY.score(LinkCandidate(anchor, 1, relevance, link.navigation))
        assert 0.0 <= score <= 2.0
    assert encoding
