"""The messages between the crawl and its child processes, and the child's side.

Each message is a pickle behind its length (four bytes, big-endian). A child imports
this module and not :mod:`topicspider.children`, so that starting it does not import
Twisted: the page writer starts in 0.05 s of CPU time.
"""

from __future__ import annotations

import pickle
import sys
import traceback
from collections.abc import Callable
from typing import IO, Any

#: Bytes of a message's length.
HEADER = 4


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
