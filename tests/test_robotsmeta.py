import pytest

from topicspider.robotsmeta import header_directives, meta_directives
from topicspider.text import parse_html

AGENTS = ("robots", "topicspider")


def head(*metas: str) -> str:
    return f"<html><head>{''.join(metas)}<title>t</title></head><body><p>x</p></body></html>"


@pytest.mark.parametrize(
    ("markup", "expected"),
    [
        (head('<meta name="robots" content="noindex">'), {"noindex"}),
        (head('<meta name="ROBOTS" content="NOINDEX, FOLLOW">'), {"noindex"}),
        (head('<meta name="robots" content="none">'), {"noindex", "nofollow"}),
        (head('<meta name="robots" content="noindex nofollow">'), {"noindex", "nofollow"}),
        (head('<meta name="topicspider" content="nofollow">'), {"nofollow"}),
        (
            head(
                '<meta name="robots" content="noindex">',
                '<meta name="topicspider" content="nofollow">',
            ),
            {"noindex", "nofollow"},
        ),
        (head('<meta name="googlebot" content="noindex, nofollow">'), set()),
        (head('<meta name="robots" content="index, follow, noarchive, max-snippet:50">'), set()),
        (head('<meta name="description" content="noindex of the manual">'), set()),
        (head('<meta charset="gbk">'), set()),
        ("<p>no head at all</p>", set()),
    ],
)
def test_robots_meta_tags_for_all_robots_or_for_topicspider(markup, expected):
    assert meta_directives(parse_html(markup), AGENTS) == expected


def test_robots_meta_tags_are_not_read_without_agents():
    assert meta_directives(parse_html(head('<meta name="robots" content="none">')), ()) == set()


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["noindex"], {"noindex"}),
        (["noindex", "nofollow"], {"noindex", "nofollow"}),
        (["NoIndex, NoFollow"], {"noindex", "nofollow"}),
        (["none"], {"noindex", "nofollow"}),
        (["topicspider: nofollow"], {"nofollow"}),
        (["TopicSpider: none"], {"noindex", "nofollow"}),
        (["googlebot: noindex"], set()),
        (["googlebot: noindex, nofollow"], set()),
        (["googlebot: noindex, topicspider: nofollow"], {"nofollow"}),
        (["googlebot: noindex", "nofollow"], {"nofollow"}),
        (["unavailable_after: 25 Jun 2010 15:00:00 PST"], set()),
        (["max-snippet: 20, noindex"], {"noindex"}),
        (["noarchive, nosnippet"], set()),
        ([], set()),
    ],
)
def test_x_robots_tag_headers_for_all_robots_or_for_topicspider(values, expected):
    assert header_directives(values, "topicspider") == expected
