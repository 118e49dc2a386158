"""The ceiling of ``make eval``: what a crawler that knew the labels and the link graph
would harvest with the same budget.

Such a crawler fetches a labelled page as soon as one is linked from a page it has, and
otherwise the shortest way to the nearest labelled page. The links are the ones the crawler
follows, found by its own analyzer in the site's files (same host, no binary files, no
translations, no noise URLs, none its ``robots.txt`` forbids), so the ceiling is reachable
by the rules the crawl keeps. It reads the links the site's scripts write
(``TOPIC_SCRIPT_LINKS``) as soon as a page that loads one is on its way, at no cost in
fetches, where the crawl waits for a seed or a second page to load it and fetches it: on
script links the ceiling is an upper bound.
Taking the nearest page each time is a greedy choice: on a graph where a longer way leads
to more labelled pages it falls short of the true best, never above it.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urljoin, urlsplit

from protego import Protego

from topicspider.analysis import Analyzer, ScoredLink
from topicspider.keywords import KeywordVector
from topicspider.scripts import script_html, script_text, written_page

#: Where the pages are taken to be: the analyzer needs absolute URLs.
BASE = "http://127.0.0.1"
#: Whose ``robots.txt`` rules apply: the crawler's User-Agent starts with its bot name.
AGENT = "topicspider"


class LinkGraph:
    """A site folder's pages by URL path, each read once, when a path first needs its links."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.analyzer = Analyzer(KeywordVector({"ceiling": 1.0}), fingerprints=False, scripts=True)
        robots = self.root / "robots.txt"
        self.robots = (
            Protego.parse(robots.read_text("utf-8", "replace")) if robots.is_file() else None
        )
        self._links: dict[str, tuple[str, ...]] = {}

    def links(self, path: str) -> tuple[str, ...]:
        """Paths of the pages the crawler would follow from ``path`` (none if it is no page)."""
        if path not in self._links:
            self._links[path] = self._read(path)
        return self._links[path]

    def _read(self, path: str) -> tuple[str, ...]:
        file = self._file(path)
        if file is None:
            return ()
        url = urljoin(BASE, path)
        page = self.analyzer.analyze(url, file.read_bytes(), "text/html", ("127.0.0.1",))
        links = list(page.links)
        for script in page.scripts:
            links += self._written(url, page.base_url, page.charset, script)
        found = (
            urlsplit(link.url).path
            for link in links
            if not link.translation
            and not link.noise
            and (self.robots is None or self.robots.can_fetch(link.url, AGENT))
        )
        return tuple(dict.fromkeys(p for p in found if p != path))

    def _written(self, url: str, base: str, charset: str, script: str) -> list[ScoredLink]:
        """The links a script of the page at ``url`` writes, as the spider reads them."""
        file = self._file(urlsplit(script).path, (".js", ".mjs"))
        if file is None:
            return []
        html = script_html(script_text(file.read_bytes(), "", charset))
        if not html:
            return []
        page = written_page(html, base, charset)
        return self.analyzer.analyze(url, page, "text/html", ("127.0.0.1",)).links

    def _file(self, path: str, suffixes: tuple[str, ...] = (".html",)) -> Path | None:
        """The file the eval's server answers ``path`` with, as ``demo.server`` finds it, if
        it is one of ``suffixes`` (HTML pages; scripts)."""
        if path.endswith("/"):
            path += "index.html"
        parts = PurePosixPath(unquote(path)).parts[1:]
        if not parts or any(part.startswith(".") for part in parts):
            return None
        file = self.root.joinpath(*parts)
        return file if file.suffix in suffixes and file.is_file() else None


def best_order(graph: LinkGraph, seed: str, labelled: set[str], budget: int) -> list[str]:
    """The pages such a crawler fetches, seed first, until it has every labelled page it
    can reach or ``budget`` pages."""
    fetched = [seed]
    have = {seed}
    while len(fetched) < budget and not labelled <= have:
        way = _nearest(graph, fetched, labelled, budget - len(fetched))
        if not way:
            break
        fetched += way
        have.update(way)
    return fetched[:budget]


def _nearest(graph: LinkGraph, fetched: list[str], labelled: set[str], limit: int) -> list[str]:
    """The pages to fetch, in order, on the shortest way from the pages fetched to a
    labelled page not yet fetched, at most ``limit`` of them; none if no such way. Of
    several as near, the one linked first from the page fetched first."""
    have = set(fetched)
    parent: dict[str, str | None] = dict.fromkeys(fetched)
    queue = deque((path, 0) for path in fetched)
    while queue:
        path, depth = queue.popleft()
        if depth == limit:
            continue
        for link in graph.links(path):
            if link in parent:
                continue
            parent[link] = None if path in have else path
            if link in labelled:
                way = [link]
                while (step := parent[way[-1]]) is not None:
                    way.append(step)
                return way[::-1]
            queue.append((link, depth + 1))
    return []
