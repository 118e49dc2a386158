"""The project's Scrapy commands (``COMMANDS_MODULE``): its own, and Scrapy's made to fit;
what they share: spider arguments checked before anything starts, and the settings of a
command that shows one page."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

from topicspider.charset import readable
from topicspider.exceptions import NoKeywords, TopicSpiderError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from scrapy import Spider
    from scrapy.commands import ScrapyCommand
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)


class OnePage:
    """Mixed into a command that fetches a page to show it, not to crawl (``parse``,
    ``fetch``, ``shell``, ``view``): no item pipelines, which would take the pages folder a
    running crawl holds and connect to MySQL, no shared frontier, which the command's
    spider would join as a worker (``TOPICSPIDER_REDIS_URL`` exported for the crawls), and
    a page judged at once: no pages come after it for the threshold to settle on."""

    settings: Any

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)  # type: ignore[misc]
        self.settings.set("ITEM_PIPELINES", {}, priority="cmdline")
        self.settings.set("REDIS_URL", "", priority="cmdline")
        self.settings.set("TOPIC_THRESHOLD_WAIT", False, priority="cmdline")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        """``--spider topic`` without its arguments (``fetch``, ``shell`` and ``view`` take
        none) is one line that says how to judge the page, not a traceback, or nothing
        with ``--nolog``."""
        spider = getattr(opts, "spider", None)
        given = getattr(opts, "spargs", None)  # parse's -a; fetch, shell and view have none
        arguments = {**({"seeds": args[0]} if args else {}), **(given or {})}
        instead = None
        if given is None:
            instead = (
                "this command takes no spider arguments (-a); judge the page"
                f" with `scrapy parse --spider {spider} -a keywords=… URL`"
            )
        if spider and refuses_arguments(self, spider, arguments, instead=instead):
            return
        super().run(args, opts)  # type: ignore[misc]


def refuses_arguments(
    command: ScrapyCommand,
    spider: str | type[Spider],
    arguments: dict[str, Any],
    *checks: Callable[[], None],
    settings: BaseSettings | None = None,
    instead: str | None = None,
) -> bool:
    """Run the spider's ``check_arguments(settings, **arguments)``, if it has one, then
    ``checks``; on a ``TopicSpiderError``, say it in one line (also in ``LOG_FILE``), set
    the exit status to 2 and return True. ``settings``: the command's unless given;
    ``instead``: the line to say in place of a ``NoKeywords`` error (a command that cannot
    give them)."""
    assert command.crawler_process
    assert command.settings is not None
    if isinstance(spider, str):
        spider = command.crawler_process.spider_loader.load(spider)
    check = getattr(spider, "check_arguments", None)
    try:
        if check is not None:
            check(settings or command.settings, **arguments)
        for more in checks:
            more()
    except TopicSpiderError as error:
        if instead is not None and isinstance(error, NoKeywords):
            line = f"topicspider: {instead}"
        else:
            line = f"topicspider: error: {readable(str(error))}"
        print(line, file=sys.stderr)
        if (settings or command.settings).get("LOG_FILE"):
            logger.error("%s", line)
        command.exitcode = 2
        return True
    return False
