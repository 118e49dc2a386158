"""HTML → title, body text and links with their context.

Everything here takes plain values (an lxml tree, a string) so the scoring
code can be tested without a crawler.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import NamedTuple, Protocol

from lxml import etree
from w3lib.html import strip_html5_whitespace

from topicspider.urls import link_url

__all__ = ["LinkContext", "PageText", "RegionMemory", "SeenRegions", "extract_page", "parse_html"]


#: Elements whose text is a unit of meaning: a link's context is the text of its block.
BLOCK_TAGS = frozenset(
    [
        "p",
        "li",
        "td",
        "th",
        "dd",
        "dt",
        "div",
        "section",
        "article",
        "header",
        "footer",
        "nav",
        "aside",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "caption",
        "figcaption",
        "blockquote",
        "pre",
        "table",
        "tr",
        "ul",
        "ol",
        "dl",
        "body",
    ]
)
#: A navigation block whose anchors average at most this many characters is a menu
#: (首页 | 新闻 | 体育, Home | About); longer anchors are a table of contents, which is content.
MENU_ANCHOR_CHARS = 8
#: A navigation or side region outside the main content with links to this many other
#: pages is the site's table of contents, the same on every page (mdBook, Sphinx and
#: MkDocs sidebars, blog widgets). A shorter one (a page's own table of contents, a
#: breadcrumb, previous/next links) says where the page is: it stays in the text, though
#: its links are not what the page lists.
SIDEBAR_LINKS = 40
#: How many entries above a link in a nested table of contents count as its context.
TOC_LEVELS = 3
#: An element open this many times at once is nested without end (see :func:`parse_html`).
ENDLESS_NESTING = 100
#: How many link regions an analyzer remembers, to know them on other pages.
REMEMBERED_REGIONS = 100_000
_ROLE_REGIONS = etree.XPath("//div[@role='navigation' or @role='complementary']")
_IN_CONTENT = etree.XPath("ancestor::main | ancestor::article | ancestor::*[@role='main']")
_CONTENT = etree.XPath("//main | //article | //*[@role='main']")
#: The page's footer, as ARIA names it (``contentinfo``): an explicit ``role``, or a
#: ``<footer>`` not inside an article, an aside, the main content, a navigation region or a
#: section (HTML-AAM's implicit role).
_FOOTERS = etree.XPath(
    "//*[@role='contentinfo'] | //footer[not(ancestor::article or ancestor::aside"
    " or ancestor::main or ancestor::nav or ancestor::section)]"
)
_AWAY_LINKS = etree.XPath("count(.//a[@href and not(starts-with(normalize-space(@href), '#'))])")
#: A language code in an address: a path segment (``/en/``, ``/zh-cn/``), an extension
#: (``guide.zh.html``, Apache's ``guide.html.de``) or a query parameter (``?lang=fr``). The
#: codes (ISO 639-1, and cn, jp, kr, tw as sites use them) are grouped by first letter.
_URL_LANGUAGE = re.compile(
    r"[/.](?:a[fmrz]|b[egnrs]|c[ansy]|d[ae]|e[lnostu]|f[air]|g[alu]|h[eiruy]|i[dst]|j[ap]|"
    r"k[akmnory]|l[otv]|m[klnrsy]|n[belno]|p[alst]|r[ou]|s[iklqrvw]|t[aehlrw]|u[krz]|vi|zh)"
    r"(?:[-_][a-z]{2,4})?(?=[/.?#]|$)"
    r"|(?<=[?&])(?:lang|language|locale|hl)=[a-z]{2}(?:[-_][a-z]{2,4})?(?:&|$)",
    re.IGNORECASE,
)
#: The most characters a language code adds to an address (``&language=pt-br``, ``.zh-hant``).
_LANGUAGE_CODE_CHARS = 24
_HIDDEN_TEXT_TAGS = ("script", "style", "noscript", "template")
#: Blocks whose one link and its description are an entry of a list or a table: a term, a
#: cell, a list's item, a ``div`` of a grid (not a paragraph's link and the words around it).
_ENTRY_TAGS = frozenset({"dt", "td", "th", "li", "div"})
# Where a page points to other pages: links, image-map areas, and frames, which some
# sites (framesets, pages that embed their lists) load their content in.
_LINK_ATTRIBUTES = {"a": "href", "area": "href", "frame": "src", "iframe": "src"}
# A link that opens its page from a script, as the lists of older sites do
# (``href="javascript:void(0)" onclick="window.open('/news/1.html')"``): the page it opens.
_SCRIPT_TARGET = re.compile(
    r"(?:window\.open\s*\(|location\.(?:assign|replace)\s*\(|location(?:\.href)?\s*=)"
    r"\s*['\"]([^'\"]+)['\"]"
)
#: Elements whose text is not the page's text: the hidden ones, and titles (the page's own,
#: which a byte order mark of an included file or a ``div`` in the head puts in the body,
#: and an SVG image's, which still names an image link, as an ``alt`` does).
_INVISIBLE_TAGS = frozenset({*_HIDDEN_TEXT_TAGS, "title"})
_VISIBLE_TEXT = etree.XPath(
    f".//text()[{' and '.join(f'not(ancestor::{tag})' for tag in _HIDDEN_TEXT_TAGS)}]"
)
_SPACES = re.compile(r"\s+")
_DOCUMENT_END = re.compile(rb"</(?:body|html)\s*>", re.IGNORECASE)
#: The marks of a text cut short, at its end: three dots or more, or an ellipsis.
_ELLIPSIS = ".…⋯"
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


@dataclass(frozen=True)
class LinkContext:
    url: str
    anchor: str
    context: str
    #: Found only in blocks whose link-text ratio exceeds the noise ratio (menus, link lists).
    navigation: bool = False
    #: The page in another language: marked so (``hreflang``), or one of two or more links
    #: to the page's own address with another language code (a language switcher).
    translation: bool = False
    #: The heading of the group of links it stands in on an index page (see
    #: :func:`_under_headings`); not in ``context``, so that a heading which says nothing of
    #: the topic does not thin out what the link itself says.
    heading: str = ""


@dataclass(frozen=True)
class PageText:
    title: str
    body: str
    links: dict[str, LinkContext]
    #: The share of the body's text that is link text, or describes a link as an entry of an
    #: annotated list (``QUrl``: "Convenient interface for working with URLs"): near 1 on
    #: tables of contents.
    link_share: float = 0.0
    #: What a copy of the page in other surroundings keeps (see :func:`extract_page`).
    main: str = ""
    #: The links found only in regions every page of the site repeats (menus, sidebar tables
    #: of contents, link regions another page had too) or as the next, previous, up or
    #: contents page of a sequence (``rel``, access keys): where the page sits, not what it
    #: lists.
    site_wide_links: frozenset[str] = frozenset()


def parse_html(markup: str | bytes) -> etree._Element:
    """An lxml document; markup with no element at all (``</a>``) gives an empty one.

    Plain lxml elements, not ``lxml.html``'s: those look up their Python class each
    time the walks below visit an element, a tenth of a page's analysis. A string is
    parsed as the text it is (any declared encoding ignored); bytes as the document says.
    libxml2 stops reading a page nested deeper than 2048 elements, where browsers go on:
    such a page is read again without the tags of the elements nested without end. It
    also stops at ``</html>``, where browsers put what follows in the body (a header
    included as a whole document, then the article): the end tags of the body and the
    document are left out, as they close at the end anyway.
    """
    encoding = None
    if isinstance(markup, str):
        markup = markup.strip().replace("\x00", "").encode()
        encoding = "utf-8"
    markup = _DOCUMENT_END.sub(b" ", markup)
    root, too_deep = _parse(markup, encoding)
    while too_deep and (nested := _nested_without_end(root)):
        markup, stripped = _tags(nested).subn(b" ", markup)
        if not stripped:
            break
        root, too_deep = _parse(markup, encoding)
    return root if root is not None else _parse(b"<html></html>", encoding)[0]


def _parse(markup: bytes, encoding: str | None) -> tuple[etree._Element | None, bool]:
    """The document, and whether it was too deep to be read to its end."""
    parser = etree.HTMLParser(encoding=encoding, huge_tree=True)
    root = etree.fromstring(markup, parser) if markup.strip() else None
    error = parser.error_log.last_error
    return root, error is not None and "Excessive depth" in error.message


def _nested_without_end(root: etree._Element) -> set[str]:
    """The names of the elements that were open :data:`ENDLESS_NESTING` times at once where
    the parser stopped (a ``<font>`` opened on every line and never closed): the elements
    open then are the last child of the last child... of the root."""
    open_elements: Counter[str] = Counter()
    node = root
    while len(node):
        node = node[-1]
        open_elements[node.tag] += 1
    return {name for name, count in open_elements.items() if count >= ENDLESS_NESTING}


def _tags(names: Iterable[str]) -> re.Pattern[bytes]:
    """The start and end tags of these elements."""
    alternatives = b"|".join(re.escape(name.encode()) for name in names)
    # Up to the next "<" at most: to the next ">", a page of tags never closed took minutes.
    return re.compile(rb"</?(?:%s)(?=[\s/>])[^<>]*>" % alternatives, re.IGNORECASE)


class _VisibleText:
    """The visible text of a page's elements. Most elements neither hold nor lie inside a
    script, style, noscript or template element: their text is all of their text
    (``itertext``), and only the few that do need the XPath that leaves those elements'
    text out."""

    def __init__(self, root: etree._Element) -> None:
        self.inside: set[etree._Element] = set()
        self.around: set[etree._Element] = set()
        for hidden in root.iter(*_HIDDEN_TEXT_TAGS):
            self.inside.update(hidden.iter())
            self.around.update(hidden.iterancestors())

    def __call__(self, element: etree._Element) -> str:
        if element in self.inside:
            return ""
        parts = _VISIBLE_TEXT(element) if element in self.around else element.itertext()
        return _SPACES.sub(" ", " ".join(parts)).strip()


def _href(anchor: etree._Element) -> str | None:
    """Where a link, area or frame points (a link in an SVG image may say ``xlink:href``); for
    a link whose ``href`` is a script or ``#``, the page its script opens, if it says."""
    href = anchor.get(_LINK_ATTRIBUTES[anchor.tag])
    if href is None and anchor.tag == "a":
        href = anchor.get("xlink:href")
    scripted = not href or href.strip() == "#" or href.lstrip()[:11].lower() == "javascript:"
    if anchor.tag != "a" or not scripted:
        return href
    found = _SCRIPT_TARGET.search(f"{href or ''} {anchor.get('onclick', '')}")
    return found.group(1) if found else href


