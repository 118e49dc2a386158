"""A JSON-lines record of every page the crawl scored, in fetch order."""

from __future__ import annotations

import json
import logging
from contextlib import suppress
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

from topicspider.signals import page_scored

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from typing_extensions import Self

logger = logging.getLogger(__name__)


class FetchLog:
    """Writes ``TOPIC_FETCH_LOG``: one line per scored page (url, relevance, accepted,
    depth, score, threshold), so harvest curves can be drawn for any crawl after the fact."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.file: IO[str] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        path = crawler.settings.get("TOPIC_FETCH_LOG")
        if not path:
            raise NotConfigured  # no message: being off is the normal case
        extension = cls(path)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(extension.page_scored, signal=page_scored)
        return extension

    def spider_opened(self) -> None:
        path = Path(self.path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.file = path.open("a", encoding="utf-8", buffering=1)
        except OSError as error:
            self._failed(error)

    def page_scored(self, **fields: Any) -> None:
        if self.file is not None:
            fields.pop("signal", None)
            fields.pop("sender", None)
            try:
                self.file.write(json.dumps(fields, ensure_ascii=False) + "\n")
            except OSError as error:
                self._failed(error)

    def spider_closed(self) -> None:
        if self.file is not None:
            try:
                self.file.close()
            except OSError as error:
                self._failed(error)
            self.file = None

    def _failed(self, error: OSError) -> None:
        """The log is a record for later study: losing it does not stop the crawl."""
        file, self.file = self.file, None
        if file is not None:
            with suppress(OSError):  # what is left in its buffer cannot be written either
                file.close()
        logger.error(
            "Cannot write the fetch log %s (TOPIC_FETCH_LOG): %s; going on without it",
            Path(self.path).absolute(),
            error,
        )
