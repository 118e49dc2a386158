"""``scrapy shell``: a page to try selectors on, no crawl's storage or frontier touched."""

from __future__ import annotations

import subprocess

from tests.test_commands_fetch import NO_REDIS
from tests.test_spider import ROOT, SCRAPY, SCRAPY_ENV


def test_shell_gives_the_page_and_leaves_the_pages_folder_and_redis_alone(site_url, tmp_path):
    """Before, a shell left open held the pages folder: a crawl started into it failed with
    'another crawl is writing to it'."""
    pages = tmp_path / "pages"
    result = subprocess.run(
        [*SCRAPY, "shell", "--nolog", "-s", f"TOPIC_PAGES_DIR={pages}", "-s", NO_REDIS,
         "-c", "(response.status, response.css('title::text').get())",
         f"{site_url}/sports/index.html"],
        cwd=ROOT, env=SCRAPY_ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("(200, '")
    assert not pages.exists()
