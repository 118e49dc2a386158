"""``scrapy crawl``, with a spider's input errors shown as one line before anything starts."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scrapy.commands.crawl import Command as ScrapyCrawlCommand

from topicspider.exceptions import TopicSpiderError
from topicspider.mysql.url import MySQLUrl

if TYPE_CHECKING:
    import argparse


class Command(ScrapyCrawlCommand):
    """Spiders may define ``check_arguments(settings, **spider_arguments)``; if it raises
    ``TopicSpiderError`` the crawl does not start and the message is the only output.
    A malformed ``MYSQL_URL`` is reported the same way."""

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) == 1:
            assert self.crawler_process
            spidercls = self.crawler_process.spider_loader.load(args[0])
            check = getattr(spidercls, "check_arguments", None)
            try:
                if check is not None:
                    check(self.settings, **opts.spargs)
                if self.settings.get("MYSQL_URL"):
                    MySQLUrl.parse(self.settings.get("MYSQL_URL"))
            except TopicSpiderError as error:
                print(f"topicspider: error: {error}", file=sys.stderr)
                self.exitcode = 2
                return
        super().run(args, opts)