def _link_text(anchor: etree._Element, visible: str) -> str:
    """What a link says: its text; its ``title`` when the text is the start of it (a list
    that cuts its headlines short, ``国足世预赛…`` for ``国足世预赛战平对手``, as Chinese news
    sites' lists do; a module's name with its synopsis), or when it shows no text; else
    its image's ``alt``."""
    title = _SPACES.sub(" ", anchor.get("title", "")).strip()
    shown = _without_ellipsis(visible)
    if title and len(shown) < len(title) and title.startswith(shown):
        return title
    return visible or _image_text(anchor)


def _without_ellipsis(text: str) -> str:
    """``text`` without the ellipsis that cuts it short (``国足世预赛…``, ``Football...``);
    one or two full stops end a sentence. Stripped, not matched: a regular expression took
    seconds over a link of thousands of dots, and the crawl waited."""
    kept = text.rstrip(_ELLIPSIS)
    cut = text[len(kept) :]
    if not cut or (len(cut) < 3 and not cut.strip(".")):
        return text
    return kept.rstrip()


def _image_text(anchor: etree._Element) -> str:
    """What an image link says: its image's ``alt`` (a banner's "足球专题"), or an ``area``'s."""
    if anchor.tag == "area":
        return anchor.get("alt", "")
    return next((alt for image in anchor.iter("img") if (alt := image.get("alt"))), "")


