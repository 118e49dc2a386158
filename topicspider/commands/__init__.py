"""The project's Scrapy commands (``COMMANDS_MODULE``): its own, and Scrapy's made to fit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse


class OnePage:
    """Mixed into a command that fetches a page to show it, not to crawl (``parse``,
    ``fetch``, ``shell``, ``view``): no item pipelines, which would take the pages folder a
    running crawl holds and connect to MySQL, and no shared frontier, which the command's
    spider would join as a worker (``TOPICSPIDER_REDIS_URL`` exported for the crawls)."""

    settings: Any

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)  # type: ignore[misc]
        self.settings.set("ITEM_PIPELINES", {}, priority="cmdline")
        self.settings.set("REDIS_URL", "", priority="cmdline")
