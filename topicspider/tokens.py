"""Text → tokens: the one tokenizer that page text, link text, keyword files and sample
pages all go through, so that a keyword meets every form of itself in a page.

Chinese is cut by jieba with the keywords in its dictionary and read in Simplified
characters; English words are stemmed; stop words are dropped.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable, Iterator
from importlib import resources
from itertools import chain

try:  # the same segmenter and dictionary in C++, about six times faster
    import jieba_fast_dat as jieba
except ImportError:  # pragma: no cover - the pure-Python original
    import jieba
import opencc
import snowballstemmer

__all__ = [
    "IRREGULAR_PLURALS",
    "STOPWORDS",
    "add_terms",
    "has_chinese_word",
    "has_han",
    "joined_terms",
    "mentions",
    "normalize_term",
    "searchable",
    "simplified",
    "spelled_as",
    "spelled_tokens",
    "subwords",
    "tokenize",
]

jieba.setLogLevel(logging.WARNING)


@functools.cache
def _jieba():
    """The segmenter with its dictionary loaded: jieba_fast_dat cuts every character
    apart until it is initialized, so every use goes through here."""
    jieba.initialize()
    return jieba


@functools.cache
def _to_simplified() -> opencc.OpenCC:
    return opencc.OpenCC("t2s")


@functools.cache
def _from_taiwan() -> opencc.OpenCC:
    return opencc.OpenCC("tw2sp")


def simplified(text: str) -> str:
    """``text`` in Simplified characters, as the tokenizer reads it: a keyword written one
    way matches pages written the other, and jieba's dictionary, which is Simplified, cuts
    both alike. Each run of Chinese characters is read by itself, as :func:`tokenize` cuts
    it, with the short Latin words between (設定IP位址 as 设置IP地址: 位址 alone would stay
    位址; see :func:`_simplified_run`)."""
    if text.isascii():
        return text
    return _HAN_GROUPS.sub(lambda run: _simplified_run(run.group()), text)


@functools.lru_cache(maxsize=1 << 15)
def _simplified_run(run: str) -> str:
    """A run with Traditional characters is also read with Taiwan's words in mainland ones
    (OpenCC's ``tw2sp``: 列印 as 打印, 網路 as 网络); a run without is left as written,
    since ``tw2sp`` would reword mainland text too (程序, a program, as 进程).

    Converted once: the same runs come back in link after link (menus, headlines)."""
    if _to_simplified().convert(run) == run:
        return run
    return _from_taiwan().convert(run)


#: The most keyword words :func:`mentions` makes a pattern of (searching 160 characters of
#: link text for 100 takes 40 µs here, tokenizing them 30–50 µs).
MENTIONS_MAX = 100
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
#: A Latin word of up to four letters written against Chinese characters is read with them,
#: so that jieba's dictionary (A股, T恤, IP地址) and a keyword (C罗) can make one word of both.
_BESIDE = "[a-z]{1,4}+"
#: A language named by a letter and ``++`` or ``#`` (C++, C#, F#), a word whose letter
#: would go.
_SHARP = "[a-z](?:\\+\\+|#)(?![a-z+#])"
#: A word, or words joined by hyphens or underscores (``b-tree``, ``x86_64``): see
#: :func:`_spelled_word`.
_WORD = f"{_SHARP}|[^\\W_{_HAN}]+(?:[-_][^\\W_{_HAN}]+)*+"
#: A run of Chinese characters, with the short Latin words written against them. A Latin
#: word joined to the next by a hyphen is the next's, not the Chinese before it (使用B-tree索引
#: is 使用, b-tree, 索引); so is a letter with ``++`` or ``#`` (学习C++, 使用C#开发), but in a
#: run that a hashtag's ``#`` opens (not a language's: 学习C#和F#), where ``#`` closes the
#: hashtag (#补充维生素C#).
_HAN_START = f"(?:{_BESIDE}(?=[{_HAN}]))?[{_HAN}]++"
_NOT_BESIDE = f"[^\\W_{_HAN}]|[-_][^\\W_{_HAN}]|\\+\\+"
_HASHTAG_START = "(?<=#)(?<![a-z]#)"
_HAN_GROUP = (
    f"{_HASHTAG_START}{_HAN_START}(?:{_BESIDE}(?!{_NOT_BESIDE})[{_HAN}]*+)*+"
    f"|{_HAN_START}(?:{_BESIDE}(?!{_NOT_BESIDE}|#)[{_HAN}]*+)*+"
)
_RUNS = re.compile(f"(?P<han>{_HAN_GROUP})|(?P<word>{_WORD})")
_HAN_GROUPS = re.compile(_HAN_GROUP, re.IGNORECASE)  # on text as written, not folded
_HAN_RUN = re.compile(f"[{_HAN}]+")
_WORDS = re.compile(_WORD)
_JOINERS = re.compile("[-_]")
_LATIN_WORD = re.compile("[a-z]+")
_LATIN_PAIR = re.compile("[a-z]{2}")
#: A run's Latin words and the Chinese between them, each by itself.
_LATIN_OR_HAN = re.compile("[a-z]+|[^a-z]+")
#: Full-width digits and letters, as GB2312-era pages write Latin words (ＦＩＦＡ, ＮＢＡ,
#: ２０２６) and their ASCII forms (full-width punctuation splits words either way).
#: Hyphens other than the ASCII one (Unicode's, the non-breaking one, the full-width one)
#: join words as it does (``B‐tree``, ``Ｂ－ｔｒｅｅ``).
_WIDE = re.compile("[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\u2010\u2011\uff0d]")
_NARROW = {
    wide: wide - 0xFEE0
    for wide in (*range(0xFF10, 0xFF1A), *range(0xFF21, 0xFF3B), *range(0xFF41, 0xFF5B))
} | dict.fromkeys((0x2010, 0x2011, 0xFF0D), "-")
_SPACES = re.compile(r"\s+")
#: Where a camelCase word's words join: a capital after a small letter, or an acronym
#: before a word (``URLConnection``), not before its plural (``URLs``).
_CAMEL_JOIN = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]{2}")
#: The rest of a word, with the words it is joined to (``OpenSSL-3``), after which the
#: camelCase ones' words come: ``openssl-3 open ssl``, where ``openssl 3`` stays a phrase.
_WORD_REST = re.compile(r"[A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*")
_CAMEL_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _data_lines(name: str) -> Iterator[str]:
    """The lines of one of the package's word lists, without comments and blank lines."""
    text = resources.files("topicspider").joinpath(name).read_text("utf-8")
    return (kept for line in text.splitlines() if (kept := line.split("#", 1)[0].strip()))


STOPWORDS = frozenset(_data_lines("stopwords.txt"))
#: Plurals no rule folds (Latin and Greek ones, those of -s, -o and -f words), each to its
#: singular.
IRREGULAR_PLURALS = dict(line.split() for line in _data_lines("plurals.txt"))


_STEMMER = snowballstemmer.stemmer("english")
#: Words Snowball stems to no piece of themselves (``dying`` is ``die``), and the pieces
#: a text that has one of them holds.
_STEM_EXCEPTIONS = {"die": ("di", "dy"), "lie": ("li", "ly"), "tie": ("ti", "ty")}


def _stem(word: str) -> str:
    """An English word's stem, so that 'tweaking', 'tweaks' and 'tweaked' meet 'tweak',
    'protocols' 'protocol' and 'cookies' 'cookie' (both sides use this): the Snowball
    English stemmer (Porter's second), as Sphinx's and Lucene's searches stem. Plurals no
    rule fits ('matrices', 'indices') are made singular first, from a word list."""
    return _STEMMER.stemWord(IRREGULAR_PLURALS.get(word, word))


@functools.lru_cache(maxsize=1 << 18)
def _keep(word: str) -> str | None:
    """The token a word becomes, or None (cached: a site's vocabulary repeats)."""
    if word.isascii():
        if len(word) < 2 or word.isdigit() or word in STOPWORDS:
            return None
        word = _stem(word)
    return None if word in STOPWORDS else word


def has_han(text: str) -> bool:
    """Whether ``text`` has a Chinese character."""
    return _HAN_RUN.search(text) is not None


def _folded(text: str) -> str:
    """Lowercased, full-width letters and digits as ASCII, each camelCase word followed by
    its words: the words tokens are made of."""
    text = _narrowed(text)
    lowered = text.lower()
    if lowered != text:  # a capital: maybe a camelCase word (on Chinese pages seldom)
        lowered = _with_camel_words(text).lower()
    return lowered


def _narrowed(text: str) -> str:
    return text.translate(_NARROW) if _WIDE.search(text) else text


def searchable(text: str) -> str:
    """``text`` as :func:`mentions`' pattern is searched in: lowercased, full-width letters
    as ASCII (ＮＢＡ is nba), in Simplified characters."""
    return simplified(_narrowed(text.lower()))


def _with_camel_words(text: str) -> str:
    """``text`` with each camelCase word followed by its words (``BlockingQueue Blocking
    Queue``, ``URLConnection URL Connection``), as an API reference's names are read. Found
    by where two words join: a pattern matched at every word took twice as long."""
    pieces: list[str] = []
    done = read = 0  # the text taken into pieces, and the words looked at
    for join in _CAMEL_JOIN.finditer(text):
        if join.start() < read:
            continue  # another join of the word just looked at
        start = join.start()
        while start > read and text[start - 1].isascii() and text[start - 1].isalnum():
            start -= 1
        end = read = _WORD_REST.match(text, join.start()).end()  # type: ignore[union-attr]
        if (
            text[start].isdigit()
            or text[start - 1 : start].isalnum()
            or text[end : end + 1].isalnum()
        ):
            continue  # a number (0xFF), or written against other letters (VoIP电话, ÉcoleNormale)
        word = text[start:end]
        if "-" in word or "_" in word:  # the camelCase ones of the words joined
            word = " ".join(joined for joined in _JOINERS.split(word) if _CAMEL_JOIN.search(joined))
        pieces += (text[done:end], " ", " ".join(_CAMEL_PARTS.findall(word)))
        done = end
    return "".join([*pieces, text[done:]]) if pieces else text


def tokenize(text: str) -> list[str]:
    """Lowercased tokens in text order, with punctuation and stop words dropped;
    full-width letters and digits are read as ASCII (``ＦＩＦＡ`` is ``fifa``).

    Only runs of Chinese characters (with a short Latin word written against them)
    go through jieba, without its HMM so that the dictionary (with the keywords added)
    decides the cut. Other scripts split on non-word characters, which is what jieba
    would do to them, only faster; a text with no Chinese needs only that.
    """
    text = _folded(text)
    if not _HAN_RUN.search(text):
        return list(chain.from_iterable(map(_kept, _WORDS.findall(text))))
    tokens: list[str] = []
    for han, word in _RUNS.findall(text):  # tuples, not match objects: a third faster
        tokens.extend(_cut(han) if han else _kept(word))
    return tokens


@functools.lru_cache(maxsize=1 << 16)
def _kept(word: str) -> tuple[str, ...]:
    """The tokens of a word, or of words joined by hyphens (see :func:`_spelled_word`).
    Cached as :func:`_keep` is, for fewer words: the joined ones of a site's addresses and
    names are many, and each is a tuple."""
    if not _JOINERS.search(word):
        return (token,) if (token := _keep(word)) else ()
    return tuple(token for token, _ in _spelled_word(word))


def _spelled_word(word: str) -> tuple[tuple[str, str], ...]:
    """``(token, word)`` for each of the words joined by hyphens. A single letter or a
    number joined to a word with a letter is kept (``b-tree``, ``D-Bus``, ``sha-1``,
    ``utf-8``, ``x86-64``), where alone it is not: it is half of what the word names, and
    a keyword ``b-tree`` read as ``tree`` matched every tree."""
    parts = _JOINERS.split(word)
    kept = [_keep(part) for part in parts]
    spelled = []
    for i, (part, token) in enumerate(zip(parts, kept, strict=True)):
        if token:
            spelled.append((token, part))
        elif _beside_a_word(part) and any(
            joined and not _beside_a_word(joined) for joined in kept[max(i - 1, 0) : i + 2]
        ):
            spelled.append((part, part))
    return tuple(spelled)


def joined_terms(text: str) -> Iterator[tuple[str, str]]:
    """``(term, word)`` for each word joined to a letter or a number (``b tree``, written
    ``b-tree``): a phrase of its own, which the tokens, ``b`` and ``tree``, do not tell."""
    for han, word in _RUNS.findall(_folded(text)):
        if not han and _JOINERS.search(word):
            spelled = _spelled_word(word)
            if any(_beside_a_word(token) for token, _ in spelled):
                yield " ".join(t for t, _ in spelled), "-".join(part for _, part in spelled)


def has_chinese_word(text: str) -> bool:
    """Whether ``text`` has a word of two to four characters of jieba's dictionary, cut or
    not (上月 is cut 上|月): Chinese does, hanzi that other bytes read as seldom do (KOI8-R
    вода in GBK is 紫牧)."""
    return any(
        _jieba().get_FREQ(run[start : start + size])
        for run in map(_simplified_run, _HAN_RUN.findall(text))
        for size in (2, 3, 4)
        for start in range(len(run) - size + 1)
    )


def spelled_tokens(text: str) -> Iterator[tuple[str, str]]:
    """``(token, word)`` for each token, as the text spells it: a stemmed token (``cooki``)
    can be shown as a person wrote it (``cookies``), and a Chinese one read in Simplified
    characters (``联赛``) in the Traditional ones of the text (``聯賽``)."""
    for match in _RUNS.finditer(_folded(text)):
        if match.lastgroup == "han":
            yield from _spelled_run(match.group())
        else:
            yield from _spelled_word(match.group())


def _spelled_run(run: str) -> Iterator[tuple[str, str]]:
    """The tokens of a run of Chinese characters with the characters the run has in their
    place (see :func:`spelled_as`). Reading Taiwan's words can change a word's length
    (記憶體 is 内存): the tokens of such a run are spelled as they are read."""
    read = _simplified_run(run)
    if len(read) != len(run):
        run = read
    start = 0
    for word in _segmented(read):
        end = start + len(word)
        if token := _keep(word):
            yield token, spelled_as(token, run[start:end])
        start = end


def spelled_as(token: str, written: str) -> str:
    """``written`` if it reads back as ``token``, else ``token``: a word in characters both
    scripts share is read as the mainland's only beside Traditional ones (列印 in
    選擇列印範圍 is 打印, 列印 alone stays 列印), and a keyword is read alone."""
    return written if _simplified_run(written) == token else token


def mentions(words: Iterable[str]) -> re.Pattern[str] | None:
    """A pattern found in every :func:`searchable` text that has one of these tokens (or one of
    them inside a longer Chinese word): a text it is not found in needs no tokenizing to
    know that it has none. A Chinese token is a piece of the text; an English one is a
    stem, and every word stemmed to it holds the stem less its last letter (``queri`` of
    ``query``, ``possibl`` of ``possibility``), but for the plurals of
    :data:`IRREGULAR_PLURALS` (``mice``), which the pattern holds as they are written, and
    for :data:`_STEM_EXCEPTIONS`.

    None for more than :data:`MENTIONS_MAX` words: ``re`` tries every alternative at every
    place, and searching a link's text for more (a glossary for keywords) costs more
    than tokenizing it."""
    words = set(words)
    # A letter or a number is kept only beside a word (b-tree): that word is looked for.
    words = {word for word in words if not _beside_a_word(word)} or words
    pieces = {piece for word in words for piece in _pieces(word)}
    pieces.update(
        plural for plural, singular in IRREGULAR_PLURALS.items() if _stem(singular) in words
    )
    if len(pieces) > MENTIONS_MAX:
        return None
    return re.compile("|".join(map(re.escape, sorted(pieces, key=len, reverse=True))))


def _beside_a_word(token: str) -> bool:
    """Whether a token is a letter or a number, which is kept only beside a word."""
    return token.isascii() and (len(token) == 1 or token.isdigit())


def _pieces(token: str) -> tuple[str, ...]:
    """What every text that has the token holds (see :func:`mentions`)."""
    if not token.isascii() or token.endswith(("+", "#")):  # C++ and C#: as they are written
        return (token,)
    return _STEM_EXCEPTIONS.get(token, (token[:-1] or token,))


@functools.lru_cache(maxsize=1 << 15)
def _cut(run: str) -> tuple[str, ...]:
    """The tokens kept of a run of Chinese characters. Cached: most runs of a site's link
    texts recur (nine in ten on the handbook, more on the Python docs), and a third of
    its pages' runs; ``add_terms`` empties the cache, as the cut may change."""
    return tuple(filter(None, map(_keep, _segmented(_simplified_run(run)))))


def _segmented(run: str) -> list[str]:
    """jieba's words of a run, in lower case. The run's Latin letters are cut in capitals,
    as jieba's dictionary and :func:`add_terms` write them. A cut inside a Latin word
    (S|IP电话, VO|IP电话, IPA|D版: a dictionary word took the end of a longer one) is
    undone: the letters are read by themselves, and the Chinese around them, as before."""
    words = [word.lower() for word in _jieba().lcut(run.upper(), HMM=False)]
    end = 0
    for word in words[:-1]:
        end += len(word)
        if _LATIN_PAIR.match(run, end - 1):
            return [
                piece
                for part in _LATIN_OR_HAN.findall(run)
                for piece in ([part] if part[0].isascii() else _jieba().lcut(part, HMM=False))
            ]
    return words


@functools.lru_cache(maxsize=200_000)
def subwords(token: str) -> tuple[str, ...]:
    """Dictionary words inside a longer Chinese word (足球 and 比赛 in 足球比赛),
    as jieba's search mode finds them, and the Latin word of one that has both (ip in
    ip地址), so a keyword matches inside compounds."""
    if len(token) < 3 or token.isascii():
        return ()
    # Only a word jieba made of Latin letters and Chinese (ip地址): not café's "caf".
    latin = tuple(filter(None, map(_keep, _LATIN_WORD.findall(token)))) if has_han(token) else ()
    return latin + tuple(
        gram
        for size in (2, 3)
        if size < len(token)
        for i in range(len(token) - size + 1)
        if _jieba().get_FREQ(gram := token[i : i + size]) and gram not in STOPWORDS
    )


def normalize_term(term: str) -> str:
    """A keyword term as the tokenizer sees it: its tokens joined by single spaces."""
    term = _SPACES.sub(" ", term.strip())
    add_terms([term])
    return " ".join(tokenize(term))


def add_terms(terms: Iterable[str]) -> None:
    """Teach jieba the keyword terms so that it never splits them."""
    for term in terms:
        for run in _RUNS.finditer(term.lower()):
            if run.lastgroup == "han":
                word = _simplified_run(run.group()).upper()
                _jieba().add_word(word, freq=max(_jieba().get_FREQ(word) or 0, 2000))
    _cut.cache_clear()