def _block_of(element: etree._Element) -> etree._Element:
    for ancestor in element.iterancestors():
        if ancestor.tag in BLOCK_TAGS:
            return ancestor
    return element


def _around(block_text: str, link: _Found, text_of: _VisibleText, chars: int) -> str:
    """The text a link shows with up to ``chars`` characters of its block on each side. A
    link that shows no text (an image) or text its block shows more than once (``[*]``,
    ``more``) is found by where it stands, not by its text."""
    shown = link.shown
    position = block_text.find(shown) if shown else -1
    if position >= 0 and block_text.find(shown, position + 1) < 0:
        start = max(0, position - chars)
        return block_text[start : position + len(shown) + chars]
    before, after = _beside(link.block, link.anchor, text_of, chars)
    return " ".join(
        part for part in (before[-chars:] if chars else "", shown, after[:chars]) if part
    )


#: The most elements read on each side of a link for its context: a wall of image links
#: shows no words to find.
_MOST_ELEMENTS = 20


def _outwards(
    block: etree._Element,
    anchor: etree._Element,
    text_of: _VisibleText,
    *,
    forwards: bool,
    skip: frozenset = frozenset(),
) -> Iterator[str]:
    """The visible text of ``block`` after ``anchor`` (``forwards``) or before it, nearest
    first, in pieces; elements named in ``skip`` show none."""
    if forwards:
        yield anchor.tail or ""
    node = anchor
    while node is not block and (parent := node.getparent()) is not None:
        for sibling in node.itersiblings(preceding=not forwards):
            visible = isinstance(sibling.tag, str) and sibling.tag not in skip
            shown, tail = text_of(sibling) if visible else "", sibling.tail or ""
            yield from (shown, tail) if forwards else (tail, shown)
        if not forwards:
            yield parent.text or ""
        elif parent is not block:
            yield parent.tail or ""
        node = parent


def _beside(
    block: etree._Element,
    anchor: etree._Element,
    text_of: _VisibleText,
    chars: int,
    skip: frozenset = frozenset(),
) -> tuple[str, str]:
    """About ``chars`` characters of the visible text of ``block`` before ``anchor`` and
    after it (:func:`_outwards`, :func:`_read`)."""
    before = _read(
        _outwards(block, anchor, text_of, forwards=False, skip=skip), chars, backwards=True
    )
    after = _read(_outwards(block, anchor, text_of, forwards=True, skip=skip), chars)
    return before, after


def _read(pieces: Iterator[str], chars: int, *, backwards: bool = False) -> str:
    """The first pieces of text, put in reading order, until they hold ``chars`` characters
    that are not spaces or the text of ``_MOST_ELEMENTS`` elements is read."""
    taken: list[str] = []
    size = 0
    for piece in itertools.islice(pieces, 2 * _MOST_ELEMENTS):
        taken.append(piece)
        size += len(piece.strip())
        if size >= chars:
            break
    if backwards:
        taken.reverse()
    return _SPACES.sub(" ", " ".join(taken)).strip()


def _entries_above(items: etree._Element, text_of: _VisibleText) -> str:
    """The titles of the entries a nested list of a table of contents sits under, outermost
    first (``li > ul``, or DocBook's ``dt`` followed by ``dd > dl``): a section is about what
    its chapter is about, though its own title may not say so."""
    titles: list[str] = []
    node: etree._Element | None = items
    while node is not None and len(titles) < TOC_LEVELS:
        parent = node.getparent()
        if parent is None:
            break
        if parent.tag == "li":
            parts = [parent.text or ""]
            for child in parent:
                if child is node:
                    break
                parts += [text_of(child), child.tail or ""]
            titles.append(" ".join(parts))
        elif parent.tag == "dd" and (term := parent.getprevious()) is not None and term.tag == "dt":
            titles.append(text_of(term))
        else:
            break
        node = parent.getparent()
    return _SPACES.sub(" ", " ".join(reversed(titles))).strip()


def _outermost_list(items: etree._Element) -> etree._Element:
    """The list a (nested) list of a table of contents is part of: up ``li > ul`` and
    ``dd > dl`` as :func:`_entries_above` walks."""
    node = items
    while (parent := node.getparent()) is not None and parent.tag in ("li", "dd"):
        if (outer := parent.getparent()) is None:
            break
        node = outer
    return node


