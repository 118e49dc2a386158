"""Folders one crawl at a time may write to (pages, spool, report), held with ``flock``:
the lock goes with the process, ``kill -9`` too, so a crash never leaves a folder locked."""

from __future__ import annotations

import fcntl
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["hold"]


def hold(path: Path, busy: str, mode: int = 0o644) -> int:
    """Lock ``path`` (a folder, or a file made if it is missing) without waiting, and
    return the descriptor that holds it (close it to let go). Raise ``BlockingIOError``
    with ``busy`` as its message if another process holds it."""
    flags = os.O_RDONLY | os.O_DIRECTORY if path.is_dir() else os.O_RDWR | os.O_CREAT
    handle = os.open(path, flags, mode)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(handle)
        raise BlockingIOError(busy) from None
    return handle
