"""Keyword extraction: the terms that set sample on-topic pages apart from other text.

Pages are counted exactly as the crawler counts them (same tokenizer, sub-words of
Chinese compounds, the title weighted against the body) so that an extracted term is
one the crawler can match; it is written as the samples spell it. Terms are ranked by
tf-idf summed over the samples: tf is a term's share of one sample, so every sample
weighs the same; idf comes from background (off-topic) pages when there are some,
otherwise from jieba's bundled idf table for Chinese terms and from the samples
themselves for other terms.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from topicspider.charset import decode
from topicspider.text import SeenRegions, extract_page, parse_html
from topicspider.tokens import (
    has_han,
    joined_terms,
    spelled_as,
    spelled_tokens,
    subwords,
    tokenize,
)

__all__ = [
    "PageTerms",
    "RegionTally",
    "RepeatedRegions",
    "SharedText",
    "background_idf",
    "default_idf",
    "html_text",
    "plain_text",
    "rank_terms",
    "scale_weights",
    "spell",
    "term_counts",
    "with_subwords",
]

#: A term's inverse document frequency.
Idf = Callable[[str], float]


@dataclass(frozen=True)
class PageTerms:
    """A page's tokens as the crawler counts them, and how the page spells them."""

    counts: Counter[str]
    #: ``(token, word)``: each token as written (a plural, Traditional characters).
    spellings: Counter[tuple[str, str]]

    def __bool__(self) -> bool:
        return bool(self.counts)


def term_counts(
    title: str, body: str, *, title_weight: float = 3.0, shared: SharedText | None = None
) -> PageTerms:
    """A page's tokens, the title counting ``title_weight`` times the body, without the
    text ``shared`` says the samples share. Single characters and numbers are left out:
    they match too much to be keywords, and are read only beside a word; the word they are
    joined to is a term with them (``b-tree``, ``sha-1``), as a keyword file's is read."""
    counts: Counter[str] = Counter()
    spellings: Counter[tuple[str, str]] = Counter()
    if shared is not None:
        title = shared.title(title)
    for text, tokens, weight in (
        (body, shared.body(body) if shared else tokenize(body), 1.0),
        (title, tokenize(title), title_weight),
    ):
        for token in tokens:
            if len(token) > 1 and not token.isdigit():
                counts[token] += weight
        spellings.update(spelled_tokens(text))
        joined = Counter(joined_terms(text))
        spellings.update(joined)
        for term, runs in _runs_of({term for term, _ in joined}, tokens).items():
            counts[term] += weight * runs
    return PageTerms(counts, spellings)


def _runs_of(terms: Iterable[str], tokens: list[str]) -> Counter[str]:
    """How often each term's words stand together in ``tokens``: a joined term is counted
    where its tokens are, so that the text the samples share is left out of it too. One
    pass over the tokens for each length of term: a long list has thousands of joined
    terms, most of them beginning alike (``item-1``, ``item-2``, …)."""
    wanted = {tuple(term.split()): term for term in terms}
    runs: Counter[str] = Counter()
    for size in {len(words) for words in wanted}:
        for words in zip(*(tokens[start:] for start in range(size)), strict=False):
            if (term := wanted.get(words)) is not None:
                runs[term] += 1
    return runs


