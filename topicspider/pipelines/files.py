"""Store accepted pages on disk: the raw bytes of each, and a line about it in ``index.jsonl``."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exceptions import CloseSpider, DropItem, NotConfigured
from scrapy.utils.asyncio import is_asyncio_available
from scrapy.utils.defer import deferred_from_coro

from topicspider.exceptions import ConfigError
from topicspider.paths import INDEX_NAME, url_to_path

if TYPE_CHECKING:
    from io import FileIO
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.defer import Deferred


logger = logging.getLogger(__name__)

#: Item fields written to each line of the index.
INDEX_FIELDS = ("url", "title", "relevance", "depth", "charset", "path", "parent_url", "fetched_at")
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


def _job_folder(job: str) -> str:
    """A scrapyd job id as one folder name; scrapyd itself refuses ids that are not."""
    if Path(job).name != job or job == "..":
        raise ConfigError(f"scrapyd job id {job!r} cannot be a folder name (TOPIC_PAGES_PER_JOB)")
    return job


class FilesystemPipeline:
    """Write each page's body to ``TOPIC_PAGES_DIR``/:func:`~topicspider.paths.url_to_path`,
    set the item's ``path``, and append a JSON line about it to ``index.jsonl``.

    A page goes to a temporary file renamed into place, and its index line follows
    in one ``write()``, cut off again if it falls short: a crash of the crawler
    leaves no half page and no half line, and every indexed page is whole.
    The files are written in one thread of the pipeline's own, in item order: creating a
    file can take a millisecond, which on the reactor thread would be a millisecond of
    crawling lost per page (with a reactor other than asyncio's, they are written inline).
    When the folder cannot be written the spider is closed (reason
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
        self._index: FileIO | None = None
        self._indexed: set[str] = set()
        self._failed = False
        self._writer: ThreadPoolExecutor | None = None
        # Holds the spider closing we start, so that it is not garbage-collected.
        self._closing: Deferred[None] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        pages_dir = crawler.settings.get("TOPIC_PAGES_DIR")
        if not pages_dir:
            raise NotConfigured("TOPIC_PAGES_DIR is empty")
        job = getattr(crawler.spider, SCRAPYD_JOB_ARGUMENT, None)
        if job and crawler.settings.getbool("TOPIC_PAGES_PER_JOB"):
            pages_dir = Path(pages_dir, _job_folder(job))
        return cls(pages_dir, crawler.stats, crawler)

    def open_spider(self, spider: Spider | None = None) -> None:
        try:
            self.pages_dir.mkdir(parents=True, exist_ok=True)
            _cut_torn_line(self.pages_dir / INDEX_NAME)
            self._indexed = _indexed_urls(self.pages_dir / INDEX_NAME)
            self._index = open(self.pages_dir / INDEX_NAME, "ab", buffering=0)  # noqa: SIM115
        except OSError as exc:
            error = self._error(exc)
            logger.error("%s", error)
            raise error from exc
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="topicspider-pages")

    def close_spider(self, spider: Spider | None = None) -> None:
        if self._writer is not None:
            self._writer.shutdown()  # every page handed to it is written first
            self._writer = None
        if self._index is not None:
            self._index.close()
            self._index = None

    async def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        try:
            if self._writer is not None and is_asyncio_available():
                loop = asyncio.get_running_loop()
                new = await loop.run_in_executor(self._writer, self._store, item)
            else:
                new = self._store(item)
        except OSError as exc:
            error = self._error(exc)
            logger.error("%s; closing the spider", error)
            self._close_spider()
            raise error from exc
        self.stats.inc_value("topic/stored" if new else "topic/stored/refreshed")
        return item

    def _store(self, item: Any) -> bool:
        """Write the page and, if its URL is new to the index, its line; return whether it
        was new. The first failure stops all storing: later pages are dropped."""
        if self._failed:
            raise DropItem(f"Not stored: the pages folder {self.pages_dir.absolute()} failed")
        adapter = ItemAdapter(item)
        path = url_to_path(adapter["url"])
        try:
            self._write_page(path, adapter["body"])
            adapter["path"] = path
            if adapter["url"] in self._indexed:
                # Fetched again (a crawl resumed after a crash, or run again into the same
                # folder): the page file is refreshed, the index keeps one line per URL.
                return False
            self._append_line(adapter)
        except OSError:
            self._failed = True
            raise
        self._indexed.add(adapter["url"])
        return True

    def _write_page(self, path: str, body: bytes) -> None:
        target = self.pages_dir.joinpath(*path.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        # "~tmp-" starts no page or folder name (see url_to_path), so it clobbers none.
        temp = target.with_name(f"~tmp-{uuid.uuid4().hex}.part")
        try:
            temp.write_bytes(body)
            os.replace(temp, target)
        except BaseException:
            with suppress(OSError):
                temp.unlink()
            raise

    def _append_line(self, adapter: ItemAdapter) -> None:
        assert self._index is not None, "open_spider() was not called"
        record = {field: adapter.get(field) for field in INDEX_FIELDS}
        line = json.dumps(record, ensure_ascii=False) + "\n"
        # A lone surrogate in a str becomes its JSON escape.
        data = line.encode("utf-8", "backslashreplace")
        end = self._index.seek(0, os.SEEK_END)
        try:
            if self._index.write(data) != len(data):
                raise OSError(errno.ENOSPC, "Short write", str(self.pages_dir / INDEX_NAME))
        except OSError:
            with suppress(OSError):
                self._index.truncate(end)
            raise

    def _error(self, exc: OSError) -> PagesDirError:
        return PagesDirError(
            f"Cannot write to the pages folder {self.pages_dir.absolute()} (TOPIC_PAGES_DIR): {exc}"
        )

    def _close_spider(self) -> None:
        engine = None
        with suppress(RuntimeError):  # Scrapy 2.19+ raises it while no crawl is running
            engine = self.crawler and self.crawler.engine
        if engine is None:
            return
        if hasattr(engine, "close_spider_async"):
            self._closing = deferred_from_coro(engine.close_spider_async(reason=CLOSE_REASON))
        else:  # Scrapy < 2.14
            self._closing = engine.close_spider(self.crawler.spider, CLOSE_REASON)


def _indexed_urls(index: Path) -> set[str]:
    """URLs the index already lists (a torn last line, from a crash, is ignored)."""
    urls: set[str] = set()
    with suppress(FileNotFoundError), index.open("rb") as lines:
        for line in lines:
            with suppress(ValueError):
                urls.add(json.loads(line)["url"])
    return urls


def _cut_torn_line(index: Path) -> None:
    """A crash in the middle of a line leaves it without its newline: drop that tail, so the
    next line does not run on from it."""
    with suppress(FileNotFoundError), index.open("r+b") as file:
        data = file.read()
        if data and not data.endswith(b"\n"):
            file.truncate(data.rfind(b"\n") + 1)
