"""Vector-space relevance of pages and links to a topic, and the crawl strategies.

A text becomes a term-frequency vector over its tokens (a keyword made of
several words counts as one phrase dimension); its relevance is the cosine
with the weighted keyword vector, for a page not written in Chinese with the
vector's other terms. Strategies turn a link and the page it was
found on into the float score the scheduler orders requests by.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from topicspider.keywords import KeywordVector
from topicspider.text import LinkContext
from topicspider.tokens import add_terms, has_han, mentions, searchable, subwords, tokenize
from topicspider.urls import url_words

__all__ = [
    "FEATURES",
    "STRATEGIES",
    "WEIGHTINGS",
    "BestFirst",
    "BreadthFirst",
    "Correlation",
    "DepthFirst",
    "LinkCandidate",
    "Relevance",
    "Strategy",
    "link_text",
    "reserve_score",
]


WEIGHTINGS = ("tf", "tfidf")

#: A page whose title has no Chinese and fewer than this share of whose words are Chinese
#: (a site's menu words around an untranslated page) is not written in Chinese.
CHINESE_SHARE = 0.1


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
        self.index = {term: j for j, term in enumerate(self.terms)}
        self.weights = np.array([keywords.weights[t] for t in self.terms])
        self.norm = float(np.linalg.norm(self.weights))
        # A keyword file in Chinese and English: a page in English can only ever meet its
        # English part, so that part alone is what such a page is measured against.
        chinese = np.array([has_han(t) for t in self.terms], dtype=bool)
        self.without_chinese = None
        if chinese.any() and not chinese.all():
            weights = np.where(chinese, 0.0, self.weights)
            self.without_chinese = (weights, float(np.linalg.norm(weights)))
        self.phrases = {t: tuple(t.split()) for t in self.terms if " " in t}
        self.title_weight = title_weight
        self.df = DocumentFrequencies() if weighting == "tfidf" else None
        self.mentions = mentions(word for term in self.terms for word in term.split())
        # Navigation links repeat on every page of a site: score each text once.
        self.text = functools.lru_cache(maxsize=100_000)(self._text)

    def _counts(self, tokens: list[str]) -> Counter[str]:
        counts = Counter(tokens)
        for token, n in list(counts.items()):
            for word in subwords(token):
                counts[word] += n
        for term, words in self.phrases.items():
            if not all(word in counts for word in words):
                continue
            size = len(words)
            hits = sum(
                1 for i in range(len(tokens) - size + 1) if tuple(tokens[i : i + size]) == words
            )
            if hits:
                counts[term] = hits
        return counts

    def _cosine(
        self,
        counts: Counter[str],
        *,
        page: bool = False,
        vector: tuple[np.ndarray, float] | None = None,
    ) -> float:
        """``vector``: the keyword weights and their norm, if not the whole vector's."""
        if not counts:
            return 0.0
        weights, weights_norm = vector or (self.weights, self.norm)
        terms = list(counts)
        tf = _sublinear(np.fromiter(counts.values(), dtype=float, count=len(terms)))
        if page and self.df is not None:
            self.df.add(set(terms))
            tf = tf * self.df.idf(terms)
        norm = float(np.linalg.norm(tf)) * weights_norm
        return float(self._keyword_tf(terms, tf) @ weights) / norm if norm else 0.0

    def _keyword_tf(self, terms: list[str], tf: np.ndarray) -> np.ndarray:
        """``tf`` (of ``terms``) laid out as the keyword vector, walking the shorter of the
        two in Python: a page has hundreds of words, and a glossary thousands of terms."""
        if len(self.terms) <= len(terms):
            index = {term: i for i, term in enumerate(terms)}
            keyword_tf = np.array([tf[index[t]] if t in index else 0.0 for t in self.terms])
        else:
            keyword_tf = np.zeros(len(self.terms))
            for i, term in enumerate(terms):
                if (j := self.index.get(term)) is not None:
                    keyword_tf[j] = tf[i]
        return keyword_tf

    def _text(self, text: str) -> float:
        """Relevance of a short text such as a link's anchor and context."""
        # Most links on a site say nothing of the topic (61–97% of the link texts on the
        # shared sites): the ones that name no keyword score 0 without being tokenized.
        if self.mentions is not None and not self.mentions.search(searchable(text)):
            return 0.0
        return self._cosine(self._counts(tokenize(text)))

    def page(self, title: str, body: str | list[str]) -> float:
        """Relevance of a page (body as text or tokens): its title counts ``title_weight``
        times its body. A page not written in Chinese is measured against the terms of a
        bilingual keyword vector it could contain."""
        tokens = tokenize(body) if isinstance(body, str) else body
        counts = self._counts(tokens)
        for term, n in self._counts(tokenize(title)).items():
            counts[term] += n * self.title_weight
        vector = None
        if self.without_chinese is not None and not _in_chinese(title, tokens):
            vector = self.without_chinese
        return self._cosine(counts, page=True, vector=vector)


