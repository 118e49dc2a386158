"""``scrapy runspider``: Scrapy's, with the input checks and exit status of ``scrapy crawl``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.commands.runspider import Command as ScrapyRunspiderCommand

from topicspider.commands import refuses_arguments
from topicspider.commands.crawl import check_storage, with_exit_status

if TYPE_CHECKING:
    import argparse

    from scrapy import Spider
    from scrapy.crawler import Crawler


class _Refused(Exception):
    """The spider's input was refused, and said so: no crawl."""


class Command(ScrapyRunspiderCommand):
    """Bad input (a setting, an argument, a pages folder) is one line and exit status 2
    before the crawl starts, and a crawl that stopped on an error (no seed gave a page, a
    pages folder it cannot write, …) exits with status 1, as under ``scrapy crawl``.
    Scrapy's showed a traceback and exited with 1 for the first, 0 for the second."""

    arguments: dict[str, Any]

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        self.arguments = opts.spargs
        try:
            with_exit_status(self, lambda: super(Command, self).run(args, opts))
        except _Refused:
            return

    def _create_crawler(self, spidercls: type[Spider] | str) -> Crawler:
        """The spider is known only here, loaded from its file; it is checked with the
        crawler's settings, which hold its own (the project's, wherever it runs)."""
        crawler = super()._create_crawler(spidercls)
        settings = crawler.settings
        if refuses_arguments(
            self,
            crawler.spidercls,
            self.arguments,
            lambda: check_storage(settings, self.arguments),
            settings=settings,
        ):
            raise _Refused
        return crawler
