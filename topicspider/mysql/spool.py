"""The spool: rows on their way to the database, kept on disk until the database has them.

Every record goes first to the spool folder, into the current *segment* (a JSON-lines file);
the pipeline seals a segment when it is full or old enough and writes segments to the
database oldest first, deleting each once committed. So the folder holds, at any moment,
exactly the rows the database may not have — after an outage, a crash or a kill too — and
replaying it in name order writes them in the order they were found.

Rows the database refused for their data, or too big for its ``max_allowed_packet``, go to
``rejected.jsonl`` in the same folder, with the error: kept for the user, never sent again.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from topicspider.exceptions import TopicSpiderError
from topicspider.locks import hold

if TYPE_CHECKING:
    from collections.abc import Sequence

logger = logging.getLogger(__name__)

SUFFIX = ".jsonl"
#: Segment files are named by creation time and a serial number, so names sort in age order.
SEGMENT_NAME = re.compile(r"\d{19}-\d{6}\.jsonl")
LOCK_NAME = ".lock"
#: Not a segment name: what is in it is never written again.
REJECTED_NAME = "rejected.jsonl"


class SpoolError(TopicSpiderError, OSError):
    """The spool folder cannot be used: not writable, or in use by another process."""


@dataclass
class Segment:
    """A spool file and how many records of each table it holds."""

    path: Path
    counts: Counter[str] = field(default_factory=Counter)
    #: True once the segment has had to wait for the database.
    spooled: bool = False

    def __len__(self) -> int:
        return self.counts.total()


class Spool:
    """Segments of records under ``folder``, locked against a second crawl or replay."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self._lock: int | None = None
        self._current: Segment | None = None
        self._file: int | None = None
        self._serial = 0

    def open(self) -> list[Segment]:
        """Lock the folder; return the segments an earlier process left, oldest first."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._lock = hold(self.folder / LOCK_NAME, "in use", mode=0o600)
        except BlockingIOError:
            raise SpoolError(
                f"The spool folder {self.folder.absolute()} is in use by another crawl or replay"
            ) from None
        except OSError as exc:
            raise SpoolError(
                f"Cannot use the spool folder {self.folder.absolute()}: {exc}"
            ) from exc
        return [
            Segment(path, Counter(record["table"] for record in read(path)))
            for path in sorted(self.folder.glob(f"*{SUFFIX}"))
            if SEGMENT_NAME.fullmatch(path.name)
        ]

    @property
    def rejected(self) -> Path:
        """The file of the records the database refused."""
        return self.folder / REJECTED_NAME

    def append(self, records: Sequence[dict[str, Any]]) -> None:
        """Add ``records`` to the current segment, in one write."""
        data = _lines(records)
        if not data:
            return
        if self._current is None:
            self._serial += 1
            path = self.folder / f"{time.time_ns():019d}-{self._serial:06d}{SUFFIX}"
            self._file = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
            self._current = Segment(path)
        assert self._file is not None
        _write(self._file, data)
        self._current.counts.update(record["table"] for record in records)

    @property
    def pending(self) -> int:
        """Records in the current, unsealed segment."""
        return len(self._current) if self._current else 0

    def seal(self) -> Segment | None:
        """Close the current segment and return it; ``None`` if it is empty."""
        segment, self._current = self._current, None
        if self._file is not None:
            os.close(self._file)
            self._file = None
        return segment

    def reject(self, records: Sequence[dict[str, Any]]) -> None:
        """Append ``records``, which the database refused, to :attr:`rejected`, in one write."""
        data = _lines(records)
        if not data:
            return
        file = os.open(self.rejected, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            _write(file, data)
        finally:
            os.close(file)

    def close(self) -> None:
        """Seal the current segment and unlock the folder."""
        self.seal()
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None


def _lines(records: Sequence[dict[str, Any]]) -> bytes:
    return "".join(
        json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n" for record in records
    ).encode("utf-8")


def _write(file: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(file, view) :]


def read(path: Path) -> list[dict[str, Any]]:
    """The records of a segment. A last line cut short by a crash is skipped, with a warning."""
    records = []
    lines = path.read_bytes().split(b"\n")
    for number, line in enumerate(lines, 1):
        if not line:
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            if number < len(lines):
                raise
            logger.warning("%s: skipped an incomplete last line", path)
    return records
