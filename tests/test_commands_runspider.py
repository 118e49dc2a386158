"""``scrapy runspider``: the topic spider run from its file, with ``scrapy crawl``'s exit status."""

from __future__ import annotations

import pytest

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


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["-s", "TOPIC_THRESHOLD=5"], "TOPIC_THRESHOLD='5': expected a number from 0 to 1"),
        (["-a", "keywords=nosuch"], "keywords 'nosuch': no such file"),
        (["-a", "alow=/news/"], "unknown spider argument 'alow'"),
    ],
)
def test_bad_input_is_one_line_and_status_2_before_the_crawl(given, said, tmp_path):
    """As under ``scrapy crawl``. Before, Scrapy's traceback and status 1."""
    result = scrapy(
        "runspider", SPIDER_FILE, "-a", "seeds=http://127.0.0.1:9/", "-a", "keywords=sports",
        "-s", f"TOPIC_PAGES_DIR={tmp_path / 'pages'}", *given,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr[-3000:]
    assert f"topicspider: error: {said}" in result.stderr
    assert "Traceback" not in result.stderr
    assert "Spider opened" not in result.stderr
