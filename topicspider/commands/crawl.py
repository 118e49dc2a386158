"""``scrapy crawl``, with a spider's input errors shown as one line before anything starts."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

from scrapy.commands.crawl import Command as ScrapyCrawlCommand

from topicspider.exceptions import TopicSpiderError
from topicspider.mysql.url import MySQLUrl

if TYPE_CHECKING:
    import argparse

logger = logging.getLogger(__name__)


class Command(ScrapyCrawlCommand):
    """Spiders may define ``check_arguments(settings, **spider_arguments)``; if it raises
    ``TopicSpiderError`` the crawl does not start and the message is the only output.
    A malformed ``MYSQL_URL`` is reported the same way.

    With ``LOG_FILE`` set, as scrapyd sets it for every job, the message also goes to the
    log file: that is where a scrapyd user looks, not at the process's stderr."""

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
                if self.settings.get("LOG_FILE"):
                    logger.error("topicspider: error: %s", error)
                self.exitcode = 2
                return
        super().run(args, opts)
