"""Links a page's scripts write into it: what a browser shows and an HTML parser does not.

Older sites write their menus with ``document.write('<a href=…>')``; help systems fill an
empty ``<div id="Contents">`` from a script every page loads (LibreOffice's help:
``innerHTML = '<ul><li><a href=…>'``, a thousand links, its only table of contents). The
HTML is read from the scripts' string literals, joined; no script is run.
"""

from __future__ import annotations

import posixpath
import re
from html import escape
from urllib.parse import urljoin, urlsplit

from lxml import etree
from w3lib.html import strip_html5_whitespace
from w3lib.url import safe_url_string

from topicspider.charset import detect_encoding, to_text
from topicspider.sentlinks import make_room
from topicspider.text import parse_html

__all__ = [
    "SiteScripts",
    "page_scripts",
    "script_html",
    "script_text",
    "write_inline",
    "written_page",
]

#: The most of a script read for the HTML it writes: a site's contents tree is some
#: hundreds of kilobytes; a framework bundle is megabytes of code and writes no link.
MAX_SCRIPT_CHARS = 2_000_000
#: A script this many pages load is the site's (see :class:`SiteScripts`).
SHARED_BY = 2

_STRING = re.compile(
    r"'([^'\\\n]*(?:\\.[^'\\\n]*)*)'"
    r'|"([^"\\\n]*(?:\\.[^"\\\n]*)*)"'
    r"|`([^`\\]*(?:\\.[^`\\]*)*)`",
    re.S,
)
_ESCAPE = re.compile(
    r"\\(?:u\{([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|(\r\n|.))", re.S
)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "", "\n": "", "\r": "", "\r\n": ""}
_LINK = re.compile(r"<a\s[^>]*href", re.IGNORECASE)
#: What a link built from data joins to (``'<a href="' + url + '">'``): no address.
_NO_ADDRESS = re.compile(r"""\shref=(?:""|'')""", re.IGNORECASE)
_SCRIPT_TYPES = frozenset({"", "text/javascript", "application/javascript", "module"})
_DIGITS = re.compile(r"\d+")


def script_html(script: str) -> str:
    """The HTML a script writes: its string literals that hold markup, joined in order, if
    they hold a link (``'<a href="' + url + '">'`` joins to an empty ``href``, which is
    none: read from a page's ``<base>``, it would be another page)."""
    parts = [
        _ESCAPE.sub(_unescape, literal)
        for literals in _STRING.findall(script[:MAX_SCRIPT_CHARS])
        for literal in literals
        if "<" in literal or ">" in literal
    ]
    html = _NO_ADDRESS.sub("", "".join(parts))
    return html if _LINK.search(html) else ""


def script_text(body: bytes, content_type: str, page_charset: str) -> str:
    """A script file's text, as browsers read it: in the charset its header declares, else
    in its page's (a GBK site's scripts are GBK). An HTML page answered for it (a soft 404)
    is no script."""
    if "html" in content_type.lower():
        return ""
    if "charset=" not in content_type.lower():
        content_type = f"text/javascript; charset={page_charset}"
    return to_text(body, detect_encoding(body, content_type))


def written_page(html: str, base_url: str, charset: str) -> bytes:
    """What a script writes as a page of its own, read as the page that loads it reads its
    links: from its base address, queries in its charset."""
    document = (
        f'<html><head><meta charset="{charset}"><base href="{escape(base_url)}"></head>'
        f"<body>{html}</body></html>"
    )
    return document.encode(charset, "xmlcharrefreplace")


def _unescape(match: re.Match[str]) -> str:
    *codes, char = match.groups()
    if code := next(filter(None, codes), None):
        value = int(code, 16)
        return chr(value) if value <= 0x10FFFF else "\ufffd"
    return _SIMPLE_ESCAPES.get(char, char)


def write_inline(root: etree._Element) -> None:
    """Put the HTML each inline script writes right after it, as ``document.write`` does."""
    for script in list(root.iter("script")):
        if script.get("src") or (script.get("type") or "").lower() not in _SCRIPT_TYPES:
            continue
        html = script_html(script.text or "")
        parent = script.getparent()
        if not html or parent is None:
            continue
        body = parse_html(f"<html><body>{html}</body></html>").find("body")
        for offset, element in enumerate(list(body) if body is not None else []):
            parent.insert(parent.index(script) + 1 + offset, element)


def page_scripts(
    root: etree._Element, base_url: str, encoding: str, hosts: tuple[str, ...]
) -> tuple[str, ...]:
    """The addresses of the scripts a page loads from ``hosts`` (or their subdomains): a
    library from a CDN writes no site's links."""
    found = []
    for script in root.iter("script"):
        src = strip_html5_whitespace(script.get("src") or "")
        if not src or (script.get("type") or "").lower() not in _SCRIPT_TYPES:
            continue
        try:
            url = safe_url_string(urljoin(base_url, src), encoding).split("#", 1)[0]
        except ValueError:
            continue
        parts = urlsplit(url)
        host = parts.hostname or ""
        if (
            parts.scheme in ("http", "https")
            and posixpath.splitext(parts.path)[1].lower() in (".js", ".mjs")
            and any(host == known or host.endswith(f".{known}") for known in hosts)
        ):
            found.append(url)
    return tuple(dict.fromkeys(found))


class SiteScripts:
    """Which scripts the pages load are worth a fetch: the site's, which two pages load (its
    contents tree, its menus; not a page's own, rustdoc's ``implementors/…/trait.Try.js``),
    each once, unless a script of the same name wrote no link (a documentation generator's
    ``sidebar-items.js`` in every folder, ``book.js`` in every book) and none wrote any."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._loads: dict[str, int] = {}
        self._barren: set[tuple[str, str]] = set()
        self._writing: set[tuple[str, str]] = set()

    def shared(self, url: str) -> bool:
        """Count a page loading the script: whether this is the second, and the first time
        the script is worth fetching."""
        loads = self._loads.pop(url, 0) + 1
        make_room(self._loads, self.size)
        self._loads[url] = loads
        return loads == SHARED_BY

    def is_barren(self, url: str) -> bool:
        name = _name(url)
        return name in self._barren and name not in self._writing

    def record(self, url: str, wrote_links: bool) -> None:
        name = _name(url)
        (self._writing if wrote_links else self._barren).add(name)


def _name(url: str) -> tuple[str, str]:
    """A script's host and file name, its digits as one (``chunk-3f2a1.js``, ``v2/menu.js``)."""
    parts = urlsplit(url)
    return parts.netloc, _DIGITS.sub("0", posixpath.basename(parts.path))
