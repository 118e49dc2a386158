"""Links a page's scripts write into it: what a browser shows and an HTML parser does not.

Older sites write their menus with ``document.write('<a href=…>')``; help systems fill an
empty ``<div id="Contents">`` from a script every page loads (LibreOffice's help:
``innerHTML = '<ul><li><a href=…>'``, a thousand links, its only table of contents). The
HTML is read from the scripts' string literals, joined; no script is run.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from html import escape
from urllib.parse import urlsplit

from lxml import etree

from topicspider.charset import decode
from topicspider.sentlinks import make_room
from topicspider.text import parse_html
from topicspider.urls import link_url, on_sites

__all__ = [
    "SCRIPT_KEY",
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
#: A script name whose copies wrote no link (or could not be had) this many times is barren.
BARREN_COPIES = 2
#: In a script's request: the page that loads it.
SCRIPT_KEY = "topic_script"

_STRING = re.compile(
    r"'([^'\\\r\n]*(?:\\(?:\r\n|.)[^'\\\r\n]*)*)'"
    r'|"([^"\\\r\n]*(?:\\(?:\r\n|.)[^"\\\r\n]*)*)"'
    r"|`([^`\\]*(?:\\.[^`\\]*)*)`",
    re.S,
)
#: Where one literal ends and the next begins, in the joined markup until it is read.
_JOIN = "\x00"
_ESCAPE = re.compile(
    r"\\(?:u\{([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|(\r\n|.))", re.S
)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "", "\n": "", "\r": "", "\r\n": ""}
_LINK = re.compile(r"<a\s[^>]*href", re.IGNORECASE)
#: An address built from data: one that spans two literals (``'<a href="/news/' + id +
#: '.html">'``; ``'<a href="' + url + '">'`` is ``href=""``, which from a page's ``<base>``
#: would be another page), a template's placeholder (``${item.url}``, ``{{url}}``,
#: ``#{href}``), or code the literals' joins cut out of a library (spaces, brackets).
_BUILT = r"(?:\x00|[${#]\{|[\s(){}<>])"
_NO_ADDRESS = re.compile(
    rf"""\shref=(?:"[^"]*{_BUILT}[^"]*"|'[^']*{_BUILT}[^']*'|""|'')""", re.IGNORECASE
)
#: What the script writes markup with: a script that writes none holds data, not the page.
_WRITES = re.compile(
    r"document\.write|\.(?:inner|outer)HTML\b|insertAdjacentHTML|\.(?:html|append|prepend)\s*\("
)
#: The ``type`` values browsers run as JavaScript (the HTML standard's list), and modules.
_SCRIPT_TYPES = frozenset(
    {
        "",
        "module",
        "application/ecmascript",
        "application/javascript",
        "application/x-ecmascript",
        "application/x-javascript",
        "text/ecmascript",
        "text/javascript",
        "text/jscript",
        "text/livescript",
        "text/x-ecmascript",
        "text/x-javascript",
        *(f"text/javascript1.{minor}" for minor in range(6)),
    }
)
_DIGITS = re.compile(r"\d+")
#: Elements a script fills with links: containers, not an anchor's target or an icon.
_CONTAINERS = (
    "div",
    "ul",
    "ol",
    "dl",
    "nav",
    "menu",
    "section",
    "aside",
    "main",
    "article",
    "header",
    "footer",
    "table",
    "tbody",
    "p",
)


def script_html(script: str) -> str:
    """The HTML a script writes: if it writes markup at all, its string literals that hold
    markup, joined in order, when they hold a link (an address built from data is none)."""
    script = script[:MAX_SCRIPT_CHARS]
    if not _WRITES.search(script):
        return ""
    parts = [
        _ESCAPE.sub(_unescape, literal)
        for literals in _STRING.findall(script)
        for literal in literals
        if "<" in literal or ">" in literal
    ]
    # JavaScript strings are UTF-16: \ud83d\ude00 is one character, a lone half none.
    joined = _JOIN.join(parts).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    html = _NO_ADDRESS.sub("", joined).replace(_JOIN, "")
    return html if _LINK.search(html) else ""


def _runs(script: etree._Element) -> bool:
    """Whether a browser runs the script element (its ``type`` one of JavaScript's)."""
    return (script.get("type") or "").strip().lower() in _SCRIPT_TYPES


def script_text(body: bytes, content_type: str, page_charset: str) -> str:
    """A script file's text, as browsers read it: in the charset its header declares, else
    in its page's (a GBK site's scripts are GBK). An HTML page answered for it (a soft 404)
    is no script."""
    if "html" in content_type.lower():
        return ""
    if "charset=" not in content_type.lower():
        content_type = f"text/javascript; charset={page_charset}"
    return decode(body, content_type)[1]


def written_page(html: str, base_url: str, charset: str) -> bytes:
    """What a script writes as a page of its own, read as the page that loads it reads its
    links: from its base address, queries in its charset."""
    document = (
        f'<html><head><meta charset="{charset}"><base href="{escape(base_url)}"></head>'
        f"<body>{html}</body></html>"
    )
    return document.encode(charset, "xmlcharrefreplace")


def _unescape(match: re.Match[str]) -> str:
    """The character a JavaScript escape stands for; nothing for a line continuation."""
    *codes, char = match.groups()
    if code := next(filter(None, codes), None):
        value = int(code, 16)
        return chr(value) if value <= 0x10FFFF else "\ufffd"
    return _SIMPLE_ESCAPES.get(char, char)


def write_inline(root: etree._Element) -> None:
    """Put the HTML each inline script writes right after it, before the text that follows
    it, as ``document.write`` does."""
    for script in list(root.iter("script")):
        if script.get("src") or not _runs(script):
            continue
        html = script_html(script.text or "")
        parent = script.getparent()
        body = parse_html(f"<html><body>{html}</body></html>").find("body") if html else None
        if body is None or parent is None:
            continue
        after = script.tail or ""
        script.tail = body.text
        written = list(body)
        for offset, element in enumerate(written):
            parent.insert(parent.index(script) + 1 + offset, element)
        if written:
            written[-1].tail = (written[-1].tail or "") + after
        else:
            script.tail = (script.tail or "") + after


def page_scripts(
    root: etree._Element, base_url: str, encoding: str, hosts: tuple[str, ...]
) -> tuple[str, ...]:
    """The addresses of the scripts from ``hosts`` (or their subdomains: a library from a
    CDN writes no site's links) that may write links into the page. A script writes where
    it stands (``document.write``, in the body) or into an element the page leaves empty
    for it (``<div id="Contents"></div>``): on a page with no such element, the scripts of
    its head write nothing it shows (a Sphinx page's ``doctools.js``, ``jquery.js``)."""
    loaded = [script for script in root.iter("script") if script.get("src") and _runs(script)]
    if not loaded:
        return ()
    body = root.find("body")
    in_body = set(body.iter("script")) if body is not None else set()
    if any(script not in in_body for script in loaded) and not _has_placeholder(root):
        loaded = [script for script in loaded if script in in_body]
    found = []
    for script in loaded:
        url = link_url(script.get("src"), base_url, encoding)
        if url is None:
            continue
        parts = urlsplit(url)
        host = parts.hostname or ""
        if (
            parts.scheme in ("http", "https")
            and posixpath.splitext(parts.path)[1].lower() in (".js", ".mjs")
            and on_sites(host, hosts)
        ):
            found.append(url)
    return tuple(dict.fromkeys(found))


def _has_placeholder(root: etree._Element) -> bool:
    """Whether the page leaves a container with an ``id`` empty, for a script to fill."""
    return any(
        element.get("id") and len(element) == 0 and not (element.text or "").strip()
        for element in root.iter(*_CONTAINERS)
    )


class SiteScripts:
    """Which scripts the pages load are worth a fetch: the site's, which a seed or two pages
    load (its contents tree, its menus; not a page's own, rustdoc's
    ``implementors/…/trait.Try.js``), each once whatever query a page adds to its address
    (``nav.js?t=1001``), unless its name is barren: copies of it (``sidebar-items.js`` in
    every folder of a documentation generator, ``book.js`` in every book) wrote no link, or
    could not be had, :data:`BARREN_COPIES` times, and none wrote any."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._loads: dict[str, int] = {}
        self._barren: Counter[tuple[str, str]] = Counter()
        self._writing: set[tuple[str, str]] = set()

    def due(self, url: str, seed: bool) -> bool:
        """Count a page loading the script: whether it is due now (once: when a seed or the
        second page loads it)."""
        path = url.partition("?")[0]
        loads = self._loads.pop(path, 0)
        make_room(self._loads, self.size)
        self._loads[path] = max(loads, SHARED_BY - 1) + 1 if seed else loads + 1
        return loads < SHARED_BY <= self._loads[path]

    def is_barren(self, url: str) -> bool:
        """Whether the script's name has shown it writes nothing: not worth a fetch."""
        name = _name(url)
        return name not in self._writing and self._barren[name] >= BARREN_COPIES

    def record(self, url: str, wrote_links: bool) -> None:
        """What a fetched script (or one that could not be had) wrote, for its name."""
        name = _name(url)
        if wrote_links:
            self._writing.add(name)
        else:
            self._barren[name] += 1


def _name(url: str) -> tuple[str, str]:
    """A script's host and file name, its digits as one (``chunk-3f2a1.js``, ``v2/menu.js``)."""
    parts = urlsplit(url)
    return parts.netloc, _DIGITS.sub("0", posixpath.basename(parts.path))
