"""Scrapy's ``SpiderState``, made safe for a ``JOBDIR`` the crawl could not use."""

from __future__ import annotations

import logging
import pickle
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy.extensions.spiderstate import SpiderState

from topicspider import atomic
from topicspider.scheduler import JOBDIR_REASON

if TYPE_CHECKING:
    from scrapy import Spider

logger = logging.getLogger(__name__)

#: In ``spider.state``: how many times the crawl has run, this run included, counted
#: whatever extensions each run had (the report says which runs it covers).
RUNS_KEY = "runs"


class JobState(SpiderState):
    """Keeps ``spider.state`` in ``JOBDIR/spider.state`` between runs, as Scrapy's does, but
    writes it whole or not at all, and not when the crawl closed on ``JOBDIR_REASON``.

    A crawl refused at the start (another crawl holds the folder, other keywords) would
    otherwise overwrite the running or paused crawl's state with its own, and one stopped by
    a full disk would leave a file cut short that the next start cannot read. Such a crawl
    keeps the state of the last run that closed well. A file that cannot be read (cut short
    by Scrapy's own extension on a full disk) is said in one warning, and the crawl resumes
    without what it had learned, its queue and seen URLs intact.
    """

    def spider_opened(self, spider: Spider) -> None:
        try:
            super().spider_opened(spider)
        except (OSError, EOFError, pickle.UnpicklingError) as error:
            logger.warning(
                "Cannot read the spider's state in %s (%s): resuming without what the crawl"
                " had learned",
                self.statefn,
                error or type(error).__name__,
            )
            spider.state = {}
        if self.jobdir:
            spider.state[RUNS_KEY] = spider.state.get(RUNS_KEY, 0) + 1

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if reason == JOBDIR_REASON or not self.jobdir:
            return
        path = Path(self.statefn)
        try:
            atomic.replace(path, pickle.dumps(spider.state, protocol=4))
        except OSError as error:
            logger.error("Cannot keep the spider's state in %s: %s", path, error)
