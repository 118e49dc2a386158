"""What a page's bytes alone say: its charset, text, relevance, SimHash and scored links.

Nothing here depends on what the crawl has learned, so it can run in worker processes
(``python -m topicspider.analysis``, started by :mod:`topicspider.workers`) while the
spider, on the reactor thread, keeps the crawl's state (URL templates, link-score mix,
fingerprints of stored pages, host counts).
Two things are learned by each analyzer from the pages it sees: tf-idf's document
frequencies, and the link regions every page repeats
(:class:`~topicspider.text.RegionMemory`).
"""

from __future__ import annotations

import functools
import heapq
import posixpath
import re
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import urljoin, urlsplit

from w3lib.html import strip_html5_whitespace
from w3lib.url import safe_url_string

from topicspider.canonical import canonical_of
from topicspider.charset import detect_encoding, to_text
from topicspider.frames import serve
from topicspider.keywords import KeywordVector
from topicspider.relevance import Relevance, link_text
from topicspider.robotsmeta import meta_directives
from topicspider.scripts import page_scripts, write_inline
from topicspider.simhash import simhash
from topicspider.text import LinkContext, PageText, RegionMemory, extract_page, parse_html
from topicspider.tokens import tokenize
from topicspider.urlpatterns import is_noise, template, without_session
from topicspider.urls import on_sites, url_words

__all__ = ["Analyzer", "PageAnalysis", "ScoredLink"]

#: How many times ``TOPIC_MAX_LINKS_PER_PAGE`` links of a page are scored for the best to be
#: kept: a link farm's hundred thousand links are not all scored.
LINKS_SCORED = 10
#: What a link's words must score to count in :func:`_topical_share`: the threshold's default
#: floor, not any word of the topic (an index of a manual's options, whose entries say
#: "option" or "configuration" here and there, is no list of the topic).
TOPICAL_LINK_ANCHOR = 0.05


@dataclass(frozen=True)
class ScoredLink:
    """An out-link with the part of its score that needs only the page it is on."""

    url: str
    text: str
    #: Cosine of the anchor, its context and the URL's words with the keyword vector.
    anchor: float
    navigation: bool
    #: The URL's template (:func:`topicspider.urlpatterns.template`).
    template: str
    #: A calendar, print or share view (:func:`topicspider.urlpatterns.is_noise`).
    noise: bool
    #: The page in another language (see :class:`~topicspider.text.LinkContext`).
    translation: bool = False
    #: Only in regions every page of the site repeats (see :class:`~topicspider.text.PageText`).
    site_wide: bool = False


class _UrlFacts(NamedTuple):
    """What a link's URL alone says, worked out once per URL."""

    follows: bool
    template: str
    noise: bool
    words: str


@dataclass(frozen=True)
class PageAnalysis:
    charset: str
    title: str
    text: str
    relevance: float
    #: The page URL's template.
    template: str
    #: SimHash of the tokens of the page's main text (0 when near-duplicate detection is
    #: off; see :class:`~topicspider.text.PageText`).
    fingerprint: int
    #: On-site links in page order, at most ``max_links`` of them.
    links: list[ScoredLink]
    #: How many links were cut by ``max_links``.
    truncated: int
    #: The share of the page's text that is link text (see :class:`~topicspider.text.PageText`).
    link_share: float = 0.0
    #: The share of its links' text, by characters, on links that mention the topic.
    topical_link_share: float = 0.0
    #: ``noindex``/``nofollow`` from its robots ``<meta>`` tags (:mod:`topicspider.robotsmeta`).
    robots: frozenset[str] = frozenset()
    #: The other address its ``<link rel="canonical">`` or ``Link`` header names
    #: (:mod:`topicspider.canonical`).
    canonical: str | None = None
    #: The site's own scripts the page loads, which may write links into it
    #: (:mod:`topicspider.scripts`), and the address their links start from.
    scripts: tuple[str, ...] = ()
    base_url: str = ""


