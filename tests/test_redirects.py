"""Where a redirected request began, and which of its addresses are one page."""

from __future__ import annotations

from scrapy import Request
from scrapy.utils.test import get_crawler

from topicspider import settings as project_settings
from topicspider.redirects import given_url, same_page
from topicspider.spiders.topic import TopicSpider

SETTINGS = {
    name: getattr(project_settings, name) for name in dir(project_settings) if name.isupper()
}


def test_the_given_url_is_the_first_of_the_redirects():
    assert given_url(Request("http://a.cn/x")) == "http://a.cn/x"
    moved = Request("http://a.cn/z", meta={"redirect_urls": ["http://a.cn/x", "http://a.cn/y"]})
    assert given_url(moved) == "http://a.cn/x"


def test_one_page_as_the_seen_set_counts_pages():
    crawler = get_crawler(TopicSpider, SETTINGS)
    others = [
        "http://a.cn/live?b=2&a=1",
        "http://a.cn/live?a=1&b=2#top",
        "http://a.cn/live;jsessionid=9F3A?a=1&b=2",
        "http://a.cn/live?a=1&b=3",
        "http://a.cn/other?a=1&b=2",
    ]
    assert same_page(crawler, "http://a.cn/live?a=1&b=2", others) == [
        True,
        True,
        True,
        False,
        False,
    ]
