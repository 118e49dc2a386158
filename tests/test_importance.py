"""OPIC cash: the pages many fetched pages link to gain importance, and with
``TOPIC_IMPORTANCE_WEIGHT`` the crawl mixes it into its link scores."""

from __future__ import annotations

import re

from tests.test_spider import crawl_command, paths, read_jsonl, scrapy
from topicspider.importance import Opic


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
