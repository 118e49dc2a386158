"""Addresses a fetched page names as its own (``<link rel="canonical">`` in its head, or a
``Link: <…>; rel="canonical"`` response header): not fetched again.

A site often serves one page at several addresses — with and without ``index.html``, with a
``?from=`` or ``?sort=`` its links add, on ``www.`` and on the bare host — and names one of
them in the page's head or in a header (the only place a PDF has, and one some servers add
to every page). Once the crawl has the page, a link to that address would only fetch it
again: the spider sends no such link, and a request for one that was queued before is
dropped as it leaves the frontier (:mod:`topicspider.fetchedelsewhere`). Only a canonical
with the page's own path (up to an index file) and page number (``?page=2``, ``?pn=2``,
``?start=20``) is believed: sites that name a list's first page as the canonical of every
later page would otherwise keep the crawl from the first page, and a canonical of another
path is as often a template's mistake as the truth. A page that names two different
addresses (a header and a ``<link>``, or two ``<link>`` elements, as a server rule and a
template, or a plugin and a theme, each add one) names none, as for Google: one of them is a
mistake and nothing tells which; believing the wrong one would keep the crawl from a page it
never fetched, believing neither costs one fetch at most.

Addresses are compared as one page's addresses, however a site writes them: ``A.CN`` and
``a.cn``, ``a.cn:80`` and ``a.cn``, ``a.cn`` and ``a.cn/``, ``%e8`` and ``%E8`` are the
same.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from urllib.parse import parse_qsl, urlsplit

from lxml import etree

from topicspider.sentlinks import make_room
from topicspider.urls import link_url

__all__ = [
    "DroppedParameters",
    "KnownCanonicals",
    "canonical_of",
    "link_header_canonicals",
]

#: Canonical addresses remembered; past that the oldest tenth is forgotten.
REMEMBERED = 100_000
#: Pages, at as many paths, that must leave the same query parameter out of the address they
#: name as their own before the crawl leaves it out of the site's links.
PARAMETER_EVIDENCE = 2
_LINKS = etree.XPath("/html/head/link[@rel and @href]")
_INDEX_FILE = re.compile(r"/(?:index|default)\.[a-z]+$", re.IGNORECASE)
#: Query keys that number the pages of a list (Discuz's ``page``, Baidu's ``pn``, WordPress's
#: ``paged``, the ``curPage`` and ``currentPage`` of Java sites, offsets), in lower case:
#: another value, or none, is another page of the list.
_PAGE_KEYS = frozenset(
    {
        "page",
        "p",
        "pg",
        "pn",
        "pageno",
        "page_no",
        "pagenum",
        "pageindex",
        "pagenumber",
        "page_num",
        "curpage",
        "currentpage",
        "paged",
        "start",
        "offset",
    }
)
_ORIGIN = re.compile(r"(https?://)([^/?#]*)(.*)", re.DOTALL)
_DEFAULT_PORTS = {"http://": ":80", "https://": ":443"}
_ESCAPE = re.compile(r"%[0-9a-f]{2}", re.IGNORECASE)
_LOWER_ESCAPE = re.compile(r"%(?:[a-f][0-9a-fA-F]|[0-9A-F][a-f])")
# RFC 8288: ``<target>`` then ``; name=value`` parameters, the value a token or a quoted
# string (one left open runs to the end of the header, as it would for any reader).
_LINK_TARGET = re.compile(r"\s*<([^>]*)>")
_LINK_PARAM = re.compile(r'\s*;\s*([^\s=;,]*)\s*(?:=\s*("(?:[^"\\]|\\.)*"?|[^\s;,]*))?')


def canonical_of(
    root: etree._Element,
    base_url: str,
    page_url: str,
    encoding: str,
    header_targets: Iterable[str] = (),
) -> str | None:
    """The address other than ``page_url`` the page names as its own in its head, or in
    its ``Link`` headers (``header_targets``, resolved against ``page_url``: a header
    knows no ``<base href>``), written as the crawl writes links
    (:func:`~topicspider.urls.link_url`); None if it names none, its own, one of another
    path, or several that differ."""
    named = [
        link_url(element.get("href"), base_url, encoding)
        for element in _LINKS(root)
        if "canonical" in element.get("rel").lower().split()
    ]
    named += [link_url(target, page_url, encoding) for target in header_targets]
    if not named or None in named or len({_address(url) for url in named}) > 1:
        return None
    url = named[0]
    if _address(url) == _address(page_url) or _place(url) != _place(page_url):
        return None
    return url


def link_header_canonicals(values: Iterable[bytes]) -> tuple[str, ...]:
    """The targets of the ``rel="canonical"`` links in a response's ``Link`` header values
    (RFC 8288: several links in a value, ``rel`` quoted or not, a list of relations), as
    written. What a malformed value holds is read as far as it can be; bytes that are not
    UTF-8 make a target no page has."""
    return tuple(
        target
        for value in values
        for target in _canonical_targets(value.decode("utf-8", "replace"))
    )


def _canonical_targets(header: str) -> Iterator[str]:
    """Each link is read from its ``<``, its parameters up to the first thing that is not
    one, then the rest skipped up to the next comma; a ``<`` left open is no link, a
    ``rel`` in single quotes is one. A link with an ``anchor`` is about another resource
    than the response."""
    position, last = 0, header.rfind(">")
    while position <= last:
        if target := _LINK_TARGET.match(header, position):
            position = target.end()
            parameters: dict[str, str] = {}
            while parameter := _LINK_PARAM.match(header, position):
                position = parameter.end()
                parameters.setdefault(parameter[1].lower(), parameter[2] or "")  # the first counts
            relations = parameters.get("rel", "").strip("\"'").lower().split()
            if "canonical" in relations and "anchor" not in parameters:
                yield target[1]
        comma = header.find(",", position)
        if comma < 0:
            return
        position = comma + 1


def _address(url: str) -> str:
    """The one form of the ways to write ``url``: host in lowercase, no default port,
    ``/`` for no path, percent-escapes in capitals. Run on each link a page sends: a match
    and a search, not a parse."""
    origin = _ORIGIN.match(url)
    if origin is None:  # not a web address: there is no other way to write it
        return url
    scheme, host, rest = origin.groups()
    host = _host(scheme, host)
    if not rest.startswith("/"):
        rest = f"/{rest}"
    if _LOWER_ESCAPE.search(rest):
        rest = _ESCAPE.sub(lambda escape: escape[0].upper(), rest)
    return f"{scheme}{host}{rest}"


def _host(scheme: str, host: str) -> str:
    """A host (and port) as :func:`_address` writes it: lowercase, no default port."""
    return host.lower().removesuffix(_DEFAULT_PORTS[scheme])


def _place(url: str) -> tuple[str, list[tuple[str, str]]]:
    """Where a page is in a site: its path, up to an index file, and its page number."""
    parts = urlsplit(_address(url))
    pages = sorted(
        (key.lower(), value)
        for key, value in parse_qsl(parts.query, keep_blank_values=True)
        if key.lower() in _PAGE_KEYS
    )
    return _INDEX_FILE.sub("/", parts.path), pages


class KnownCanonicals:
    """The last canonical addresses named by pages the crawl fetched at another address."""

    def __init__(self) -> None:
        self._urls: dict[str, None] = {}

    def __contains__(self, url: str) -> bool:
        # Asked for every link of every page: most sites name no canonical of another address.
        return bool(self._urls) and _address(url) in self._urls

    def add(self, url: str) -> None:
        address = _address(url)
        if address not in self._urls:
            make_room(self._urls, REMEMBERED)
            self._urls[address] = None


class DroppedParameters:
    """Query parameters a site's pages leave out of the address they name as their own: a
    portal's headline links carry a ``?from=index`` that each story's canonical drops.

    A parameter is a key with its value, and it is dropped from the site's links once pages
    at :data:`PARAMETER_EVIDENCE` different paths have dropped it: a template that names
    ``show.php`` the canonical of every ``show.php?id=…`` drops a different ``id`` at one
    path, and teaches nothing. A key is dropped with whatever value once as many of its
    values have been dropped, at as many paths: LibreOffice's help links each page with
    the module it is read from (``?DbPAR=WRITER``, ``CALC``, ``IMPRESS``, …), which changes
    nothing: learning each value alone, 12 of the 50 pages its printing topic fetched had
    one; with the key, 3.
    A ``lang=en`` that its pages drop (English is their default) is one value: ``lang=zh``
    is kept. Each page so fetched again costs a download; the crawl does not know whether
    a parameter changes a page until the pages say so, and never learns it from one page.
    A dropped entry without ``=`` is a key.
    """

    def __init__(self) -> None:
        #: The paths each (host, parameter) was dropped at, until it is learned.
        self._paths: dict[tuple[str, str], set[str]] = {}
        #: A path each value of a (host, key) was dropped at, until the key is learned.
        self._values: dict[tuple[str, str], dict[str, str]] = {}
        self._dropped: dict[str, set[str]] = {}

    def __setstate__(self, state: dict) -> None:
        # A JOBDIR saved before keys were learned.
        self.__dict__.update({"_values": {}, **state})

    def learn(self, url: str, canonical: str) -> None:
        """The page at ``url`` names ``canonical`` as its own: the parameters of ``url`` that
        ``canonical`` leaves out, on the same host and path, count once each. A page number
        (``page=2``) never does: a CMS that serves a list's first page for a number past
        its last says nothing of the lists that have that page."""
        page, named = urlsplit(_address(url)), urlsplit(_address(canonical))
        if (page.netloc, page.path) != (named.netloc, named.path):
            return
        parameters, kept = _parameters(page.query), _parameters(named.query)
        if not kept <= parameters:
            return
        dropped = self._dropped.get(page.netloc, ())
        for parameter in parameters - kept:
            name, _, value = parameter.partition("=")
            if parameter in dropped or name in dropped or name.lower() in _PAGE_KEYS:
                continue
            self._learn_value(page.netloc, name, value, page.path)
            key = (page.netloc, parameter)
            if key not in self._paths:
                make_room(self._paths, REMEMBERED)
            paths = self._paths.setdefault(key, set())
            paths.add(page.path)
            if len(paths) >= PARAMETER_EVIDENCE:
                self.drop(page.netloc, parameter)

    def _learn_value(self, host: str, name: str, value: str, path: str) -> None:
        key = (host, name)
        if key not in self._values:
            make_room(self._values, REMEMBERED)
        values = self._values.setdefault(key, {})
        values.setdefault(value, path)
        if len(values) >= PARAMETER_EVIDENCE and len(set(values.values())) >= PARAMETER_EVIDENCE:
            del self._values[key]
            self.drop(host, name)

    def drop(self, host: str, parameter: str) -> None:
        """Take ``parameter`` (``key=value``, or a key with any value) out of ``host``'s
        links from now on."""
        self._paths.pop((host, parameter), None)
        self._dropped.setdefault(host, set()).add(parameter)

    def learn_same(self, url: str, other: str) -> None:
        """The pages at ``url`` and ``other`` are one (near-duplicates; a site without
        canonical links): as if the one with more parameters named the other."""
        if _parameters(urlsplit(url).query) >= _parameters(urlsplit(other).query):
            self.learn(url, other)
        else:
            self.learn(other, url)

    def address(self, url: str) -> str:
        """``url`` without the parameters its site's pages were seen to drop."""
        if not self._dropped or "?" not in url:
            return url
        origin = _ORIGIN.match(url)
        if origin is None:
            return url
        scheme, host, rest = origin.groups()
        dropped = self._dropped.get(_host(scheme, host))
        if not dropped:
            return url
        path, _, query = rest.partition("?")
        query, hash_mark, fragment = query.partition("#")
        parameters = query.split("&")
        kept = [
            parameter
            for parameter in parameters
            if (written := _parameter(parameter)) not in dropped
            and written.partition("=")[0] not in dropped
        ]
        if len(kept) == len(parameters):
            return url
        query = "&".join(kept)
        return f"{scheme}{host}{path}{'?' if query else ''}{query}{hash_mark}{fragment}"


def _parameters(query: str) -> set[str]:
    return {_parameter(parameter) for parameter in query.split("&") if parameter}


def _parameter(parameter: str) -> str:
    """``key=value`` as one writes it whichever way a link does (escapes in capitals)."""
    if _LOWER_ESCAPE.search(parameter):
        return _ESCAPE.sub(lambda escape: escape[0].upper(), parameter)
    return parameter
