"""``scrapy settings``: the values a crawl runs with."""

from __future__ import annotations

import subprocess

from tests.test_spider import ROOT, SCRAPY, SCRAPY_ENV
from topicspider import __version__


def settings(*arguments: str) -> str:
    result = subprocess.run(
        [*SCRAPY, "settings", *arguments],
        cwd=ROOT, env=SCRAPY_ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip()


def test_the_user_agent_is_the_one_requests_send():
    """Before, Scrapy's own: the add-on that makes it was left out."""
    assert settings("--get", "USER_AGENT", "-s", "TOPIC_CONTACT=ops@example.org") == (
        f"topicspider/{__version__} (focused crawler; +ops@example.org)"
    )


def test_a_user_agent_given_on_the_command_line_wins():
    assert settings("--get", "USER_AGENT", "-s", "USER_AGENT=mybot/1") == "mybot/1"


def test_project_settings_are_shown_as_before():
    assert settings("--getfloat", "TOPIC_NOISE_LINK_RATIO") == "0.25"
