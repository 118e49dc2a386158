"""The spool: rows on their way to the database, kept on disk until the database has them.

Every record goes first to the spool folder, into the current *segment* (a JSON-lines file);
the pipeline seals a segment when it is full or old enough and writes segments to the
database oldest first, deleting each once committed. So the folder holds, at any moment,
exactly the rows the database may not have — after an outage, a crash or a kill too — and
replaying it in name order writes them in the order they were found.

Rows the database refused for their data, or too big for its ``max_allowed_packet``, go to
``rejected.jsonl`` in the same folder, with the error: kept for the user, never sent again.

Under scrapyd every job spools into a folder of its own under the spool folder (``root``),
``root/<job id>``: a folder serves one crawl at a time, and jobs run side by side.
``scrapy mysql-replay`` writes ``root``'s rows and those of every job folder no crawl holds.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections import Counter
from contextlib import suppress
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
#: How long :meth:`Spool.open` waits for a folder that another process holds: long enough for
#: another crawl's glance at it (:func:`waiting`), far shorter than any crawl.
PATIENCE = 0.5


class SpoolError(TopicSpiderError, OSError):
    """The spool folder cannot be used: not writable, or in use by another process."""


class SpoolInUse(SpoolError):
    """Another crawl or replay holds the spool folder."""


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
    """Segments of records under ``folder``, locked against a second crawl or replay:
    ``root`` itself, or a scrapyd job's folder in it."""

    def __init__(self, root: str | os.PathLike[str], job: str | None = None) -> None:
        self.root = Path(root)
        self.job = job
        self.folder = self.root / job if job else self.root
        self._lock: int | None = None
        self._current: Segment | None = None
        self._file: int | None = None
        self._serial = 0

    def open(self) -> list[Segment]:
        """Lock the folder; return the segments an earlier process left, oldest first."""
        deadline = time.monotonic() + PATIENCE
        while self._lock is None:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                self._lock = hold(self.folder / LOCK_NAME, "in use", mode=0o600)
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise SpoolInUse(
                        f"The spool folder {self.folder.absolute()} is in use by another "
                        "crawl or replay"
                    ) from None
                time.sleep(0.01)
            except OSError as exc:
                raise SpoolError(
                    f"Cannot use the spool folder {self.folder.absolute()}: {exc}"
                ) from exc
        return [
            Segment(path, Counter(record["table"] for record in read(path)))
            for path in segments(self.folder)
        ]

    @property
    def rejected(self) -> Path:
        """The file of the records the database refused."""
        return self.folder / REJECTED_NAME

    def append(self, records: Sequence[dict[str, Any]]) -> None:
        """Add ``records`` to the current segment, in one write: all of them, or, if it
        fails (a full disk), none."""
        data = _lines(records)
        if not data:
            return
        if self._current is None:
            path = self._new_segment()
            self._file = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
            self._current = Segment(path)
        assert self._file is not None
        _write(self._file, data)
        self._current.counts.update(record["table"] for record in records)

    def requeue_rejected(self) -> Segment | None:
        """Make :attr:`rejected` the newest segment, to be written again once the database
        takes its rows (a column widened, ``max_allowed_packet`` raised): what it refuses
        again goes back to :attr:`rejected`. None if there is nothing rejected."""
        if not self.rejected.exists():
            return None
        # Read (and checked) where it is: a damaged file made a segment would stop every
        # crawl and replay of the folder, and rejected.jsonl would be gone from its place.
        records = read(self.rejected)
        for number, record in enumerate(records, 1):
            if not isinstance(record, dict) or not isinstance(record.get("table"), str):
                raise SpoolError(f"{self.rejected.absolute()}, row {number}: not a row")
        path = self._new_segment()
        try:
            os.rename(self.rejected, path)
        except OSError as exc:
            raise SpoolError(f"Cannot replay {self.rejected.absolute()}: {exc}") from exc
        return Segment(path, Counter(record["table"] for record in records))

    def _new_segment(self) -> Path:
        self._serial += 1
        return self.folder / f"{time.time_ns():019d}-{self._serial:06d}{SUFFIX}"

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
        """Append ``records``, which the database refused, to :attr:`rejected`, in one write:
        all of them or none."""
        data = _lines(records)
        if not data:
            return
        file = os.open(self.rejected, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            _write(file, data)
        finally:
            os.close(file)

    def close(self) -> None:
        """Seal the current segment and unlock the folder. A job's folder left with nothing
        in it is removed: scrapyd runs many jobs, and ends each."""
        self.seal()
        if self._lock is None:
            return
        if self.job:
            with suppress(OSError):  # gone already, or a lock made meanwhile: it stays
                if [path.name for path in self.folder.iterdir()] == [LOCK_NAME]:
                    (self.folder / LOCK_NAME).unlink()
                    self.folder.rmdir()
        os.close(self._lock)
        self._lock = None


def segments(folder: Path) -> list[Path]:
    """The segment files in ``folder``, oldest first."""
    return sorted(path for path in folder.glob(f"*{SUFFIX}") if SEGMENT_NAME.fullmatch(path.name))


def spools(root: Path) -> list[Spool]:
    """The spool ``root`` and one per job folder in it: a folder with a lock or segments in
    it, never another folder the user keeps there."""
    if not root.is_dir():
        return [Spool(root)]
    jobs = sorted(
        path.name
        for path in root.iterdir()
        if path.is_dir() and ((path / LOCK_NAME).exists() or segments(path))
    )
    return [Spool(root), *(Spool(root, job) for job in jobs)]


def waiting(root: Path, besides: Path) -> list[Path]:
    """The folders of the spool ``root`` (``root`` itself, every job folder) but ``besides``
    that hold segments no crawl or replay is writing: rows a crawl left behind. Each is
    locked for an instant to tell; a crawl opening it then waits (:data:`PATIENCE`)."""
    found = []
    for spool in spools(root):
        if spool.folder == besides or not segments(spool.folder):
            continue
        try:
            lock = hold(spool.folder / LOCK_NAME, "in use", mode=0o600)
        except OSError:  # held by a running crawl or replay, or just removed
            continue
        os.close(lock)
        found.append(spool.folder)
    return found


def _lines(records: Sequence[dict[str, Any]]) -> bytes:
    return "".join(
        json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n" for record in records
    ).encode("utf-8")


def _write(file: int, data: bytes) -> None:
    """Append ``data`` whole or not at all: what a full disk let through of it is cut off
    again, so that the file holds whole lines only (as the pages index does)."""
    end = os.lseek(file, 0, os.SEEK_END)
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(file, view) :]
    except OSError:
        with suppress(OSError):
            os.ftruncate(file, end)
        raise


def read(path: Path) -> list[dict[str, Any]]:
    """The records of a segment. A last line cut short by a crash is skipped, with a warning."""
    records = []
    lines = path.read_bytes().split(b"\n")
    for number, line in enumerate(lines, 1):
        if not line:
            continue
        try:
            records.append(json.loads(line))
        except ValueError as exc:
            if number < len(lines):
                raise SpoolError(
                    f"{path.absolute()}, line {number}: not a row ({exc}): move the file out"
                    " of the spool folder to go on without it"
                ) from None
            logger.warning("%s: skipped an incomplete last line", path)
    return records
