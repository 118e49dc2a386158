"""``scrapy runspider``: Scrapy's, with the exit status of ``scrapy crawl``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.commands.runspider import Command as ScrapyRunspiderCommand

from topicspider.commands.crawl import with_exit_status

if TYPE_CHECKING:
    import argparse


class Command(ScrapyRunspiderCommand):
    """A crawl that stopped on an error (no seed gave a page, a pages folder it cannot
    write, …) exits with status 1, as under ``scrapy crawl``; Scrapy's exits with 0."""

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        with_exit_status(self, lambda: super(Command, self).run(args, opts))
