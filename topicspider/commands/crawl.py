"""``scrapy crawl``, with a spider's input errors shown as one line before anything starts."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

from scrapy.commands.crawl import Command as ScrapyCrawlCommand

from topicspider.exceptions import TopicSpiderError

if TYPE_CHECKING:
    import argparse

logger = logging.getLogger(__name__)


class Command(ScrapyCrawlCommand):
    """Spiders may define ``check_arguments(settings, **spider_arguments)``; if it raises
    ``TopicSpiderError`` the crawl does not start and the message is the only output.

    With ``LOG_FILE`` set, as scrapyd sets it for every job, the message also goes to the
    log file: that is where a scrapyd user looks, not at the process's stderr."""

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) == 1:
            assert self.crawler_process
            spidercls = self.crawler_process.spider_loader.load(args[0])
            check = getattr(spidercls, "check_arguments", None)
            if check is not None:
                try:
                    check(self.settings, **opts.spargs)
                except TopicSpiderError as error:
                    print(f"topicspider: error: {error}", file=sys.stderr)
                    if self.settings.get("LOG_FILE"):
                        logger.error("topicspider: error: %s", error)
                    self.exitcode = 2
                    return
        super().run(args, opts)
