"""Child Python processes that take requests and answer them in order.

The crawl hands work that would hold its reactor thread (page analysis, writing pages to
disk) to ``python -m MODULE`` children, over their stdin and stdout (see
:mod:`topicspider.frames`). The reactor writes a request and reads the answer when it
comes, like any other connection: no helper thread in the crawl process competes with it
for the GIL. A child ignores the signals that stop the crawl (see
:mod:`topicspider.frames`) and exits when its input ends: when :meth:`Child.close` ends it,
or when the crawl dies.
"""

from __future__ import annotations

import itertools
import logging
import os
import pickle
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred, fail
from twisted.internet.protocol import ProcessProtocol

from topicspider.frames import CRAWL_SIGNALS, HEADER, frame

if TYPE_CHECKING:
    from typing import Self

    from twisted.internet.interfaces import IDelayedCall
    from twisted.python.failure import Failure

__all__ = ["Child", "ChildDied", "ChildFailed", "ChildTimedOut"]

logger = logging.getLogger(__name__)

#: Seconds a child has to exit after its input ends before it is killed.
EXIT_TIMEOUT = 10


class ChildFailed(Exception):
    """The child raised while handling a request; the message names the error."""


class ChildDied(Exception):
    """The child process ended with requests in hand (a crash, out of memory, a kill).
    ``culprit``: the request it was handling then, the oldest (a child answers in order);
    the others only waited behind it."""

    def __init__(self, message: str, culprit: bool = True) -> None:
        super().__init__(message)
        self.culprit = culprit


class ChildTimedOut(ChildDied):
    """The child was killed for taking longer than its timeout over one request, the
    culprit: another child would most likely take as long."""


class Child(ProcessProtocol):
    """One child process, seen from the reactor: :meth:`call` sends a request and returns
    a Deferred for its answer.

    With a ``timeout`` (seconds), a child that has not answered the request it is handling
    that long after it could start on it is killed: that request fails with
    :class:`ChildTimedOut`, the others with :class:`ChildDied` (not the culprit). Without
    it, a request it never finishes would hold up every one behind it for good.
    """

    def __init__(
        self, name: str, on_lost: Callable[[Child], None] | None = None, timeout: float = 0
    ) -> None:
        self.name = name
        self.on_lost = on_lost
        self.timeout = timeout
        self.pending: dict[int, Deferred[Any]] = {}
        self.ended: Deferred[None] = Deferred()
        self._buffer = bytearray()
        self._numbers = itertools.count()
        self._gone = False
        self._deadline: IDelayedCall | None = None
        self._timed_out = False

    @classmethod
    def spawn(
        cls,
        module: str,
        arguments: Any,
        name: str,
        on_lost: Callable[[Child], None] | None = None,
        timeout: float = 0,
    ) -> Self:
        """Start ``python -m module``; ``arguments`` is its first message (see :func:`serve`)."""
        from twisted.internet import reactor

        child = cls(name, on_lost, timeout)
        # The crawl's own import path: under scrapyd the project is an egg on it.
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        with _crawl_signals_blocked():
            reactor.spawnProcess(  # type: ignore[attr-defined]
                child, sys.executable, [sys.executable, "-m", module], env=env
            )
        child._send(arguments)
        return child

    def call(self, *request: Any) -> Deferred[Any]:
        if self._gone:
            return fail(ChildDied(f"the {self.name} exited"))
        number = next(self._numbers)
        answer: Deferred[Any] = Deferred()
        self.pending[number] = answer
        self._send((number, request))
        if len(self.pending) == 1:
            self._start_clock()
        return answer

    def _start_clock(self) -> None:
        """Time the oldest request in hand, the one the child is on (it answers in order)."""
        from twisted.internet import reactor

        if self._deadline is not None and self._deadline.active():
            self._deadline.cancel()
        self._deadline = None
        if self.timeout and self.pending and not self._gone:
            self._deadline = reactor.callLater(self.timeout, self._time_out)  # type: ignore[attr-defined]

    def _time_out(self) -> None:
        self._deadline = None
        if self.transport is not None and not self._gone:
            logger.warning(
                "The %s took over %g s on one request; killing it", self.name, self.timeout
            )
            self._timed_out = True
            self.transport.signalProcess("KILL")

    def close(self) -> Deferred[None]:
        """End the child's input: it answers what it holds and exits, or is killed
        ``EXIT_TIMEOUT`` seconds later. Fires once it has ended."""
        from twisted.internet import reactor

        if self.transport is not None:
            self.transport.closeStdin()
        kill = reactor.callLater(EXIT_TIMEOUT, self._kill)  # type: ignore[attr-defined]
        self.ended.addBoth(lambda result: kill.cancel() if kill.active() else None)
        return self.ended

    def _kill(self) -> None:
        if not self.ended.called and self.transport is not None:
            logger.warning("The %s did not exit; killing it", self.name)
            self.transport.signalProcess("KILL")

    def _send(self, message: Any) -> None:
        assert self.transport is not None
        self.transport.writeSequence(frame(message))

    def outReceived(self, data: bytes) -> None:
        self._buffer += data
        while len(self._buffer) >= HEADER:
            size = int.from_bytes(self._buffer[:HEADER], "big")
            if len(self._buffer) < HEADER + size:
                return
            number, answer, error = pickle.loads(self._buffer[HEADER : HEADER + size])
            del self._buffer[: HEADER + size]
            deferred = self.pending.pop(number)
            self._start_clock()
            if error is None:
                deferred.callback(answer)
            else:
                deferred.errback(ChildFailed(error))

    def errReceived(self, data: bytes) -> None:
        for line in data.decode("utf-8", "replace").splitlines():
            if line.strip():
                logger.warning("%s: %s", self.name, line)

    def outConnectionLost(self) -> None:
        self._gone = True
        if self.on_lost is not None:
            self.on_lost(self)
        self._start_clock()  # stops it: nothing is pending
        pending, self.pending = self.pending, {}
        for place, deferred in enumerate(pending.values()):
            if place == 0 and self._timed_out:
                deferred.errback(
                    ChildTimedOut(f"the {self.name} took over {self.timeout:g} s on it")
                )
            else:
                deferred.errback(ChildDied(f"the {self.name} exited", culprit=place == 0))

    def processEnded(self, reason: Failure) -> None:
        self.ended.callback(None)


@contextmanager
def _crawl_signals_blocked() -> Iterator[None]:
    """Block ``CRAWL_SIGNALS`` on this thread while it starts a child, which inherits the
    mask: a Ctrl-C while the child starts Python waits in it until it ignores the signal.
    The crawl gets it as soon as the mask is restored."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows
        yield
        return
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, CRAWL_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
