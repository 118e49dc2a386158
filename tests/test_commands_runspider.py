"""``scrapy runspider``: the topic spider run from its file, with ``scrapy crawl``'s exit status."""

from __future__ import annotations

from tests.test_spider import ROOT, scrapy

SPIDER_FILE = str(ROOT / "topicspider" / "spiders" / "topic.py")


def test_a_crawl_that_stopped_on_an_error_exits_with_status_1(tmp_path):
    """Before, 0: a script could not tell it from a crawl that ended well."""
    result = scrapy(
        "runspider", SPIDER_FILE, "-a", "seeds=http://127.0.0.1:9/", "-a", "keywords=sports",
        "-s", f"TOPIC_PAGES_DIR={tmp_path / 'pages'}",
    )  # fmt: skip
    assert "'finish_reason': 'seeds_failed'" in result.stderr, result.stderr[-3000:]
    assert result.returncode == 1


def test_a_crawl_that_ends_well_exits_with_status_0(site, site_url, tmp_path):
    result = scrapy(
        "runspider", SPIDER_FILE, "-a", f"seeds={site_url}{site.seed_path}", "-a",
        "keywords=sports", "-s", f"TOPIC_PAGES_DIR={tmp_path / 'pages'}",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert "'finish_reason': 'finished'" in result.stderr
