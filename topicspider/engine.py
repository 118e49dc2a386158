"""What the crawl reads of Scrapy's engine, and asks of it, beyond its public API.

Each is an attribute of the engine's slot, pinned by the Scrapy version range of
``requirements.txt``: kept here, in one place, for the next Scrapy to be checked against.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection

    from scrapy import Request
    from scrapy.core.engine import ExecutionEngine

__all__ = ["requests_in_progress", "wake"]


def requests_in_progress(engine: ExecutionEngine | None) -> Collection[Request]:
    """The requests the engine took and has not finished: downloaded *and* parsed (the
    slot's ``inprogress``); none before the engine opens the spider."""
    return getattr(getattr(engine, "_slot", None), "inprogress", ())


def wake(engine: ExecutionEngine | None) -> None:
    """Ask the engine for a round of scheduling, and of its idle check, now: Scrapy asks
    only when a download ends or every 5 s (the slot's ``nextcall``)."""
    slot = getattr(engine, "_slot", None)
    if slot is not None:
        slot.nextcall.schedule()
