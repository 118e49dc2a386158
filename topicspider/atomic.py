"""Small files replaced whole: a crash or a full disk leaves the old one or the new one,
never a file cut short that the next start cannot read."""

from __future__ import annotations

import os
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

__all__ = ["replace"]


def replace(
    path: Path, data: bytes | Iterable[bytes | memoryview], temp: Path | None = None
) -> None:
    """Write ``data`` (bytes, or parts of it, written one after another without joining
    them into one copy) to ``temp`` (``path`` with ``.part`` added, by default), flush it to
    the disk and rename it over ``path``. If any step fails the temporary file is removed
    and the error raised: ``path`` is as it was."""
    temp = temp or path.with_name(f"{path.name}.part")
    try:
        with temp.open("wb") as new:
            new.writelines([data] if isinstance(data, bytes) else data)
            new.flush()
            os.fsync(new.fileno())
        os.replace(temp, path)
    except BaseException:
        with suppress(OSError):
            temp.unlink()
        raise
