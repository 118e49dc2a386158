"""Small files replaced whole: a crash or a full disk leaves the old one or the new one,
never a file cut short that the next start cannot read."""

from __future__ import annotations

import os
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

__all__ = ["replace", "replace_all"]


def replace(
    path: Path, data: bytes | Iterable[bytes | memoryview], temp: Path | None = None
) -> None:
    """Write ``data`` (bytes, or parts of it, written one after another without joining
    them into one copy) to ``temp`` (``path`` with ``.part`` added, by default), flush it to
    the disk and rename it over ``path``. If any step fails the temporary file is removed
    and the error raised: ``path`` is as it was."""
    temp = temp or _temporary(path)
    try:
        _write(temp, data)
        os.replace(temp, path)
    except BaseException:
        with suppress(OSError):
            temp.unlink()
        raise


def replace_all(files: dict[Path, bytes]) -> None:
    """Write every file to a temporary one first, then rename each over its path: files
    that go together (a report's numbers and its plot) are all new, or all as they were
    if a write fails (a full disk)."""
    written: list[Path] = []
    try:
        for path, data in files.items():
            written.append(_temporary(path))
            _write(written[-1], data)
    except BaseException:
        for temp in written:
            with suppress(OSError):
                temp.unlink()
        raise
    for path, temp in zip(files, written, strict=True):
        os.replace(temp, path)


def _temporary(path: Path) -> Path:
    return path.with_name(f"{path.name}.part")


def _write(temp: Path, data: bytes | Iterable[bytes | memoryview]) -> None:
    """``data`` in ``temp``, flushed to the disk."""
    with temp.open("wb") as new:
        new.writelines([data] if isinstance(data, bytes) else data)
        new.flush()
        os.fsync(new.fileno())
