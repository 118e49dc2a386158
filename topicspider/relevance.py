"""Vector-space relevance of pages and links to a topic, and the crawl strategies.

A text becomes a term-frequency vector over its tokens (a keyword made of
several words counts as one phrase dimension); its relevance is the cosine
with the weighted keyword vector. Strategies turn a link and the page it was
found on into the float score the scheduler orders requests by.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from topicspider.keywords import KeywordVector
from topicspider.text import LinkContext, add_terms, subwords, tokenize, url_words

__all__ = [
    "STRATEGIES",
    "WEIGHTINGS",
    "BestFirst",
    "BreadthFirst",
    "DepthFirst",
    "LinkCandidate",
    "Relevance",
    "Strategy",
]


WEIGHTINGS = ("tf", "tfidf")


class DocumentFrequencies:
    """Document frequencies of the pages seen so far, for tf-idf learned on line."""

    def __init__(self) -> None:
        self.documents = 0
        self.counts: Counter[str] = Counter()

    def add(self, terms: set[str]) -> None:
        self.documents += 1
        self.counts.update(terms)

    def idf(self, terms: list[str]) -> np.ndarray:
        df = np.fromiter((self.counts[t] for t in terms), dtype=float, count=len(terms))
        return np.log((self.documents + 1) / (df + 1)) + 1.0


class Relevance:
    """Cosine of texts to one keyword vector.

    ``weighting`` is ``"tf"`` (sublinear term frequency, 1 + ln tf) or
    ``"tfidf"`` (the same times an idf learned from the pages scored so far;
    pages only: link texts are too short for idf to matter, and are cached).
    """

    def __init__(
        self, keywords: KeywordVector, *, title_weight: float = 3.0, weighting: str = "tf"
    ) -> None:
        if weighting not in WEIGHTINGS:
            raise ValueError(f"unknown weighting {weighting!r} (expected 'tf' or 'tfidf')")
        add_terms(keywords.weights)
        self.terms = list(keywords.weights)
        self.weights = np.array([keywords.weights[t] for t in self.terms])
        self.norm = float(np.linalg.norm(self.weights))
        self.phrases = {t: tuple(t.split()) for t in self.terms if " " in t}
        self.title_weight = title_weight
        self.df = DocumentFrequencies() if weighting == "tfidf" else None
        # Navigation links repeat on every page of a site: score each text once.
        self.text = functools.lru_cache(maxsize=100_000)(self._text)

    def _counts(self, tokens: list[str]) -> Counter[str]:
        counts = Counter(tokens)
        for token, n in list(counts.items()):
            for word in subwords(token):
                counts[word] += n
        for term, words in self.phrases.items():
            size = len(words)
            hits = sum(
                1 for i in range(len(tokens) - size + 1) if tuple(tokens[i : i + size]) == words
            )
            if hits:
                counts[term] = hits
        return counts

    def _cosine(self, counts: Counter[str], *, page: bool = False) -> float:
        if not counts:
            return 0.0
        terms = list(counts)
        tf = 1.0 + np.log(np.fromiter(counts.values(), dtype=float, count=len(terms)))
        if page and self.df is not None:
            self.df.add(set(terms))
            tf = tf * self.df.idf(terms)
        index = {term: i for i, term in enumerate(terms)}
        keyword_tf = np.array([tf[index[t]] if t in index else 0.0 for t in self.terms])
        norm = float(np.linalg.norm(tf)) * self.norm
        return float(keyword_tf @ self.weights) / norm if norm else 0.0

    def _text(self, text: str) -> float:
        """Relevance of a short text such as a link's anchor and context."""
        return self._cosine(self._counts(tokenize(text)))

    def page(self, title: str, body: str) -> float:
        """Relevance of a page: its title counts ``title_weight`` times its body."""
        counts = self._counts(tokenize(body))
        for term, n in self._counts(tokenize(title)).items():
            counts[term] += n * self.title_weight
        return self._cosine(counts, page=True)


@dataclass(frozen=True)
class LinkCandidate:
    """An out-link with what the strategies may use to score it."""

    link: LinkContext
    depth: int
    parent_relevance: float


class Strategy:
    """Scores a candidate link; the scheduler fetches higher scores first, ties FIFO."""

    name = ""

    def score(self, candidate: LinkCandidate) -> float:
        raise NotImplementedError


class BreadthFirst(Strategy):
    name = "bfs"

    def score(self, candidate: LinkCandidate) -> float:
        return -float(candidate.depth)


class DepthFirst(Strategy):
    name = "dfs"

    def score(self, candidate: LinkCandidate) -> float:
        return float(candidate.depth)


class BestFirst(Strategy):
    """``anchor_weight`` x cosine(anchor + context + URL words) + the rest x parent relevance."""

    name = "best_first"

    def __init__(self, relevance: Relevance, anchor_weight: float = 0.6) -> None:
        if not 0.0 <= anchor_weight <= 1.0:
            raise ValueError(f"anchor weight must be within [0, 1], got {anchor_weight}")
        self.relevance = relevance
        self.anchor_weight = anchor_weight

    def score(self, candidate: LinkCandidate) -> float:
        link = candidate.link
        words = f"{link.anchor} {link.context} {url_words(link.url)}"
        anchor = self.relevance.text(words)
        return self.anchor_weight * anchor + (1.0 - self.anchor_weight) * candidate.parent_relevance


STRATEGIES: dict[str, type[Strategy]] = {
    cls.name: cls for cls in (BestFirst, BreadthFirst, DepthFirst)
}

#: Seeds outrank every scored link in every strategy.
SEED_SCORE = math.inf