#: The headings a list of links may stand under: a heading element, or a paragraph that is
#: all bold (``<p><strong>Content inspection</strong></p>``), as hand-written index pages have.
_HEADING_TAGS = frozenset(["h1", "h2", "h3", "h4", "h5", "h6", "caption"])
#: The headings of a page's sections, by rank; ``h1`` is the page's title.
_RANKS = {"h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BOLD_TAGS = frozenset(["strong", "b"])
_LIST_TAGS = frozenset(["ul", "ol", "dl"])
#: A label longer than this is a paragraph, not a heading.
_HEADING_CHARS = 80


#: Elements that only wrap a list or a heading (asciidoc's ``div.dlist``, a portal's
#: ``<div class="hd"><h2>足球</h2></div><div class="bd"><ul>…``).
_WRAPPERS = frozenset(["div", "section", "header"])


def _heading_of(before: etree._Element | None, text_of: _VisibleText) -> str:
    """The heading right before a list of links (``<h3>Lookup tables</h3><ul>…``), a link
    to the section it heads or not (a portal's ``<h2><a>足球</a></h2><ul>…``), either of
    them alone in a wrapping ``div``, given the element before the list
    (:func:`_label_before`). Nothing if that is no heading, or too long to be one; a bold
    paragraph with a link in it is a line of text, not a heading."""
    if before is None:
        return ""
    text = text_of(before)
    if not text or len(text) > _HEADING_CHARS:
        return ""
    if before.tag in _HEADING_TAGS:
        return text
    if before.tag not in ("p", "div") or before.find(".//a[@href]") is not None:
        return ""
    bold = _only_child(before)
    return text if bold is not None and bold.tag in _BOLD_TAGS and text_of(bold) == text else ""


def _sections(root: etree._Element, text_of: _VisibleText) -> dict[etree._Element, list[str]]:
    """Each ``h3``-``h6`` of the page with the headings of the sections it stands in,
    outermost first; the page's title (``h1``) is no section's."""
    sections: dict[etree._Element, list[str]] = {}
    above: list[tuple[int, str]] = []  # the ranks and headings of the sections open
    for heading in root.iter(*_RANKS):
        rank = _RANKS[heading.tag]
        while above and above[-1][0] >= rank:
            above.pop()
        if above:
            sections[heading] = [text for _, text in above]
        text = text_of(heading)
        if text and len(text) <= _HEADING_CHARS:
            above.append((rank, text))
    return sections


def _label_before(items: etree._Element) -> etree._Element | None:
    """The element right before a list, or before the ``div`` it is alone in; the heading
    in it if that is a ``div`` of one heading."""
    if items.tag not in _LIST_TAGS:
        return None
    before = _previous(items)
    wrapper = items.getparent()
    if before is None and wrapper is not None and wrapper.tag in _WRAPPERS:
        before = _previous(wrapper) if _only_child(wrapper) is items else None
    if before is not None and before.tag in _WRAPPERS:
        heading = _only_child(before)
        before = heading if heading is not None and heading.tag in _HEADING_TAGS else before
    return before


def _previous(element: etree._Element) -> etree._Element | None:
    """The element before ``element``, comments passed over."""
    before = element.getprevious()
    while before is not None and not isinstance(before.tag, str):
        before = before.getprevious()
    return before


def _only_child(element: etree._Element) -> etree._Element | None:
    """``element``'s one child element, if it has one and no text of its own around it."""
    children = [child for child in element if isinstance(child.tag, str)]
    if len(children) != 1 or (element.text or "").strip() or (children[0].tail or "").strip():
        return None
    return children[0]


def _description(
    block: etree._Element,
    block_text: str,
    link: _Found,
    text_of: _VisibleText,
    noise_ratio: float,
    longest: int,
) -> str:
    """The text that says what the one link of a ``dt``, a table cell or another block is
    about: the ``dd`` elements after the term (a command list: ``<dt>git-svn</dt><dd>
    Bidirectional operation…</dd>``), the cells after the cell in its row, each up to
    ``longest`` characters (a longer one is a page's content column beside a layout table's
    link, not a description), or the block's own words beside the link, not those of a list
    nested in it (an index's entry: ``<li><a>ls</a>(1) - 列出目录内容``), if they have a
    letter. Those mostly link text themselves (a table of contents nested under its entry)
    are left out."""
    if block.tag == "dt":
        siblings = itertools.takewhile(lambda dd: dd.tag == "dd", block.itersiblings())
        texts = [(dd, text_of(dd)) for dd in siblings]
    elif block.tag in ("td", "th"):
        cells = [cell for cell in block.itersiblings() if cell.tag in ("td", "th")]
        texts = [(cell, text) for cell in cells if len(text := text_of(cell)) <= longest]
    else:
        words = _beside_link(block, block_text, link, text_of, longest)
        if not words and (cell := _cell_of(block)) is not None:
            return _description(cell, text_of(cell), link, text_of, noise_ratio, longest)
        if not words and block.tag == "div":
            # A grid of ``div`` cells (Javadoc's summary tables: ``<div class="col-first">
            # <a>Authenticator</a></div><div class="col-last">The class Authenticator
            # represents…</div>``): the link's cell is described by the next one.
            following = next((el for el in block.itersiblings() if isinstance(el.tag, str)), None)
            if (
                following is not None
                and following.tag == "div"
                and len(text := text_of(following)) <= longest
                and _mostly_words(following, text, text_of, noise_ratio)
            ):
                words = text
        described = len(words) <= longest and any(char.isalpha() for char in words)
        return words if described else ""
    return " ".join(
        text for sibling, text in texts if _mostly_words(sibling, text, text_of, noise_ratio)
    )


def _mostly_words(
    element: etree._Element, text: str, text_of: _VisibleText, noise_ratio: float
) -> bool:
    """Whether ``text``, ``element``'s, says something beside its links: no more than
    ``noise_ratio`` of it link text (not a table of contents nested under an entry)."""
    linked = sum(len(text_of(anchor)) for anchor in element.iter("a") if anchor.get("href"))
    return bool(text) and linked <= noise_ratio * len(text)


def _cell_of(block: etree._Element) -> etree._Element | None:
    """The term or table cell a block of one link stands in, a few levels up, if the link
    is the cell's only one: a reference's ``<td><div><div><a>fread</a></div></div></td>``
    is described by the row's other cells as a link right in the cell is. A list's item is
    its list's entry."""
    if block.tag == "li":
        return None
    for ancestor in itertools.islice(block.iterancestors(), _CELL_LEVELS):
        if ancestor.tag in ("dt", "td", "th"):
            # Counted to the second: a layout table's cell may hold the whole page.
            away = (anchor for anchor in ancestor.iter("a") if _leads_away(anchor))
            return ancestor if len(list(itertools.islice(away, 2))) == 1 else None
    return None


def _leads_away(anchor: etree._Element) -> bool:
    """Whether ``anchor`` links another page, not a place in this one (as ``_AWAY_LINKS``)."""
    href = anchor.get("href")
    return href is not None and not href.strip().startswith("#")


def _beside_link(
    block: etree._Element, block_text: str, link: _Found, text_of: _VisibleText, longest: int
) -> str:
    """The visible words of a block of one link (``block_text``) other than the link's and
    a list's nested in it, up to a little over ``longest`` characters."""
    if len(block_text) <= len(link.shown) + 1:  # the link alone: most entries of a contents list
        return ""
    # Lists nested in an entry are entries of their own, not words of it.
    before, after = _beside(block, link.anchor, text_of, longest + 1, _LIST_TAGS)
    return " ".join(part for part in (before, after) if part)


def _line_of(
    block: etree._Element, anchor: etree._Element, text_of: _VisibleText, most: int
) -> str:
    """The words on a link's line of preformatted text, its own left out, up to ``most``
    characters on each side."""
    before = _to_line_end(_outwards(block, anchor, text_of, forwards=False), most, backwards=True)
    after = _to_line_end(_outwards(block, anchor, text_of, forwards=True), most)
    return _SPACES.sub(" ", f"{before} {after}").strip()


def _to_line_end(pieces: Iterator[str], most: int, *, backwards: bool = False) -> str:
    """The first pieces of text, in reading order, up to the first line break or ``most``
    characters."""
    taken: list[str] = []
    size = 0
    for piece in itertools.islice(pieces, 2 * _MOST_ELEMENTS):
        line = piece.rpartition("\n")[2] if backwards else piece.partition("\n")[0]
        taken.append(line)
        size += len(line)
        if line != piece or size >= most:
            break
    if backwards:
        taken.reverse()
    text = "".join(taken)
    return text[-most:] if backwards else text[:most]


def _language(tag: str | None) -> str:
    """The primary language of a language tag (``zh-CN`` → ``zh``), or ''."""
    return (tag or "").strip().split("-", 1)[0].split("_", 1)[0].lower()


@functools.lru_cache(maxsize=1 << 16)
def _unlocalized(url: str) -> str:
    return _URL_LANGUAGE.sub("", url).rstrip("?&")


def _language_variants(urls: Iterable[str], page_url: str) -> set[str]:
    """The addresses that are the page's own with another language code: a language
    switcher, when the page links to two or more of them (one alone may be a section
    named like a language code: ``/it/`` for IT). An address without a code is not one:
    its language is the site's default, which the address does not tell."""
    own = _unlocalized(page_url)
    variants = {
        url
        for url in urls
        if url != page_url
        and abs(len(url) - len(page_url)) <= _LANGUAGE_CODE_CHARS
        and (bare := _unlocalized(url)) == own
        and bare != url
    }
    return variants if len(variants) >= 2 else set()


#: How far above a block of one link its table cell or term may be (cppreference: two).
_CELL_LEVELS = 3

#: Link types (HTML 4's, and the older ones texinfo still writes) of a page's
#: neighbours in a sequence of pages: a chapter's "Next: ..." is no entry of its contents.
_SEQUENCE_RELS = frozenset(
    {"next", "prev", "previous", "up", "first", "last", "start", "contents", "toc", "index", "home"}
)
#: The access keys DocBook, Sphinx and texinfo give the next, previous, up and home links.
_SEQUENCE_KEYS = frozenset({"n", "p", "u", "h"})


class _Found(NamedTuple):
    """A link as found: its URL, what it says (see :func:`_link_text`) and the text it
    shows, the block it is in, whether the page marks it as a translation, the entries its
    list sits under (a tuple: pages have thousands), whether its ``rel`` or access key
    makes it a step through a sequence of pages, and its element (to find the words where
    it stands)."""

    url: str
    text: str
    shown: str
    block: etree._Element
    marked_translation: bool
    above: str
    sequence: bool
    anchor: etree._Element
    heading: str = ""


class _LinkBlocks:
    """Per block, the links in it that the reader sees (not frames): their characters,
    their number, and of those to other pages how many, their characters and the sum of
    their hashes."""

    def __init__(self) -> None:
        self.chars: Counter[etree._Element] = Counter()
        self.counts: Counter[etree._Element] = Counter()
        self.away: Counter[etree._Element] = Counter()
        self.away_chars: Counter[etree._Element] = Counter()
        self.away_sum: Counter[etree._Element] = Counter()

    def add(self, block: etree._Element, visible: str, found: _Found, away: bool) -> None:
        self.chars[block] += len(visible)
        self.counts[block] += 1
        if away:
            self.away[block] += 1
            self.away_chars[block] += len(visible)
            self.away_sum[block] += hash((found.url, found.text))


def _links(
    root: etree._Element,
    base_url: str,
    page_url: str,
    encoding: str,
    context_chars: int,
    noise_ratio: float,
    memory: SeenRegions | None,
) -> tuple[list[LinkContext], set[etree._Element], set[etree._Element], int, frozenset[str]]:
    """Every link with its context; the regions every page of the site repeats, menus
    (blocks of short links and little else), sidebar tables of contents and, with a
    ``memory``, link regions and footers another page had too; the blocks that are mostly
    links to other pages; how many characters of link text (an annotated list's descriptions
    counted as their links') lie outside the repeated regions; and the links found only
    inside them or as steps through a sequence of pages."""
    text_of = _VisibleText(root)
    found, blocks, urls = _find_links(root, base_url, encoding, text_of)
    own_url = link_url(page_url, page_url, encoding) or page_url
    variants = _language_variants(filter(None, urls), own_url)
    links: list[LinkContext] = []
    menus: set[etree._Element] = set()
    navigation: set[etree._Element] = set()
    listings: set[etree._Element] = set()
    block_texts: dict[etree._Element, str] = {}
    descriptions: dict[etree._Element, str] = {}
    # How many words describe a block's one link (its row's other cells, its ``dd``): an
    # annotated list's entry is its link and its description, both list text.
    described: dict[etree._Element, int] = {}
    for link in found:
        block = link.block
        if block not in block_texts:
            block_texts[block] = text_of(block)
        block_text = block_texts[block]
        one = blocks.counts[block] == 1
        # A block that is mostly link text is navigation: its text says where the
        # site goes, not what this link is about.
        if blocks.chars[block] > noise_ratio * len(block_text):
            navigation.add(block)
            # Mostly links to other pages (related stories, a hot list), unless in the
            # content the page marks as its own (a chapter's table of contents).
            if blocks.away_chars[block] > noise_ratio * len(block_text) and not _IN_CONTENT(block):
                listings.add(block)
            # A term's link (``dt``), a row's first cell (``td``) or an entry's name is
            # most of its block, and what the link is about is said beside it: the
            # definition, the next cells, the rest of the entry. A frame in the block
            # shows no link text and is not its one link.
            framed = link.anchor.tag in ("frame", "iframe")
            if framed:
                description = ""
            elif block.tag == "pre" and not one:
                # A plain-text index (``|ft_rust.txt|  Filetype plugin for Rust``) says what
                # each link is about on its line.
                description = _line_of(block, link.anchor, text_of, 2 * context_chars)
            else:
                if block not in descriptions:
                    longest = 4 * context_chars
                    descriptions[block] = (
                        _description(block, block_text, link, text_of, noise_ratio, longest)
                        if one
                        else ""
                    )
                description = descriptions[block]
            # Links right in the body (an old list page's, one a line) or in preformatted
            # text (a plain-text page's) make no menu: left out, the body would take the
            # whole page with it.
            short = blocks.chars[block] <= MENU_ANCHOR_CHARS * blocks.counts[block]
            if description and one and (block.tag in _ENTRY_TAGS or _cell_of(block) is not None):
                # An entry with its description (``QUrl``: "Convenient interface for
                # working with URLs") is an index's, not a menu's.
                short = False
                described[block] = len(description)
            if short and block.tag not in ("body", "pre"):
                menus.add(block)
            context, is_navigation = link.text, True
            if description:
                context = f"{link.text} {description[: 2 * context_chars]}"
        else:
            is_navigation = False
            if block.tag == "pre":
                # Preformatted text is broken where its author broke it: the next line (a
                # help page's header, another paragraph) is not about the link.
                context = f"{link.text} {_line_of(block, link.anchor, text_of, context_chars)}"
            elif one and len(block_text) <= 4 * context_chars:
                # A block of one link is about it to its end: an entry and its description,
                # ``GIO Reference Manual: a virtual file system API, streams, networking,
                # settings, D-Bus and application support``. An image alone says its ``alt``.
                context = block_text or link.text
            else:
                # A block with no text (an image link alone in it): the link's words are
                # its context.
                context = _around(block_text, link, text_of, context_chars) or link.text
        if link.above:
            context = f"{link.above} {context}"
        translation = link.marked_translation or link.url in variants
        links.append(
            LinkContext(link.url, link.text, context, is_navigation, translation, link.heading)
        )
    landmarks = _landmarks(root)
    # Those that link to many pages are a site's table of contents (see SIDEBAR_LINKS).
    site_wide = menus | {region for region in landmarks if _AWAY_LINKS(region) >= SIDEBAR_LINKS}
    if memory is not None:
        site_wide |= _repeated(root, navigation, blocks.away, blocks.away_sum, memory)
        site_wide |= _repeated_footers(root, text_of, memory)
    inside = {node for region in site_wide for node in region.iter()}
    outside = sum(
        chars
        for tally in (blocks.chars, described)
        for block, chars in tally.items()
        if block not in inside
    )
    # What the page itself lists: not the site's navigation, however few pages it links
    # (a Read the Docs sidebar on a chapter page: the chapters, and its own sections).
    navigating = {node for region in landmarks for node in region.iter()}
    entries = {
        link.url
        for link in found
        if link.block not in inside and link.anchor not in navigating and not link.sequence
    }
    return links, site_wide, listings, outside, frozenset({link.url for link in found} - entries)


def _find_links(
    root: etree._Element, base_url: str, encoding: str, text_of: _VisibleText
) -> tuple[list[_Found], _LinkBlocks, Iterable[str | None]]:
    """The page's links in page order, the tallies of the blocks they are in, and the
    URLs of all of them."""
    language = _language(root.get("lang") or root.get(_XML_LANG))
    found: list[_Found] = []
    blocks = _LinkBlocks()
    # A page links to the same address many times (its own sections, above all: a
    # third of the Python docs' links): the fragment does not change where it goes.
    urls: dict[str, str | None] = {}
    headings: dict[etree._Element, str] = {}
    # A template's markup is for scripts to fill in (``/news/{{id}}.html``), never followed.
    inert = {
        link for template in root.iter("template") for link in template.iter(*_LINK_ATTRIBUTES)
    }
    for anchor in root.iter(*_LINK_ATTRIBUTES):
        href = _href(anchor)
        if not href or anchor in inert:
            continue
        target = strip_html5_whitespace(href).split("#", 1)[0]
        if target not in urls:
            urls[target] = link_url(target, base_url, encoding)
        url = urls[target]
        if not url:
            continue
        visible = text_of(anchor)
        block = _block_of(anchor)
        target_language = _language(anchor.get("hreflang"))
        above = ""
        if block.tag in ("li", "dt") and (items := block.getparent()) is not None:
            if items not in headings:
                headings[items] = _entries_above(items, text_of)
            above = headings[items]
        link = _Found(
            url,
            _link_text(anchor, visible),
            visible,
            block,
            bool(language and target_language and target_language != language),
            above,
            anchor.get("accesskey", "").strip().lower() in _SEQUENCE_KEYS
            or not _SEQUENCE_RELS.isdisjoint(anchor.get("rel", "").lower().split()),
            anchor,
        )
        found.append(link)
        if anchor.tag not in ("frame", "iframe"):  # no link text on the page: in no menu
            blocks.add(block, visible, link, away=bool(target))
    return _under_headings(root, found, text_of), blocks, urls.values()


def _under_headings(
    root: etree._Element, found: list[_Found], text_of: _VisibleText
) -> list[_Found]:
    """``found``, each link of a list that stands under a heading with that heading and
    those of the sections above it: an index page's groups (Postfix's ``Content
    inspection``: the content filter, milter and backscatter pages; git's ``Low-level
    commands (plumbing)`` over ``Manipulation commands``) are about what their headings
    name, though their entries may not say so. Only where headings tell two lists of the
    page apart: one ``Table of Contents`` over a page's only list says nothing of any
    entry."""
    parents = [link.block.getparent() if link.block.tag in ("li", "dt") else None for link in found]
    lists = {items: _outermost_list(items) for items in dict.fromkeys(parents) if items is not None}
    outermost = set(lists.values())
    if len(outermost) < 2:
        return found
    labels = {items: _label_before(items) for items in outermost}
    headings = {items: _heading_of(label, text_of) for items, label in labels.items()}
    if len({heading for heading in headings.values() if heading}) < 2:
        return found
    sections = _sections(root, text_of)
    headings = {
        items: " ".join([*sections.get(labels[items], ()), heading]) if heading else ""
        for items, heading in headings.items()
    }
    headed = []
    for link, items in zip(found, parents, strict=True):
        if items is not None and (heading := headings[lists[items]]):
            link = link._replace(heading=heading)
        headed.append(link)
    return headed


class SeenRegions(Protocol):
    def seen(self, regions: list[tuple[int, int]]) -> list[bool]:
        """Whether each of a page's large link regions, or footers, is to be left out as a
        sidebar or a footer every page has."""


class RegionMemory:
    """The large link regions of the pages analyzed so far, by the links they hold, and
    their footers, by their text.

    A sidebar marked up as a plain ``div`` (Texinfo's, most templates of Chinese sites)
    cannot be told from the page's own table of contents, but it is the same on every
    page: the second page that shows it gives it away. Bounded by
    :data:`REMEMBERED_REGIONS`; once full, it still knows the regions it holds.
    """

    def __init__(self, capacity: int = REMEMBERED_REGIONS) -> None:
        self.capacity = capacity
        self._regions: set[tuple[int, int]] = set()

    def seen(self, regions: list[tuple[int, int]]) -> list[bool]:
        """Whether each region was on a page before this one; then remembers them."""
        known = [region in self._regions for region in regions]
        for region in regions:
            if len(self._regions) >= self.capacity:
                break
            self._regions.add(region)
        return known


def _repeated(
    root: etree._Element,
    navigation: set[etree._Element],
    away: Counter[etree._Element],
    away_sum: Counter[etree._Element],
    memory: SeenRegions,
) -> set[etree._Element]:
    """The link blocks outside the page's marked content (``<main>``, ``<article>``) in the
    regions whose navigation blocks link to :data:`SIDEBAR_LINKS` other pages, with the
    same anchors, as a region of another page did (see :class:`RegionMemory`). Summed up
    the tree: walking every region's text would cost a tenth of a page's analysis.

    The blocks, not the regions, and not in the content: a chapter's own table of contents,
    which the site's contents page nests whole, is the chapter's, and its smallest wrapper
    may be the chapter's whole text."""
    counts: Counter[etree._Element] = Counter()
    sums: Counter[etree._Element] = Counter()
    for block in navigation:
        if links := away[block]:
            for region in (block, *block.iterancestors()):
                counts[region] += links
                sums[region] += away_sum[block]
    regions = [
        region
        for region, links in counts.items()
        if links >= SIDEBAR_LINKS and region.tag not in ("html", "body")
    ]
    keys = [(counts[region], sums[region] & 0xFFFF_FFFF_FFFF_FFFF) for region in regions]
    known = {region for region, seen in zip(regions, memory.seen(keys), strict=True) if seen}
    if not known:
        return set()
    content = set(_CONTENT(root))
    # Whether an element is in a known region, and whether in the content, from the
    # elements up to the first whose answer is known: each ancestor is asked once.
    blocks = navigation.union(away)
    placed: dict[etree._Element | None, tuple[bool, bool]] = {None: (False, False)}
    for block in blocks:
        climbed: list[etree._Element] = []
        parent: etree._Element | None = block
        while parent not in placed:
            climbed.append(parent)
            parent = parent.getparent()
        in_known, in_content = placed[parent]
        for element in reversed(climbed):
            in_known = in_known or element in known
            in_content = in_content or element in content
            placed[element] = (in_known, in_content)
    return {block for block in blocks if placed[block] == (True, False)}


def _repeated_footers(
    root: etree._Element, text_of: _VisibleText, memory: SeenRegions
) -> set[etree._Element]:
    """The page's footers whose text another page's footer had: the authors and license
    yelp writes under every page of a guide (two thirds of its text, which a script keeps
    folded). A footer of the page's own stays: ikiwiki's names the pages that link to it."""
    texts = {footer: text for footer in _FOOTERS(root) if (text := text_of(footer))}
    # By length and hash of its text; the length negative, never a link region's count.
    keys = [(-len(text), hash(text) & 0xFFFF_FFFF_FFFF_FFFF) for text in texts.values()]
    return {footer for footer, seen in zip(texts, memory.seen(keys), strict=True) if seen}


def _landmarks(root: etree._Element) -> list[etree._Element]:
    """The page's navigation and side regions (``<nav>``, ``<aside>``, a ``div`` with the
    ARIA role ``navigation`` or ``complementary``) outside its main content: an aside inside
    ``<main>`` or ``<article>`` is the content's own."""
    return [
        region
        for region in [*root.iter("nav", "aside"), *_ROLE_REGIONS(root)]
        if not _IN_CONTENT(region)
    ]


def _document_title(root: etree._Element) -> str:
    """The first ``<title>`` not of an inline SVG (an icon's tooltip: ``分享到微博``), as
    browsers read a document's title."""
    for title in root.iter("title"):
        if not any(ancestor.tag == "svg" for ancestor in title.iterancestors()):
            return title.text or ""
    return ""


def extract_page(
    root: etree._Element,
    base_url: str,
    *,
    encoding: str = "utf-8",
    context_chars: int = 60,
    max_chars: int | None = 20000,
    noise_ratio: float = 0.25,
    memory: SeenRegions | None = None,
    page_url: str | None = None,
) -> PageText:
    """Title, visible body text (capped) and every link, in page order, keyed by its URL
    (see :func:`~topicspider.urls.link_url`; ``encoding`` is the page's; ``page_url`` its
    address, if a ``<base href>`` made ``base_url`` another). With a ``memory``, link
    regions and footers another page had too are left out of the text (see
    :class:`RegionMemory`).

    ``main`` is the body text without the blocks that are mostly links to other pages
    (related stories, a hot list, tags, a breadcrumb): a story republished in another
    channel or another site keeps its text and loses these. When they are most of the
    body, they are what the page says (a list), and ``main`` is the whole body text."""
    title = _SPACES.sub(" ", _document_title(root)).strip()
    links: dict[str, LinkContext] = {}
    found, site_wide, listings, link_chars, site_wide_links = _links(
        root, base_url, page_url or base_url, encoding, context_chars, noise_ratio, memory
    )
    for link in found:
        known = links.get(link.url)
        if known is None:
            links[link.url] = link
        elif known.context == known.anchor and link.anchor == known.anchor:
            # Named bare first (a menu), then with words around it (the content's entry
            # and its description): those words say what it is about.
            links[link.url] = replace(
                link,
                navigation=known.navigation and link.navigation,
                translation=known.translation and link.translation,
                heading=known.heading or link.heading,
            )
        elif (
            link.anchor
            and link.anchor not in known.anchor
            and len(known.context) < 4 * context_chars
        ):
            # Several anchors to one page say more about it than one; bounded, since
            # index pages link to the same page thousands of times.
            links[link.url] = LinkContext(
                known.url,
                f"{known.anchor} {link.anchor}",
                f"{known.context} {link.context}",
                navigation=known.navigation and link.navigation,
                translation=known.translation and link.translation,
                heading=known.heading or link.heading,
            )
    bodies = root.xpath("//body")
    body = _content_text(bodies[0] if bodies else root, site_wide)
    main = _content_text(bodies[0] if bodies else root, site_wide | listings) if listings else body
    if 2 * len(main) < len(body):
        main = body
    link_share = min(1.0, link_chars / len(body)) if body else 0.0
    return PageText(title, body[:max_chars], links, link_share, main[:max_chars], site_wide_links)


def _content_text(element: etree._Element, skip: set[etree._Element]) -> str:
    """Visible text outside menus and sidebars: they name the whole site's sections, and
    would make every page look a little like every topic. Only the elements above one of
    them or an invisible element are walked here; below them, all of the text is
    (``itertext``)."""
    leave_out = [*skip, *element.iter(*_INVISIBLE_TAGS)]
    around = {ancestor for node in leave_out for ancestor in node.iterancestors()}
    parts: list[str] = []
    # A stack, not recursion: a page may nest elements thousands deep.
    stack: list[etree._Element | str] = [element]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            parts.append(node)
        elif node in skip or not isinstance(node.tag, str) or node.tag in _INVISIBLE_TAGS:
            continue
        elif node not in around:
            parts.extend(node.itertext())
        else:
            if node.text:
                parts.append(node.text)
            for child in reversed(node):
                if child.tail:
                    stack.append(child.tail)
                stack.append(child)
    return _SPACES.sub(" ", " ".join(parts)).strip()
