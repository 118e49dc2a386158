"""Page analysis in worker processes, so that the reactor thread only crawls.

Parsing, segmenting and scoring a page costs more CPU than fetching it; on the
reactor thread that work would set the pace of the whole crawl. With
``TOPIC_ANALYSIS_PROCESSES`` > 0, child processes (``python -m topicspider.analysis``)
do it instead, each with its own :class:`~topicspider.analysis.Analyzer` built from
the same arguments (see :mod:`topicspider.children`). ``0`` analyzes on the reactor thread.
"""

from __future__ import annotations

import logging
from typing import Any

from twisted.internet.defer import DeferredList

from topicspider.analysis import Analyzer, PageAnalysis
from topicspider.children import Child, ChildDied, ChildFailed, ChildTimedOut

__all__ = ["AnalysisFailed", "AnalysisPool"]

logger = logging.getLogger(__name__)


class AnalysisFailed(Exception):
    """A page could not be analyzed: the analyzer raised, its worker died twice, or it took
    longer than the timeout."""


class AnalysisPool:
    """Runs :meth:`Analyzer.analyze` in ``processes`` worker processes, or inline with 0.

    A page goes to the worker with the fewest pages in hand. A worker that dies fails
    none of the pages it held: they go to a new worker, and the one it was analyzing is
    given that second try only; a page that kills two workers fails with
    :class:`AnalysisFailed`. Before, each page it held had used a try, and those that
    waited behind the page that killed two workers failed with it.

    A worker that takes longer than ``timeout`` seconds (0: no limit) over one page is
    killed and that page fails at once; the pages behind it go to a new worker. Inline
    (``processes`` 0) there is no limit: the reactor thread cannot be interrupted.
    """

    def __init__(self, arguments: dict[str, Any], processes: int, timeout: float = 0) -> None:
        self.arguments = arguments
        self.processes = processes
        self.timeout = timeout
        self._inline = Analyzer(**arguments) if processes == 0 else None
        self._workers: list[Child] = []

    def start(self) -> None:
        """Start the workers now (each takes half a second of CPU to start), not at the
        first page."""
        while self._inline is None and len(self._workers) < self.processes:
            self._workers.append(
                Child.spawn(
                    "topicspider.analysis",
                    self.arguments,
                    "analysis worker",
                    self.lost,
                    self.timeout,
                )
            )

    def lost(self, worker: Child) -> None:
        if worker in self._workers:
            self._workers.remove(worker)

    async def analyze(
        self,
        url: str,
        body: bytes,
        content_type: str,
        domains: tuple[str, ...] = (),
        header_canonicals: tuple[str, ...] = (),
    ) -> PageAnalysis:
        page = (url, body, content_type, domains, header_canonicals)
        if self._inline is not None:
            return self._inline.analyze(*page)
        from scrapy.utils.defer import maybe_deferred_to_future

        deaths = 0
        while True:
            self.start()
            worker = min(self._workers, key=lambda w: len(w.pending))
            try:
                return await maybe_deferred_to_future(worker.call(*page))
            except (ChildFailed, ChildTimedOut) as error:
                raise AnalysisFailed(str(error)) from error
            except ChildDied as error:
                if not error.culprit:  # it waited behind the page that killed the worker
                    continue
                deaths += 1
                if deaths == 2:
                    raise AnalysisFailed(str(error)) from error
                logger.error("An analysis worker died analyzing %s; trying a new one", url)

    async def close(self) -> None:
        """Let the workers finish and exit (end of input); kill those still there in 10 s."""
        from scrapy.utils.defer import maybe_deferred_to_future

        workers, self._workers = self._workers, []
        if workers:
            await maybe_deferred_to_future(DeferredList([worker.close() for worker in workers]))
