"""The item pipeline that stores accepted pages (see :mod:`topicspider.pagestore`)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exceptions import CloseSpider, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.reactor import is_reactor_installed

from topicspider.children import Child, ChildDied, ChildFailed
from topicspider.exceptions import ConfigError
from topicspider.locks import hold
from topicspider.pagestore import INDEX_FIELDS, PageStore, tidy_index
from topicspider.paths import INDEX_NAME
from topicspider.pipelines import NotStored, close_crawl, refetch_note

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.defer import Deferred


logger = logging.getLogger(__name__)

CLOSE_REASON = "pages_dir_error"
#: The spider argument in which scrapyd passes the job id.
SCRAPYD_JOB_ARGUMENT = "_job"


class PagesDirError(CloseSpider):
    """The pages folder cannot be written.

    Raised while the spider opens, it closes the spider with reason ``pages_dir_error``.
    """

    def __init__(self, message: str) -> None:
        super().__init__(reason=CLOSE_REASON)
        self.message = message

    def __str__(self) -> str:
        return self.message


def check_job(settings: BaseSettings, spider_arguments: dict[str, str]) -> None:
    """Raise ``ConfigError`` on a scrapyd job id that cannot name the job's folders: its
    pages folder, its MySQL spool."""
    job = spider_arguments.get(SCRAPYD_JOB_ARGUMENT)
    if job and settings.get("TOPIC_PAGES_DIR") and settings.getbool("TOPIC_PAGES_PER_JOB"):
        job_folder(job)
    if job and settings.get("MYSQL_URL"):
        job_folder(job, "MYSQL_SPOOL_DIR")


def job_folder(job: str, setting: str = "TOPIC_PAGES_PER_JOB") -> str:
    """A scrapyd job id as one folder name (of the job's pages, of its MySQL spool);
    scrapyd itself refuses ids that are not."""
    if Path(job).name != job or job == "..":
        raise ConfigError(f"scrapyd job id {job!r} cannot be a folder name ({setting})")
    return job


class FilesystemPipeline:
    """Write each page's body to ``TOPIC_PAGES_DIR``/:func:`~topicspider.paths.url_to_path`,
    set the item's ``path``, and append a JSON line about it to ``index.jsonl``
    (see :class:`PageStore`).

    In a crawl the files are written by a child process of the pipeline's own
    (``python -m topicspider.pagestore``), in item order, and an item moves on
    once its page is on disk. Creating a file costs CPU time in the kernel and the
    pipeline's own Python code besides: in a thread of the crawl process that work
    competed with the reactor thread for the GIL and cost the crawl 11% of its pages
    per second on the benchmark site. Outside a running reactor the pages are written
    inline. When the folder cannot be written the spider is closed (reason
    ``pages_dir_error``). An empty ``TOPIC_PAGES_DIR`` turns the pipeline off.

    Under scrapyd, which starts every job in the same working directory (its own), each job
    writes to ``TOPIC_PAGES_DIR/<job id>`` (unless ``TOPIC_PAGES_PER_JOB`` is off),
    so crawls running side by side never share a folder or an index.
    """

    def __init__(
        self,
        pages_dir: str | os.PathLike[str],
        stats: StatsCollector,
        crawler: Crawler | None = None,
    ):
        self.pages_dir = Path(pages_dir)
        self.stats = stats
        self.crawler = crawler
        self._indexed: set[str] = set()
        self._refreshed = False
        self._failed = False
        self._not_stored: list[str] = []
        self._store: PageStore | None = None
        self._writer: Child | None = None
        self._lock: int | None = None
        # Holds the spider closing we start, so that it is not garbage-collected.
        self._closing: Deferred[None] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        pages_dir = crawler.settings.get("TOPIC_PAGES_DIR")
        if not pages_dir:
            raise NotConfigured("TOPIC_PAGES_DIR is empty")
        job = getattr(crawler.spider, SCRAPYD_JOB_ARGUMENT, None)
        if job and crawler.settings.getbool("TOPIC_PAGES_PER_JOB"):
            pages_dir = Path(pages_dir, job_folder(job))
        return cls(pages_dir, crawler.stats, crawler)

    def open_spider(self, spider: Spider | None = None) -> None:
        try:
            self.pages_dir.mkdir(parents=True, exist_ok=True)
            self._lock = _lock(self.pages_dir)
            self._indexed = tidy_index(self.pages_dir / INDEX_NAME)
            store = PageStore(self.pages_dir)  # fails here on a folder it cannot write
        except OSError as exc:
            self._unlock()
            error = self._error(exc)
            logger.error("%s", error)
            raise error from exc
        if _reactor_running():
            store.close()
            self._writer = Child.spawn("topicspider.pagestore", str(self.pages_dir), "page writer")
        else:
            self._store = store

    async def close_spider(self, spider: Spider | None = None) -> None:
        """Every page handed over is written first (Scrapy closes pipelines once no
        item is left in them), and the index lists each page once again; then the
        accepted pages that could not be stored, if any, are named in one line, to be
        fetched again."""
        if self._writer is not None:
            writer, self._writer = self._writer, None
            await maybe_deferred_to_future(writer.close())
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._refreshed:
            self._tidy_index()
        self._unlock()
        if self._not_stored:
            self.stats.set_value("topic/not_stored", len(self._not_stored))
            logger.error(
                "%d accepted pages were not stored, the pages folder %s having failed: %s%s",
                len(self._not_stored),
                self.pages_dir.absolute(),
                " ".join(self._not_stored),
                refetch_note(self.crawler),
            )

    async def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        """Store the page and its index line. The first failure stops all storing:
        later pages are dropped."""
        adapter = ItemAdapter(item)
        url = adapter["url"]
        if self._failed:
            self._not_stored.append(url)
            raise self._dropped()
        # Fetched again (a crawl resumed after a crash, or run again into the same
        # folder), the page file is refreshed, and so is its line (see close_spider).
        new = url not in self._indexed
        self._indexed.add(url)
        record = {field: adapter.get(field) for field in INDEX_FIELDS}
        try:
            if self._writer is not None:
                path = await maybe_deferred_to_future(
                    self._writer.call(url, adapter["body"], record)
                )
            else:
                assert self._store is not None, "open_spider() was not called"
                path = self._store.write(url, adapter["body"], record)
        except (OSError, ChildFailed, ChildDied) as exc:
            self._not_stored.append(url)
            if self._failed:  # a page handed over before the first failure was known
                raise self._dropped() from exc
            self._failed = True
            error = self._error(exc)
            logger.error("%s; closing the spider", error)
            self._closing = close_crawl(self.crawler, CLOSE_REASON)
            raise NotStored(str(error)) from exc
        adapter["path"] = path
        if new:
            self.stats.inc_value("topic/stored")
        else:
            self._refreshed = True
            self.stats.inc_value("topic/stored/refreshed")
        return item

    def _tidy_index(self) -> None:
        """Until this runs (or the next crawl into the folder), a page stored again is
        listed twice, its last line describing the file."""
        try:
            tidy_index(self.pages_dir / INDEX_NAME)
        except OSError as exc:
            logger.error(
                "Cannot rewrite %s to list each page once (the last line of a URL is the "
                "one that describes its page): %s",
                (self.pages_dir / INDEX_NAME).absolute(),
                exc,
            )

    def _unlock(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def _dropped(self) -> NotStored:
        return NotStored(f"Not stored: the pages folder {self.pages_dir.absolute()} failed")

    def _error(self, exc: Exception) -> PagesDirError:
        return PagesDirError(
            f"Cannot write to the pages folder {self.pages_dir.absolute()} (TOPIC_PAGES_DIR): {exc}"
        )


def _lock(folder: Path) -> int:
    """Hold ``folder`` for this crawl: two crawls writing one folder (two scrapyd jobs given
    the same ``jobid``, two workers given the same ``TOPIC_PAGES_DIR``) would each store
    every page, and the index list each twice. The lock leaves no file behind."""
    return hold(folder, "another crawl is writing to it")


def _reactor_running() -> bool:
    if not is_reactor_installed():
        return False
    from twisted.internet import reactor

    return bool(reactor.running)  # type: ignore[attr-defined]
