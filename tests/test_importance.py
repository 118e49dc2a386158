"""OPIC cash: the pages many fetched pages link to gain importance, and with
``TOPIC_IMPORTANCE_WEIGHT`` the crawl mixes it into its link scores."""

from __future__ import annotations

import re

from scrapy.utils.test import get_crawler

from tests.test_settingtypes import PROJECT
from tests.test_spider import crawl_command, paths, read_jsonl, scrapy
from topicspider.analysis import ScoredLink
from topicspider.importance import Opic
from topicspider.spiders.topic import TopicSpider, _Origin


def test_a_page_many_fetched_pages_link_to_is_more_important():
    opic = Opic()
    for page in ("/a.html", "/b.html", "/c.html"):
        opic.distribute(page, ["/popular.html", f"{page}.next"])
    opic.distribute("/d.html", ["/rare.html", "/d.next"])
    assert opic.importance("/popular.html") > opic.importance("/rare.html")
    assert opic.importance("/rare.html") > opic.importance("/never-linked.html") == 0.5
    assert all(0 < opic.importance(url) < 1 for url in ("/popular.html", "/rare.html"))


def test_a_fetched_page_hands_out_all_its_cash():
    opic = Opic()
    opic.distribute("/hub.html", ["/a.html", "/b.html"])
    opic.distribute("/a.html", ["/c.html", "/d.html", "/e.html"])
    assert "/a.html" not in opic.cash, "fetched: its cash went to its links"
    assert sum(opic.cash[url] for url in ("/c.html", "/d.html", "/e.html")) == 3 + 1.5
    opic.distribute("/b.html", [])  # a page without links keeps nothing either
    assert "/b.html" not in opic.cash


def test_a_crawl_with_importance_mixes_it_in_and_stays_on_topic(site, site_url, tmp_path):
    result = scrapy(*crawl_command(site_url, site, tmp_path, "TOPIC_IMPORTANCE_WEIGHT=0.3"))
    assert result.returncode == 0, result.stderr[-2000:]
    mix = dict(re.findall(r"'topic/mix/(\w+)': ([\d.]+)", result.stderr))
    assert float(mix["importance"]) > 0
    stored = set(paths(read_jsonl(tmp_path / "pages" / "index.jsonl")))
    assert len(stored & site.on_topic) >= 0.8 * len(site.on_topic)
    assert len(stored - site.on_topic) <= 0.2 * len(stored)


def test_a_crawl_hands_out_the_cash_of_the_page_it_fetched():
    """Before, the spider handed out the cash of the page's last link (a loop reused the
    page's name), and the page kept its own."""
    spider = TopicSpider.from_crawler(
        get_crawler(TopicSpider, {**PROJECT, "TOPIC_IMPORTANCE_WEIGHT": 0.3}),
        seeds="http://127.0.0.1/",
        keywords="足球:1",
    )
    spider.importance.cash["http://127.0.0.1/hub.html"] = 3.0
    links = [
        ScoredLink(f"http://127.0.0.1/{name}.html", name, 0.1, False, "/*.html", False)
        for name in ("a", "b")
    ]
    origin = _Origin("http://127.0.0.1/hub.html", 1, 0, 0.2, 0)
    spider._score_links(origin, links, share_cash=True)
    assert "http://127.0.0.1/hub.html" not in spider.importance.cash
    assert spider.importance.cash["http://127.0.0.1/a.html"] == 1.0 + 1.5
    spider._score_links(origin, links, share_cash=False)  # a script's links: no cash again
    assert spider.importance.cash["http://127.0.0.1/b.html"] == 1.0 + 1.5
