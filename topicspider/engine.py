"""What the crawl reads of Scrapy's engine, and asks of it, beyond its public API.

Each is an attribute of the engine's slot or of its scraper, pinned by the Scrapy version
range of ``requirements.txt``: kept here, in one place, for the next Scrapy to be checked
against.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import deferred_from_coro
from twisted.internet.defer import DeferredList

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable

    from scrapy import Request
    from scrapy.core.engine import ExecutionEngine

__all__ = [
    "items_in_process",
    "process_item",
    "requests_in_progress",
    "requests_unfinished",
    "store",
    "wake",
]


def requests_in_progress(engine: ExecutionEngine | None) -> Collection[Request]:
    """The requests the engine took and has not finished: downloaded *and* parsed (the
    slot's ``inprogress``); none before the engine opens the spider."""
    return getattr(getattr(engine, "_slot", None), "inprogress", ())


def requests_unfinished(engine: ExecutionEngine | None) -> Collection[Request]:
    """The requests in progress, and those whose pages' items the spider has yet to hand
    over, or the item pipelines to store (its ``requests_unstored``, if it has one)."""
    in_progress = requests_in_progress(engine)
    unstored = getattr(getattr(engine, "spider", None), "requests_unstored", None)
    held = unstored() if unstored is not None else ()
    return {*in_progress, *held} if held else in_progress


def items_in_process(engine: ExecutionEngine | None) -> int:
    """How many items the item pipelines are processing (the scraper slot's
    ``itemproc_size``)."""
    return getattr(getattr(getattr(engine, "scraper", None), "slot", None), "itemproc_size", 0)


def wake(engine: ExecutionEngine | None) -> None:
    """Ask the engine for a round of scheduling, and of its idle check, now: Scrapy asks
    only when a download ends or every 5 s (the slot's ``nextcall``)."""
    slot = getattr(engine, "_slot", None)
    if slot is not None:
        slot.nextcall.schedule()


async def process_item(engine: ExecutionEngine, item: Any) -> None:
    """Send an item that comes from no response to the item pipelines, and wait for it:
    logged, counted and signalled as a spider's items are (``Scraper.start_itemproc_async``,
    which Scrapy uses for the items of a spider's ``start()``)."""
    await engine.scraper.start_itemproc_async(item, response=None)


def store(engine: ExecutionEngine, items: Iterable[Any]) -> DeferredList:
    """Send items to the item pipelines outside any callback (:func:`process_item`), without
    waiting for them. Once they are processed, the engine checks again whether it is idle,
    and a spider closing meanwhile (a pipeline that failed on one of them) finishes:
    Scrapy's scraper looks for that only after a response's output (``_check_if_closing``),
    and would wait for them for ever."""
    scraper = engine.scraper
    processed = DeferredList([deferred_from_coro(process_item(engine, item)) for item in items])

    def finished(_: object) -> None:
        if scraper.slot is not None:
            scraper._check_if_closing()
        wake(engine)

    processed.addBoth(finished)
    return processed
