"""``scrapy crawl``, with a spider's input errors shown as one line before anything starts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydispatch import dispatcher
from scrapy import signals
from scrapy.commands.crawl import Command as ScrapyCrawlCommand

from topicspider.commands import refuses_arguments
from topicspider.pipelines import files, mysql
from topicspider.redis.scheduler import LOST_REASON, MISMATCH_REASON
from topicspider.scheduler import FRONTIER_REASON, JOBDIR_REASON, check_jobdir
from topicspider.seeds import SEEDS_FAILED_REASON

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from scrapy.commands import ScrapyCommand
    from scrapy.settings import BaseSettings

#: Close reasons of a crawl that stopped on an error, not because it was done or stopped.
FAILED = frozenset(
    {
        files.CLOSE_REASON,
        mysql.CLOSE_REASON,
        mysql.SPOOL_CLOSE_REASON,
        MISMATCH_REASON,
        LOST_REASON,
        JOBDIR_REASON,
        FRONTIER_REASON,
        SEEDS_FAILED_REASON,
    }
)


class Command(ScrapyCrawlCommand):
    """Spiders may define ``check_arguments(settings, **spider_arguments)``; if it raises
    ``TopicSpiderError`` the crawl does not start and the message is the only output.
    A malformed ``MYSQL_URL`` and a scrapyd job id that cannot name a folder are reported
    the same way.

    With ``LOG_FILE`` set, as scrapyd sets it for every job, the message also goes to the
    log file: that is where a scrapyd user looks, not at the process's stderr.

    A crawl that stopped on an error (see ``FAILED``: a pages folder it cannot write, a
    database it cannot use, a crawl gone from Redis, a ``JOBDIR`` or frontier file it
    cannot use, seeds none of which gave a page) exits with status 1, so that a script or
    cron job can tell it from a crawl that ended well."""

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) == 1 and refuses_arguments(
            self, args[0], opts.spargs, lambda: check_storage(self.settings, opts.spargs)
        ):
            return
        with_exit_status(self, lambda: super(Command, self).run(args, opts))


def check_storage(settings: BaseSettings, arguments: dict[str, Any]) -> None:
    """Where the crawl would store its pages, rows and state: usable before it starts."""
    files.check_job(settings, arguments)
    check_jobdir(settings)
    mysql.check_settings(settings)  # without MYSQL_URL too: a mistake, once the URL is added


def with_exit_status(command: ScrapyCommand, run: Callable[[], None]) -> None:
    """Run a crawl; its command exits with status 1 if it stopped on an error (``FAILED``)."""
    reasons: list[str] = []

    def closed(reason: str) -> None:
        reasons.append(reason)

    # The crawler is made inside Scrapy's run: listen to its signal from any sender.
    dispatcher.connect(closed, signal=signals.spider_closed)
    try:
        run()
    finally:
        dispatcher.disconnect(closed, signal=signals.spider_closed)
    if FAILED.intersection(reasons) and not command.exitcode:
        command.exitcode = 1
