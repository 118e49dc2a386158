"""The `scrapy crawl topic` command line, built once for the demo, evaluation and tests."""

from __future__ import annotations

import sys

#: Runs Scrapy with the interpreter at hand, so the project's virtualenv is the one used.
SCRAPY = [sys.executable, "-m", "scrapy"]


def topic_args(seed: str, keywords: str, *settings: str) -> list[str]:
    """``crawl topic -a seeds=... -a keywords=... -s NAME=VALUE ...`` (without ``SCRAPY``)."""
    args = ["crawl", "topic", "-a", f"seeds={seed}", "-a", f"keywords={keywords}"]
    for setting in settings:
        args += ["-s", setting]
    return args
