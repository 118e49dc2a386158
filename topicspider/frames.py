"""The messages between the crawl and its child processes, and the child's side.

Each message is a pickle behind its length (four bytes, big-endian). A child imports
this module and not :mod:`topicspider.children`, so that starting it does not import
Twisted: the page writer starts in 0.05 s of CPU time.

A child lives as long as its input: it exits at end of input, when the crawl closes it or
dies (even of ``kill -9``). It ignores :data:`CRAWL_SIGNALS`, which a terminal's Ctrl-C (or
a ``kill`` of the process group) sends to the crawl and its children alike: the crawl stops
gracefully and still needs its children for the requests in flight.
"""

from __future__ import annotations

import pickle
import signal
import sys
import traceback
from collections.abc import Callable
from typing import IO, Any

#: Bytes of a message's length.
HEADER = 4

#: The signals that stop a crawl gracefully, left to the crawl by its children.
CRAWL_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def frame(message: Any) -> list[bytes]:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return [len(data).to_bytes(HEADER, "big"), data]


def read_frame(stream: IO[bytes]) -> Any:
    """The next message, or None at end of input."""
    header = stream.read(HEADER)
    if len(header) < HEADER:
        return None
    return pickle.loads(stream.read(int.from_bytes(header, "big")))


def serve(handler: Callable[[Any], Callable[..., Any]]) -> None:
    """The child's side: ``handler(arguments)`` with the first message, then answer each
    request with what the function it returned gives, until end of input."""
    ignore_crawl_signals()
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the frames
    handle = handler(read_frame(requests))
    while (message := read_frame(requests)) is not None:
        number, request = message
        try:
            reply = (number, handle(*request), None)
        except Exception as error:  # reported to the crawl; the child goes on
            if not isinstance(error, OSError):  # a full disk needs its message, not a trace
                traceback.print_exc()
            reply = (number, None, f"{type(error).__name__}: {error}")
        replies.writelines(frame(reply))
        replies.flush()


def ignore_crawl_signals() -> None:
    """Ignore :data:`CRAWL_SIGNALS`, then unblock them: the crawl starts a child with them
    blocked (see :meth:`topicspider.children.Child.spawn`), so that one sent before this
    call waits, and is dropped here."""
    for signum in CRAWL_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # not on Windows
        signal.pthread_sigmask(signal.SIG_UNBLOCK, CRAWL_SIGNALS)
