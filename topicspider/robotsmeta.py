"""What a page's robots ``<meta>`` tags and ``X-Robots-Tag`` headers ask of a crawler.

Two directives change what the crawl does: ``noindex`` (the page is not stored) and
``nofollow`` (its links are not followed); ``none`` is both. They apply when given to
all robots (``<meta name="robots">``, a header without a name) or to this crawler by
its ``BOT_NAME`` (``<meta name="topicspider">``, ``X-Robots-Tag: topicspider: noindex``).
The rest (``noarchive``, ``max-snippet:``, ``unavailable_after:`` …) are about how a
search engine shows a page, and are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from lxml import etree

__all__ = ["NOFOLLOW", "NOINDEX", "header_directives", "meta_directives"]

NOINDEX = "noindex"
NOFOLLOW = "nofollow"
_EXPANDED = {"none": {NOINDEX, NOFOLLOW}, NOINDEX: {NOINDEX}, NOFOLLOW: {NOFOLLOW}}
#: Directives written ``name: value``, which a header's ``agent: directive`` is not.
_VALUED = frozenset({"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"})
_SEPARATORS = re.compile(r"[\s,]+")
_AGENT = re.compile(r"\s*([\w.-]+)\s*:\s*(.*)", re.DOTALL)
_HEAD_META = etree.XPath("/html/head/meta[@name and @content]")


def meta_directives(root: etree._Element, agents: Iterable[str]) -> frozenset[str]:
    """``noindex``/``nofollow`` as the page's ``<meta name="robots|AGENT">`` tags say."""
    names = {agent.lower() for agent in agents}
    if not names:
        return frozenset()
    found: set[str] = set()
    for meta in _HEAD_META(root):
        if meta.get("name").strip().lower() in names:
            found |= _directives(meta.get("content"))
    return frozenset(found)


def header_directives(values: Iterable[str], agent: str) -> frozenset[str]:
    """``noindex``/``nofollow`` as ``X-Robots-Tag`` header values say to all robots or to
    ``agent``. A value's ``name:`` prefix names the robot its directives are for, up to the
    next name (``googlebot: noindex, otherbot: nofollow``)."""
    found: set[str] = set()
    for value in values:
        addressee = None
        for part in value.split(","):
            named = _AGENT.fullmatch(part)
            if named and named[1].lower() not in _VALUED:
                addressee, part = named[1].lower(), named[2]
            if addressee in (None, agent.lower()):
                found |= _directives(part)
    return frozenset(found)


def _directives(text: str) -> set[str]:
    """Directives are separated by commas; some pages use spaces."""
    return {found for word in _SEPARATORS.split(text.lower()) for found in _EXPANDED.get(word, ())}
