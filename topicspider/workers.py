"""Page analysis in worker processes, so that the reactor thread only crawls.

Parsing, segmenting and scoring a page costs more CPU than fetching it; on the
reactor thread that work would set the pace of the whole crawl. With
``TOPIC_ANALYSIS_PROCESSES`` > 0, child processes (``python -m topicspider.workers``)
do it instead, each with its own :class:`~topicspider.analysis.Analyzer` built from
the same arguments. They talk to the reactor over their stdin and stdout in
length-prefixed pickles: no helper thread in the crawl process competes with the
reactor for the GIL. ``0`` analyzes on the reactor thread.
"""

from __future__ import annotations

import itertools
import logging
import os
import pickle
import sys
import traceback
from typing import IO, TYPE_CHECKING, Any

from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.protocol import ProcessProtocol

from topicspider.analysis import Analyzer, PageAnalysis

if TYPE_CHECKING:
    from twisted.python.failure import Failure

__all__ = ["AnalysisFailed", "AnalysisPool"]

logger = logging.getLogger(__name__)

_HEADER = 4  # bytes of frame length, big-endian


class AnalysisFailed(Exception):
    """A page could not be analyzed: the analyzer raised, or its worker died."""


class WorkerDied(AnalysisFailed):
    """The worker process ended with pages in hand (a crash, out of memory, a kill)."""


def _frame(message: Any) -> list[bytes]:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return [len(data).to_bytes(_HEADER, "big"), data]


class _Worker(ProcessProtocol):
    """One worker process: requests out on its stdin, analyses back on its stdout."""

    def __init__(self, pool: AnalysisPool) -> None:
        self.pool = pool
        self.pending: dict[int, Deferred[PageAnalysis]] = {}
        self.buffer = bytearray()
        self.ended: Deferred[None] = Deferred()

    def send(self, message: Any) -> None:
        assert self.transport is not None
        self.transport.writeSequence(_frame(message))

    def outReceived(self, data: bytes) -> None:
        self.buffer += data
        while len(self.buffer) >= _HEADER:
            size = int.from_bytes(self.buffer[:_HEADER], "big")
            if len(self.buffer) < _HEADER + size:
                return
            number, analysis, error = pickle.loads(self.buffer[_HEADER : _HEADER + size])
            del self.buffer[: _HEADER + size]
            deferred = self.pending.pop(number)
            if error is None:
                deferred.callback(analysis)
            else:
                deferred.errback(AnalysisFailed(error))

    def errReceived(self, data: bytes) -> None:
        for line in data.decode("utf-8", "replace").splitlines():
            if line.strip():
                logger.warning("analysis worker: %s", line)

    def outConnectionLost(self) -> None:
        self.pool.lost(self)
        pending, self.pending = self.pending, {}
        for deferred in pending.values():
            deferred.errback(WorkerDied("the analysis worker exited"))

    def processEnded(self, reason: Failure) -> None:
        self.ended.callback(None)


class AnalysisPool:
    """Runs :meth:`Analyzer.analyze` in ``processes`` worker processes, or inline with 0.

    A page goes to the worker with the fewest pages in hand. A worker that dies fails
    only the pages it held, each retried once by a new worker; a page that kills two
    workers fails with :class:`AnalysisFailed`.
    """

    def __init__(self, arguments: dict[str, Any], processes: int) -> None:
        self.arguments = arguments
        self.processes = processes
        self._inline = Analyzer(**arguments) if processes == 0 else None
        self._workers: list[_Worker] = []
        self._numbers = itertools.count()

    def start(self) -> None:
        """Start the workers now (each takes a second to load its dictionary), not at
        the first page."""
        from twisted.internet import reactor

        while self._inline is None and len(self._workers) < self.processes:
            worker = _Worker(self)
            # The crawl's own import path: under scrapyd the project is an egg on it.
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
            reactor.spawnProcess(  # type: ignore[attr-defined]
                worker,
                sys.executable,
                [sys.executable, "-m", "topicspider.workers"],
                env=env,
            )
            worker.send(self.arguments)
            self._workers.append(worker)

    def lost(self, worker: _Worker) -> None:
        if worker in self._workers:
            self._workers.remove(worker)

    async def analyze(self, url: str, body: bytes, content_type: str) -> PageAnalysis:
        if self._inline is not None:
            return self._inline.analyze(url, body, content_type)
        from scrapy.utils.defer import maybe_deferred_to_future

        for attempt in (1, 2):
            self.start()
            worker = min(self._workers, key=lambda w: len(w.pending))
            number = next(self._numbers)
            deferred: Deferred[PageAnalysis] = Deferred()
            worker.pending[number] = deferred
            worker.send((number, url, body, content_type))
            try:
                return await maybe_deferred_to_future(deferred)
            except WorkerDied:
                if attempt == 2:
                    raise
                logger.error("An analysis worker died analyzing %s; trying a new one", url)
        raise AssertionError("unreachable")

    async def close(self) -> None:
        """Let the workers finish and exit (end of input); kill those still there in 10 s."""
        from scrapy.utils.defer import maybe_deferred_to_future
        from twisted.internet import reactor

        workers, self._workers = self._workers, []
        if not workers:
            return
        for worker in workers:
            assert worker.transport is not None
            worker.transport.closeStdin()
        kill = reactor.callLater(10, _kill, workers)  # type: ignore[attr-defined]
        try:
            await maybe_deferred_to_future(DeferredList([worker.ended for worker in workers]))
        finally:
            if kill.active():
                kill.cancel()


def _kill(workers: list[_Worker]) -> None:
    for worker in workers:
        if not worker.ended.called and worker.transport is not None:
            logger.warning("An analysis worker did not exit; killing it")
            worker.transport.signalProcess("KILL")


def _read(stream: IO[bytes]) -> Any:
    header = stream.read(_HEADER)
    if len(header) < _HEADER:
        return None
    return pickle.loads(stream.read(int.from_bytes(header, "big")))


def main() -> None:
    """The worker process: an analyzer's arguments, then pages, until end of input."""
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the frames
    analyzer = Analyzer(**_read(requests))
    while (request := _read(requests)) is not None:
        number, url, body, content_type = request
        try:
            reply = (number, analyzer.analyze(url, body, content_type), None)
        except Exception as error:  # reported to the crawl; the worker goes on
            traceback.print_exc()
            reply = (number, None, f"{type(error).__name__}: {error}")
        replies.writelines(_frame(reply))
        replies.flush()


if __name__ == "__main__":
    main()
