"""``scrapy parse --spider topic``: one page of the fixture site judged, nothing stored."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from tests import test_spider_focus
from tests.test_commands_fetch import NO_REDIS
from tests.test_spider import scrapy

#: A front page whose one menu a script writes (a fixture of the spider's tests).
nav_script_site = test_spider_focus.nav_script_site


def test_parse_shows_the_item_and_the_scored_links_and_stores_nothing(site, site_url, tmp_path):
    """It fetches the page it is given, whatever the seeds (it needs none)."""
    pages = tmp_path / "pages"
    result = scrapy(
        "parse",
        "--spider",
        "topic",
        "-a",
        "keywords=sports",
        "-s",
        f"TOPIC_PAGES_DIR={pages}",
        "-s",
        NO_REDIS,  # before, it joined the shared crawl, whose worker's parse is no callback
        f"{site_url}/sports/index.html",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    assert not pages.exists(), "parse opened the pages folder"
    items = result.stdout.split("# Scraped Items", 1)[1].split("# Requests", 1)[0]
    assert f"'url': '{site_url}/sports/index.html'" in items
    assert re.search(r"'relevance': 0\.\d+", items)
    assert re.search(r"'body': '<\d+ bytes>'", items)
    assert "b'" not in items
    links = re.findall(r"<(\d\.\d{3}) GET (http://\S+)>", result.stdout.split("# Requests", 1)[1])
    assert len(links) > 5
    scores = [float(score) for score, _ in links]
    assert scores == sorted(scores, reverse=True)
    assert all(url.startswith(site_url) for _, url in links)
    assert {urlsplit(url).path for _, url in links} & site.on_topic
    assert "/sports/derby-preview.html" in {urlsplit(url).path for _, url in links}
    # Its own address, linked from its menu, is no link to follow: it was fetched.
    assert f"{site_url}/sports/index.html" not in {url for _, url in links}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["keywords=nosuchtopic"], "keywords 'nosuchtopic': no such file"),
        (["keywords=sports", "deny=*.pdf"], "deny='*.pdf': not a regular expression"),
    ],
)
def test_a_bad_argument_is_one_line_as_in_a_crawl(site_url, arguments, message):
    """Before, an unknown keyword file was a traceback of the crawl task, and ``deny='*.pdf'``
    one from the analysis worker."""
    spider_arguments = [part for argument in arguments for part in ("-a", argument)]
    result = scrapy(
        "parse", "--spider", "topic", *spider_arguments, f"{site_url}/sports/index.html"
    )
    assert result.returncode == 2
    assert f"topicspider: error: {message}" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_keyword_file_that_reads_as_chinese_in_gbk_too_is_said_as_it_starts(site_url, tmp_path):
    keywords = tmp_path / "medicine.txt"
    keywords.write_bytes("医学 3\n".encode("gbk"))  # valid UTF-8 too: ҽѧ
    result = scrapy(
        "parse", "--spider", "topic", "-a", f"keywords={keywords}", f"{site_url}/index.html"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"INFO: Topic: 1 term from {keywords}, as pages are matched: ҽѧ 3\n" in result.stderr
    assert (
        f"WARNING: {keywords}: read as UTF-8; in GBK it says '医学 3': if it is GBK, save it"
        " as UTF-8; if it is UTF-8, save it with a byte order mark\n"
    ) in result.stderr


def test_a_term_broader_than_written_is_said_as_it_starts(site_url):
    result = scrapy(
        "parse", "--spider", "topic", "-a", "keywords=C types:2,足球:3", f"{site_url}/index.html"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (
        "WARNING: keywords argument, item 1 ('C types:2'): term 'C types' is matched as"
        " 'type', which is broader: pages are read without numbers and single letters ('C')\n"
    ) in result.stderr


def test_parse_shows_every_level_of_a_deeper_parse_and_the_scripts_it_would_read(
    nav_script_site, tmp_path
):
    """With ``-v`` the requests of each level are shown once each; before, the second level
    failed on the first's (``AttributeError``). A script is shown as one."""
    result = scrapy(
        "parse",
        "--spider",
        "topic",
        "-a",
        "keywords=足球:3",
        "--depth",
        "2",
        "-v",
        "-s",
        f"TOPIC_PAGES_DIR={tmp_path / 'pages'}",
        "-s",
        NO_REDIS,
        f"{nav_script_site}/",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    assert f"<script GET {nav_script_site}/js/nav.js>" in result.stdout
    assert re.search(rf"<\d\.\d{{3}} GET {nav_script_site}/news/football\.html>", result.stdout)
