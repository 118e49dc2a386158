"""The child processes a crawl started, found in ``/proc``: tests kill them to see what the
crawl does when one dies."""

from __future__ import annotations

from pathlib import Path

__all__ = ["children_of"]


def children_of(pid: int, module: str) -> list[int]:
    """Process ids of ``pid``'s children running ``python -m module``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if parent == pid and module.encode() in command:
            found.append(int(entry.name))
    return found
