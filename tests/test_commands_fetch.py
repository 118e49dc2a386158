"""``scrapy fetch`` and ``scrapy view``: a page shown, no crawl's storage or frontier touched."""

from __future__ import annotations

import os
import subprocess

from tests.test_spider import ROOT, SCRAPY, SCRAPY_ENV

#: A shared frontier no server answers at: a command that joined it would fail.
NO_REDIS = "REDIS_URL=redis://127.0.0.1:1/0"


def test_fetch_prints_the_page_and_leaves_the_pages_folder_and_redis_alone(site_url, tmp_path):
    """Before, it took the pages folder's lock (a running crawl's made it print nothing)
    and, with ``TOPICSPIDER_REDIS_URL`` exported, joined the shared crawl as a worker."""
    pages = tmp_path / "pages"
    result = subprocess.run(
        [*SCRAPY, "fetch", "--nolog", "-s", f"TOPIC_PAGES_DIR={pages}", "-s", NO_REDIS,
         f"{site_url}/sports/index.html"],
        cwd=ROOT, env=SCRAPY_ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert "<html" in result.stdout.lower()
    assert not pages.exists()


def test_view_opens_the_page_and_leaves_the_pages_folder_alone(site_url, tmp_path):
    pages = tmp_path / "pages"
    opened = tmp_path / "opened"
    browser = f"sh -c 'echo %s > {opened}'"  # what $BROWSER runs, given the file to show
    result = subprocess.run(
        [*SCRAPY, "view", "-s", f"TOPIC_PAGES_DIR={pages}", "-s", NO_REDIS,
         f"{site_url}/sports/index.html"],
        cwd=ROOT, env={**SCRAPY_ENV, "BROWSER": browser}, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    shown = opened.read_text().strip().removeprefix("file://")
    assert os.path.getsize(shown) > 0
    assert not pages.exists()


def test_fetch_with_the_topic_spider_says_it_takes_no_spider_arguments(site_url):
    """The topic spider needs keywords, which ``-a`` gives and fetch has not. Before, with
    ``--nolog`` it printed nothing and exited 1; without, a traceback; then the error about
    the missing keywords came first, which fetch cannot give (review of the README)."""
    result = subprocess.run(
        [*SCRAPY, "fetch", "--nolog", "--spider", "topic", f"{site_url}/sports/index.html"],
        cwd=ROOT, env=SCRAPY_ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "topicspider: this command takes no spider arguments (-a); judge the page with"
        " `scrapy parse --spider topic -a keywords=… URL`",
    ]
    assert result.stdout == ""


def test_fetch_with_the_topic_spider_says_a_bad_setting_as_it_is(site_url):
    """The line that points to ``parse`` is for the keywords only: before, it hid a setting's
    error, which ``parse`` then met too (review of the session's change)."""
    result = subprocess.run(
        [*SCRAPY, "fetch", "--nolog", "--spider", "topic", "-s", "TOPIC_THRESHOLD=5",
         f"{site_url}/sports/index.html"],
        cwd=ROOT, env=SCRAPY_ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "topicspider: error: TOPIC_THRESHOLD='5': expected a number from 0 to 1"
    ]