class Analyzer:
    """Turns a response's URL, bytes and Content-Type into a :class:`PageAnalysis`.

    Built from plain values (see :meth:`arguments`) so that worker processes can
    build their own from the same arguments.
    """

    def __init__(
        self,
        keywords: KeywordVector,
        *,
        title_weight: float = 3.0,
        weighting: str = "tf",
        context_chars: int = 60,
        max_chars: int = 20000,
        noise_ratio: float = 0.25,
        max_links: int = 0,
        fingerprints: bool = True,
        allow: str | None = None,
        deny: str | None = None,
        robots_agents: tuple[str, ...] = (),
        binary_extensions: frozenset[str] | None = None,
        scripts: bool = False,
    ) -> None:
        """``robots_agents``: the ``<meta name>`` values whose robots directives apply
        (none: not looked for). ``binary_extensions``: the file extensions of links not
        followed (none given: Scrapy's ``IGNORED_EXTENSIONS``). ``scripts``: read the links
        the page's inline scripts write, and name the site's scripts it loads."""
        self.relevance = Relevance(keywords, title_weight=title_weight, weighting=weighting)
        self.context_chars = context_chars
        self.max_chars = max_chars
        self.noise_ratio = noise_ratio
        self.max_links = max_links
        self.fingerprints = fingerprints
        self.domains: tuple[str, ...] = ()
        self.regions = RegionMemory()
        self.allow = re.compile(allow) if allow else None
        self.deny = re.compile(deny) if deny else None
        self.robots_agents = robots_agents
        self.scripts = scripts
        self.binary_extensions = (
            _scrapy_binary_extensions() if binary_extensions is None else binary_extensions
        )
        # Two links in three on a page lead where links on other pages already did
        # (site navigation, related pages): their URLs are parsed once.
        self._url_facts = functools.lru_cache(maxsize=100_000)(self._facts)

    @staticmethod
    def arguments(
        keywords: KeywordVector,
        settings: Any,
        *,
        allow: str | None = None,
        deny: str | None = None,
    ) -> dict[str, Any]:
        """The keyword arguments of an analyzer configured by Scrapy settings (picklable)."""
        return {
            "keywords": keywords,
            "title_weight": settings.getfloat("TOPIC_TITLE_WEIGHT"),
            "weighting": settings.get("TOPIC_WEIGHTING"),
            "context_chars": settings.getint("TOPIC_CONTEXT_CHARS"),
            "max_chars": settings.getint("TOPIC_MAX_TEXT_CHARS"),
            "noise_ratio": settings.getfloat("TOPIC_NOISE_LINK_RATIO"),
            "max_links": settings.getint("TOPIC_MAX_LINKS_PER_PAGE"),
            "fingerprints": settings.getint("TOPIC_DUPLICATE_DISTANCE") >= 0,
            "allow": allow,
            "deny": deny,
            "robots_agents": (
                ("robots", settings.get("BOT_NAME"))
                if settings.getbool("TOPIC_OBEY_ROBOTS_META")
                else ()
            ),
            "binary_extensions": _scrapy_binary_extensions(),
            "scripts": settings.getbool("TOPIC_SCRIPT_LINKS"),
        }

    def analyze(
        self,
        url: str,
        body: bytes,
        content_type: str,
        domains: tuple[str, ...] = (),
        header_canonicals: tuple[str, ...] = (),
    ) -> PageAnalysis:
        """``domains``: the sites the crawl keeps to (none: any), given with each page
        because they can grow while it runs (a seed redirected to another host, a
        worker joining a crawl in Redis with seeds of its own). ``header_canonicals``:
        the addresses the response's ``Link`` headers name as canonical
        (:func:`~topicspider.canonical.link_header_canonicals`); only those travel to a
        worker, not the headers, which a server may fill with preloads."""
        if domains != self.domains:
            self.domains = domains
            self._url_facts.cache_clear()
        charset = detect_encoding(body, content_type)
        root = parse_html(to_text(body, charset))
        if self.scripts:
            write_inline(root)
        base_url = _base_url(root, url, charset)
        page = extract_page(
            root,
            base_url,
            encoding=charset,
            context_chars=self.context_chars,
            max_chars=self.max_chars,
            noise_ratio=self.noise_ratio,
            memory=self.regions,
            page_url=url,
        )
        tokens = tokenize(page.body)
        followed = [
            (link, facts)
            for link in page.links.values()
            if (facts := self._url_facts(link.url, charset)).follows
        ]
        truncated = max(0, len(followed) - self.max_links) if self.max_links else 0
        if truncated:
            followed = followed[: LINKS_SCORED * self.max_links]
        links = [
            ScoredLink(
                link.url,
                link.anchor,
                self._anchor(link, facts.words),
                link.navigation,
                facts.template,
                facts.noise,
                link.translation,
                link.url in page.site_wide_links,
            )
            for link, facts in followed
        ]
        topical_share = _topical_share(links)
        if truncated:
            links = _best(links, self.max_links)
        return PageAnalysis(
            charset=charset,
            title=page.title,
            text=page.body,
            relevance=self.relevance.page(page.title, tokens),
            template=template(url),
            fingerprint=self._fingerprint(page, tokens) if self.fingerprints else 0,
            links=links,
            truncated=truncated,
            link_share=page.link_share,
            topical_link_share=topical_share,
            robots=meta_directives(root, self.robots_agents),
            canonical=self._canonical(root, base_url, url, charset, header_canonicals),
            scripts=self._scripts(root, url, base_url, charset),
            base_url=base_url,
        )

    def _scripts(self, root: Any, url: str, base_url: str, charset: str) -> tuple[str, ...]:
        """The scripts the page loads from the crawl's sites, or from its own host when the
        crawl keeps to none."""
        if not self.scripts:
            return ()
        hosts = self.domains or (urlsplit(url).hostname or "",)
        return page_scripts(root, base_url, charset, hosts)

    @staticmethod
    def _fingerprint(page: PageText, tokens: list[str]) -> int:
        return simhash(tokens if page.main == page.body else tokenize(page.main))

    def _canonical(
        self, root: Any, base_url: str, url: str, charset: str, header_canonicals: tuple[str, ...]
    ) -> str | None:
        canonical = canonical_of(root, base_url, without_session(url), charset, header_canonicals)
        return canonical if canonical and self._follows(canonical) else None

    def _anchor(self, link: LinkContext, words: str) -> float:
        """What a link says of the topic: its anchor, context and URL words, or those with
        the heading of its group on an index page, whichever says more."""
        said = link_text(link, words)
        score = self.relevance.text(said)
        if link.heading:
            score = max(score, self.relevance.text(f"{link.heading} {said}"))
        return score

    def _facts(self, url: str, charset: str) -> _UrlFacts:
        if not self._follows(url):
            return _UrlFacts(False, "", False, "")
        return _UrlFacts(True, template(url), is_noise(url), url_words(url, charset))

    def _follows(self, url: str) -> bool:
        """The rules of Scrapy's ``LinkExtractor`` (web schemes, no binary file extensions,
        ``allow``/``deny`` regexes) plus staying on the seeds' sites, applied to the links
        :func:`~topicspider.text.extract_page` found: one pass over the page, not two."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return False
        if posixpath.splitext(parts.path)[1][1:].lower() in self.binary_extensions:
            return False
        if self.allow and not self.allow.search(url):
            return False
        if self.deny and self.deny.search(url):
            return False
        return self._on_site(parts.hostname or "")

    def _on_site(self, host: str) -> bool:
        return not self.domains or on_sites(host, self.domains)


@functools.cache
def _scrapy_binary_extensions() -> frozenset[str]:
    """Scrapy's list, imported only where it is asked for: a worker process gets it with
    its arguments, and starts without loading Scrapy and Twisted (0.4 s of CPU less)."""
    from scrapy.linkextractors import IGNORED_EXTENSIONS

    return frozenset(IGNORED_EXTENSIONS)


def _base_url(root: Any, url: str, encoding: str) -> str:
    """The address the page's relative links start from: its first ``<base href>``, wherever
    it is, as browsers read it (Scrapy looks in the first 4 KB only, which a head of inline
    scripts fills)."""
    for base in root.iter("base"):
        if href := strip_html5_whitespace(base.get("href") or ""):
            try:
                return safe_url_string(urljoin(url, href), encoding)
            except ValueError:  # "Invalid IPv6 URL"
                return url
    return url


def _best(links: list[ScoredLink], count: int) -> list[ScoredLink]:
    """The ``count`` links that say most of the topic, in page order: an A-Z index of a
    library's 1,300 classes lists ``String`` and ``Thread`` past the first thousand."""
    kept = heapq.nlargest(count, range(len(links)), key=lambda i: links[i].anchor)
    return [links[i] for i in sorted(kept)]


def _topical_share(links: list[ScoredLink]) -> float:
    """How much of what a page lists is on topic: a table of contents of the topic, or of
    a whole site that mentions it."""
    own = [link for link in links if not link.site_wide]
    listed = sum(len(link.text) for link in own)
    topical = sum(len(link.text) for link in own if link.anchor >= TOPICAL_LINK_ANCHOR)
    return topical / listed if listed else 0.0


def main() -> None:
    """The analysis worker process: an analyzer's arguments, then pages, until end of input.

    Run as ``python -m``, this module is ``__main__``; the analyzer comes from the module
    under its own name, so that its answers unpickle in the crawl."""
    from topicspider import analysis

    serve(lambda arguments: analysis.Analyzer(**arguments).analyze)


if __name__ == "__main__":
    main()
