"""The pages a table of contents of the topic lists, stored from a lower relevance.

A chapter's table of contents ("Concurrent Execution": threading, multiprocessing, queue,
sched, contextvars) groups pages by subject, and some of those pages seldom use the topic's
words: the queue or scheduler reference says "queue" and "event", not "concurrency". The
classic finding of hypertext classification is that a page's neighbours tell its class
where its own words do not; a list that a site's authors made of the topic is the plainest
such neighbour. So a page such a list names needs only ``TOPIC_LISTED_THRESHOLD`` to be
stored, not the crawl's threshold.

A list of the topic is a relevant page that is mostly links (more link text than
``TOPIC_LIST_LINK_RATIO`` of its text) at least half of whose link text mentions the topic:
a chapter's contents, not the site-wide one the spider only follows. What it lists are
its links outside the regions every page of the site repeats (menus, sidebars) and its
navigation regions (``nav``, ``aside``) however short, other than the next, previous or
contents page its ``rel`` or access keys name, in the folders of its links that mention
the topic: not its footer's "About" or "License", which live elsewhere on the site.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from topicspider.sentlinks import make_room

if TYPE_CHECKING:
    from topicspider.analysis import PageAnalysis

__all__ = ["LISTED_KEY", "TopicalLists"]

#: In a request's meta: the link was found on a list of the topic. Travels with the request
#: (to the worker that fetches it, in Redis), where the list's page may be unknown.
LISTED_KEY = "topic_listed"
#: Listed addresses remembered; past that the oldest tenth is forgotten, as in ``SentLinks``.
LISTED = 100_000


class TopicalLists:
    """The addresses the lists of the topic judged so far name."""

    def __init__(self) -> None:
        self._listed: dict[str, None] = {}

    def __contains__(self, url: str) -> bool:
        return url in self._listed

    def add(self, page: PageAnalysis) -> frozenset[str]:
        """Remember and return what ``page``, a list of the topic, lists."""
        entries = [link for link in page.links if not link.site_wide]
        folders = {_folder(link.url) for link in entries if link.anchor > 0}
        listed = frozenset(link.url for link in entries if _folder(link.url) in folders)
        for url in listed:
            if url not in self._listed:
                make_room(self._listed, LISTED)
                self._listed[url] = None
        return listed


def _folder(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.netloc, posixpath.dirname(parts.path)
