"""``scrapy parse``, showing what the crawl would make of one page and storing nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from itemadapter import ItemAdapter
from scrapy.commands.parse import Command as ScrapyParseCommand

from topicspider.commands import OnePage
from topicspider.pqueues import score_of
from topicspider.scripts import SCRIPT_KEY

if TYPE_CHECKING:
    from scrapy import Request


class Command(OnePage, ScrapyParseCommand):
    """Scrapy's ``parse`` opens the item pipelines as a crawl does, though no item reaches
    them: ours opened the pages folder (by default the one a running crawl holds, which
    refused it) and MySQL. They are off here, and so is the shared frontier (see
    :class:`~topicspider.commands.OnePage`). An item's raw ``body`` is shown as its size:
    its bytes filled the screen before the relevance. Links are shown with their scores,
    best first, the order the crawl would fetch them in. Its arguments are checked as the
    crawl's are (the page given is the seed): a bad one is one line, not a traceback."""

    def print_items(self, lvl: int | None = None, colour: bool = True) -> None:
        for items in self.items.values():
            items[:] = [_without_body(item) for item in items]
        super().print_items(lvl, colour)

    def print_requests(self, lvl: int | None = None, colour: bool = True) -> None:
        # Called once a level with ``-v``: a level already shown is wrapped already.
        for requests in self.requests.values():
            shown = [
                request if isinstance(request, _Scored) else _Scored(request)
                for request in requests
            ]
            requests[:] = sorted(shown, key=lambda scored: score_of(scored.request), reverse=True)
        super().print_requests(lvl, colour)


class _Scored:
    """A request shown with its score, ``<0.412 GET http://…>``, or as the script whose links
    the crawl would read, ``<script GET http://…/nav.js>``."""

    def __init__(self, request: Request) -> None:
        self.request = request

    def __repr__(self) -> str:
        shown = "script" if SCRIPT_KEY in self.request.meta else f"{score_of(self.request):.3f}"
        return f"<{shown} {self.request.method} {self.request.url}>"


def _without_body(item: object) -> dict:
    shown = ItemAdapter(item).asdict()
    if isinstance(shown.get("body"), bytes):
        shown["body"] = f"<{len(shown['body'])} bytes>"
    return shown