def _in_chinese(title: str, tokens: list[str]) -> bool:
    """A Chinese title, or a tenth of the tokens Chinese ones, counted until there are
    enough: an English page has thousands of tokens, and a Chinese one soon has its tenth."""
    if has_han(title):
        return True
    needed = CHINESE_SHARE * len(tokens)
    chinese = 0
    for token in tokens:
        if not token.isascii() and has_han(token):
            chinese += 1
            if chinese >= needed:
                return True
    return False


def _sublinear(counts: np.ndarray) -> np.ndarray:
    """1 + ln tf, and tf itself below 1 (the same value and slope at 1): a count under 1,
    a title word weighted less than the body (``TOPIC_TITLE_WEIGHT`` < 1), still adds a
    little, and a count of 0 nothing, where the logarithm would go negative or infinite."""
    return np.where(counts < 1, counts, 1.0 + np.log(np.maximum(counts, 1.0)))


def link_text(link: LinkContext, words: str | None = None) -> str:
    """What a link says about its target: anchor, context and the words of its URL
    (``words``, if already known)."""
    return f"{link.anchor} {link.context} {url_words(link.url) if words is None else words}"


@dataclass(frozen=True)
class LinkCandidate:
    """An out-link with what the strategies may use to score it."""

    #: The relevance of ``link_text(link)``: what the link itself says of the topic.
    anchor: float
    depth: int
    parent_relevance: float
    #: In a block of links (a menu, a site map), not in the page's own text.
    navigation: bool = False
    #: Smoothed share of on-topic pages among fetched pages of the link's URL template.
    pattern_yield: float = 0.0
    #: On-line importance (OPIC cash) of the link's target, in [0, 1).
    importance: float = 0.0


class Strategy:
    """Scores a candidate link; the scheduler fetches higher scores first, ties FIFO.

    ``features`` are what the score was made of; ``learn`` hears, once the page
    a link led to is scored, how relevant it turned out, so adaptive strategies
    can change their mix.
    """

    name = ""

    def features(self, candidate: LinkCandidate) -> tuple[float, ...]:
        return ()

    def score(self, candidate: LinkCandidate) -> float:
        raise NotImplementedError

    def score_and_features(self, candidate: LinkCandidate) -> tuple[float, tuple[float, ...]]:
        return self.score(candidate), self.features(candidate)

    def learn(self, features: tuple[float, ...], relevance: float) -> None:
        """Nothing to learn by default."""

    def resume(self, saved: Strategy) -> None:
        """Take over what ``saved``, the strategy of the crawl this one resumes (``JOBDIR``),
        learned; the settings are this run's. Nothing to take over by default."""


class BreadthFirst(Strategy):
    name = "bfs"

    def score(self, candidate: LinkCandidate) -> float:
        return -float(candidate.depth)


class DepthFirst(Strategy):
    name = "dfs"

    def score(self, candidate: LinkCandidate) -> float:
        return float(candidate.depth)


#: The terms of the best-first link score, in the order of ``BestFirst.weights``.
FEATURES = ("anchor", "parent", "pattern", "importance")


#: Variances below this are the rounding error of sums of equal values.
ROUNDING = 1e-12