class SharedText:
    """What most of the sample pages say alike: their site's, not their topic's.

    Pages of one site share a header, a navigation bar and a footer (上一页 下一页, 版权所有,
    the licence number, "Privacy policy | Terms") and put the site's name in each title
    (``…_华夏门户网``, ``… — Python 3.12 documentation``). Without background pages to
    weigh them against, those were the best keywords: on five football pages of a portal,
    its name came first and the footer's words after the topic's few. A run of ``RUN``
    tokens on more than half of the samples (two at least), and a first or last part of
    the title (cut at ``-``, ``_``, ``|``, ``—``) on as many, are left out of each. Only
    without background pages: a section's own header (体育, a list of its tags) is shared
    too, and names the topic.
    """

    RUN = 4

    def __init__(self, texts: list[tuple[str, str]]) -> None:
        need = max(2, len(texts) // 2 + 1)
        runs: Counter[tuple[str, ...]] = Counter()
        ends: Counter[str] = Counter()
        for title, body in texts:
            runs.update(set(self._runs(tokenize(body))))
            parts = _title_parts(title)
            ends.update({parts[0], parts[-1]} if len(parts) > 1 else set())
        self.runs = {run for run, pages in runs.items() if pages >= need}
        self.title_ends = {part for part, pages in ends.items() if pages >= need}

    def _runs(self, tokens: list[str]) -> Iterable[tuple[str, ...]]:
        return zip(*(tokens[start:] for start in range(self.RUN)), strict=False)

    def body(self, body: str) -> list[str]:
        """The body's tokens, those of the runs the samples share left out."""
        tokens = tokenize(body)
        shared = [False] * len(tokens)
        for start, run in enumerate(self._runs(tokens)):
            if run in self.runs:
                shared[start : start + self.RUN] = [True] * self.RUN
        return [token for token, left_out in zip(tokens, shared, strict=True) if not left_out]

    def title(self, title: str) -> str:
        parts = _title_parts(title)
        if len(parts) > 1:
            parts = [part for part in parts if part not in self.title_ends] or parts
        return " ".join(parts)


#: Where a title is cut into the page's own name and its site's: ``a - b``, ``a_b``,
#: ``a | b``, ``a — b``, ``a: b``, and a hyphen beside a hanzi (``足球比赛-华夏门户网``).
_TITLE_CUT = re.compile(r"\s+[-:·]\s+|\s*[_|｜—–]+\s*|(?<=[一-鿿])-|-(?=[一-鿿])")


def _title_parts(title: str) -> list[str]:
    return [part for part in (piece.strip() for piece in _TITLE_CUT.split(title)) if part]


def with_subwords(page: PageTerms, words: Collection[str]) -> PageTerms:
    """The page with the dictionary words inside its Chinese compounds counted too, as the
    crawler counts them (足球 in 足球比赛), those among ``words`` only: jieba's dictionary
    also holds pieces of words (务器 in 服务器, 据库 in 数据库) that no sample uses alone.
    A sub-word is spelled as its compound is (比赛 in 足球比賽 as 比賽)."""
    counts = page.counts.copy()
    for token, count in page.counts.items():
        for word in subwords(token):
            if word in words:
                counts[word] += count
    spellings = page.spellings.copy()
    for (token, spelled), count in page.spellings.items():
        if len(token) == len(spelled):
            for word in subwords(token):
                if word in words:
                    start = token.index(word)
                    spellings[word, spelled_as(word, spelled[start : start + len(word)])] += count
    return PageTerms(counts, spellings)


class RegionTally:
    """On how many of the pages read each large link region is (a first reading of them)."""

    def __init__(self) -> None:
        self.pages: Counter[tuple[int, int]] = Counter()

    def seen(self, regions: list[tuple[int, int]]) -> list[bool]:
        self.pages.update(set(regions))
        return [False] * len(regions)


class RepeatedRegions:
    """The link regions that two or more of the pages have, a site's sidebar: left out of
    each of them, the first one too, where the crawler's memory leaves it in the first page
    it sees. Samples and background pages of one site all show it; kept in, its chapter
    names would be the samples' keywords wherever the background has another sidebar."""

    def __init__(self, tally: RegionTally) -> None:
        self.pages = tally.pages

    def seen(self, regions: list[tuple[int, int]]) -> list[bool]:
        return [self.pages[region] > 1 for region in regions]


def html_text(
    data: bytes,
    url: str,
    content_type: str | None = None,
    regions: SeenRegions | None = None,
    max_chars: int | None = None,
) -> tuple[str, str]:
    """An HTML page's title and visible body (its first ``max_chars`` characters, or all),
    whatever its encoding, without the link regions ``regions`` says were seen."""
    _, markup = decode(data, content_type)
    page = extract_page(parse_html(markup), url, max_chars=max_chars, memory=regions)
    return page.title, page.body


def plain_text(data: bytes) -> tuple[str, str]:
    """A plain-text sample's title (none) and body."""
    return "", decode(data, "text/plain")[1]


def background_idf(documents: Iterable[Counter[str]]) -> Idf:
    """idf = ln((N + 1) / (df + 1)) over N background pages: a term found on every
    off-topic page (navigation, the site's name) gets 0 and can never be a keyword."""
    df: Counter[str] = Counter()
    total = 0
    for document in documents:
        total += 1
        df.update(document.keys())
    return lambda term: math.log((total + 1) / (df[term] + 1))


def default_idf(samples: list[Counter[str]]) -> Idf:
    """idf without background pages: jieba's idf table for terms with Chinese characters
    (unknown words get its median); other terms get a document-frequency estimate from
    the samples, on the same scale (a term in one sample counts as a word jieba does not
    know), so that boilerplate repeated on every sample ranks lower."""
    from jieba.analyse import TFIDF  # loads a 6 MB table: only when it is needed

    table = TFIDF()
    idf_freq, median = table.idf_freq, table.median_idf
    df: Counter[str] = Counter()
    for document in samples:
        df.update(document.keys())
    total = len(samples)
    rarest = 1.0 + math.log((total + 1) / 2)

    def idf(term: str) -> float:
        if has_han(term):
            return idf_freq.get(term, median)
        return median * (1.0 + math.log((total + 1) / (df[term] + 1))) / rarest

    return idf


def rank_terms(samples: list[Counter[str]], idf: Idf, top: int) -> list[tuple[str, float]]:
    """The ``top`` terms by tf-idf summed over the samples, best first (ties by term)."""
    scores: Counter[str] = Counter()
    for counts in samples:
        length = sum(counts.values())
        for term, count in counts.items():
            scores[term] += count / length
    ranked = [(term, tf * idf(term)) for term, tf in scores.items()]
    ranked = [(term, score) for term, score in ranked if score > 0]
    ranked.sort(key=lambda pair: (-pair[1], pair[0]))
    return ranked[:top]


def scale_weights(ranked: list[tuple[str, float]], best: float = 3.0) -> list[tuple[str, float]]:
    """Weights a person can read and edit: the best term gets ``best``, one decimal, at least 0.1.

    >>> scale_weights([("足球", 0.42), ("比赛", 0.21), ("球迷", 0.001)])
    [('足球', 3.0), ('比赛', 1.5), ('球迷', 0.1)]
    """
    if not ranked:
        return []
    top = ranked[0][1]
    return [(term, max(round(best * score / top, 1), 0.1)) for term, score in ranked]


def spell(ranked: list[tuple[str, float]], pages: Iterable[PageTerms]) -> list[tuple[str, float]]:
    """Each term as the pages most often write it: the tokenizer stems English words
    (``cookies`` → ``cooki``, ``caches`` → ``cach``) and reads Traditional characters as
    Simplified ones (``聯賽`` → ``联赛``), a keyword file is read by people. Either form
    reads back as the same term."""
    spellings: Counter[tuple[str, str]] = Counter()
    for page in pages:
        spellings.update(page.spellings)
    best: dict[str, tuple[float, str]] = {}
    for (token, word), count in spellings.items():
        best[token] = max(best.get(token, (0, token)), (count, word))
    return [(best.get(term, (0, term))[1], weight) for term, weight in ranked]