class Correlation:
    """Running Pearson correlation of each feature with the outcome."""

    def __init__(self, size: int) -> None:
        self.n = 0
        self.sums = np.zeros(size)
        self.squares = np.zeros(size)
        self.products = np.zeros(size)
        self.outcome = np.zeros(2)  # sum, sum of squares

    def add(self, features: np.ndarray, outcome: float) -> None:
        self.n += 1
        self.sums += features
        self.squares += features * features
        self.products += features * outcome
        self.outcome += (outcome, outcome * outcome)

    def moments(self) -> np.ndarray:
        """Its count and sums (of features, their squares, their products with the
        outcome, the outcome and its square): those of several sources add up to the
        correlation over all of their pages."""
        return np.concatenate(([self.n], self.sums, self.squares, self.products, self.outcome))

    def set_moments(self, moments: np.ndarray) -> None:
        size = len(self.sums)
        self.n = int(moments[0])
        self.sums, self.squares, self.products = moments[1 : 1 + 3 * size].reshape(3, size)
        self.outcome = moments[1 + 3 * size :]

    def values(self) -> np.ndarray:
        n = self.n
        covariance = self.products / n - (self.sums / n) * (self.outcome[0] / n)
        variances = self.squares / n - (self.sums / n) ** 2
        outcome_variance = self.outcome[1] / n - (self.outcome[0] / n) ** 2
        # Sums of values that do not vary leave a rounding error, not a spread.
        spread = np.sqrt(
            np.where(variances > ROUNDING, variances, 0.0)
            * (outcome_variance if outcome_variance > ROUNDING else 0.0)
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(spread > 0, covariance / spread, 0.0)


class BestFirst(Strategy):
    """A weighted sum of link-score terms (``FEATURES``), discounted for navigation links.

    The terms: cosine of anchor + context + URL words; relevance of the page the
    link is on; yield of the link's URL template; on-line importance. With
    ``adaptive``, the weights move, as pages are judged, towards each term's
    correlation with the relevance of the pages its links led to; the configured
    weights act as a prior worth ``warmup`` pages, and a term weighted 0 stays off.
    """

    name = "best_first"

    def __init__(
        self,
        weights: dict[str, float] | None = None,
        *,
        noise_discount: float = 0.0,
        adaptive: bool = False,
        warmup: int = 50,
    ) -> None:
        weights = {"anchor": 0.6, "parent": 0.4, **(weights or {})}
        unknown = set(weights) - set(FEATURES)
        if unknown:
            raise ValueError(f"unknown link-score terms: {', '.join(sorted(unknown))}")
        if any(w < 0 for w in weights.values()) or not 0.0 <= noise_discount <= 1.0:
            raise ValueError("weights must be >= 0 and the noise discount within [0, 1]")
        self.prior = np.array([weights.get(name, 0.0) for name in FEATURES])
        self.weights = self.prior.copy()
        self.noise_discount = noise_discount
        self.adaptive = adaptive
        self.warmup = warmup
        self._correlation = Correlation(len(FEATURES))

    def features(self, candidate: LinkCandidate) -> tuple[float, ...]:
        return (
            candidate.anchor,
            candidate.parent_relevance,
            candidate.pattern_yield,
            candidate.importance,
        )

    def score(self, candidate: LinkCandidate) -> float:
        return self.score_and_features(candidate)[0]

    def score_and_features(self, candidate: LinkCandidate) -> tuple[float, tuple[float, ...]]:
        features = self.features(candidate)
        score = float(np.dot(self.weights, features))
        if candidate.navigation:
            score *= 1.0 - self.noise_discount
        return score, features

    def learn(self, features: tuple[float, ...], relevance: float) -> None:
        if not self.adaptive or len(features) != len(FEATURES):
            return
        self._correlation.add(np.asarray(features), relevance)
        self._reweigh()

    def resume(self, saved: Strategy) -> None:
        if isinstance(saved, BestFirst):
            self._correlation.set_moments(saved._correlation.moments())
            if self.adaptive and self._correlation.n:
                self._reweigh()

    def _reweigh(self) -> None:
        learned = np.where(self.prior > 0, np.maximum(self._correlation.values(), 0.0), 0.0)
        if learned.sum() <= 0:
            return
        learned *= self.prior.sum() / learned.sum()
        n = self._correlation.n
        self.weights = (self.warmup * self.prior + n * learned) / (self.warmup + n)

    def weights_by_name(self) -> dict[str, float]:
        return {name: round(float(w), 4) for name, w in zip(FEATURES, self.weights, strict=True)}


STRATEGIES: dict[str, type[Strategy]] = {
    cls.name: cls for cls in (BestFirst, BreadthFirst, DepthFirst)
}

#: Seeds outrank every scored link in every strategy.
SEED_SCORE = math.inf

#: Links kept in reserve (``TOPIC_TUNNEL_RESERVE``) rank below every scored link.
RESERVE_OFFSET = -1e9
#: Best-first scores lie within this much, so a click more always ranks lower in reserve.
RESERVE_DEPTH_STEP = 10.0


def reserve_score(score: float, depth: int) -> float:
    """The score of a link kept in reserve: below every scored link, fewest clicks from a
    seed first, then by its own score.

    The reserve is what the focus found nothing behind, so its score says little; taken
    breadth-first it samples the whole site, near its front pages first.
    """
    return RESERVE_OFFSET - RESERVE_DEPTH_STEP * depth + score
