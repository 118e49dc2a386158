"""The weighted keyword vector that defines a topic.

A topic is given as a keyword file (UTF-8 or GBK, one ``term weight`` per line,
``#`` comments), as the bare name of a file in ``keywords/``, or inline as
``term:weight,term:weight``. Every mistake is reported with the file and line
so a crawl never starts on a half-read topic.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from topicspider.charset import (
    decode_text_file,
    editor_lines,
    gbk_reading,
    koi8r_reading,
    undecoded,
)
from topicspider.exceptions import KeywordError, NoKeywords
from topicspider.tokens import has_chinese_word, normalize_term

if TYPE_CHECKING:
    from collections.abc import Callable
    from importlib.resources.abc import Traversable

__all__ = ["KeywordError", "KeywordVector", "load_keywords", "parse_inline", "parse_keyword_file"]

_WEIGHT_AT_END = re.compile(r"^(?P<term>.+?)\s+(?P<weight>\S+)$")
#: Between inline terms, and between a term and its weight: the ASCII marks, or the
#: full-width ones a Chinese input method types.
_INLINE_SEPARATOR = re.compile("[,;\uff0c\uff1b\u3001]")
_FULL_WIDTH_COLON = "\uff1a"
_INLINE_MARK = re.compile("[:,;\uff1a\uff0c\uff1b\u3001]")
#: A weight inside a term, before another term: ``a:3 b`` of ``a:3 b:2``. The colons of
#: ``std::vector`` are none, nor is that of a ratio or a time, ``16:9``, ``10:30``.
_WEIGHT_INSIDE = re.compile(r"(?<!\S)(?!\d+:)\S+:\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s")
#: A term's Latin words and numbers (``C`` and ``types`` of ``C types``, ``802`` and ``11``).
_LATIN_RUN = re.compile(r"[A-Za-z0-9]+")

#: What to do about a keyword file that reads as Chinese in GBK and in UTF-8.
#: The weights a keyword may have.
_LIGHTEST, _HEAVIEST = Decimal("1e-100"), Decimal("1e100")
#: The Russian words a GBK keyword file must read as in KOI8-R to be refused: a name or
#: two in GBK can read as Russian words by chance (赵雷 as утюв, one in 25), and is only
#: warned of.
_RUSSIAN_WORDS = 3
_GBK_HINT = (
    "read as UTF-8; in GBK it says {}: if it is GBK, save it as UTF-8;"
    " if it is UTF-8, save it with a byte order mark"
)


@dataclass(frozen=True)
class KeywordVector:
    """Terms (normalized, as the tokenizer will see them) and their positive weights."""

    weights: dict[str, float]
    #: Where the terms came from: a keyword file's path; empty for inline terms.
    source: str = field(default="", compare=False)
    #: What the keyword file, read as UTF-8, says in GBK, if that is Chinese too.
    gbk_reading: str | None = field(default=None, compare=False)
    #: What the keyword file, read as GBK, says in KOI8-R, if that is Russian and the hanzi
    #: make no Chinese word.
    koi8r_reading: str | None = field(default=None, compare=False)
    #: A warning for each term that, read as pages are, lost a number or a single letter,
    #: and so matches more than it says.
    broadened: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        if not self.weights:
            raise KeywordError("the keyword vector is empty")

    @property
    def norm(self) -> float:
        return math.sqrt(sum(w * w for w in self.weights.values()))

    def __len__(self) -> int:
        return len(self.weights)

    def describe(self, shown: int = 10) -> str:
        """The vector in a line for the log: its size, its source, its heaviest terms as
        the crawl matches them (English words stemmed, Traditional characters read as
        Simplified)."""
        heaviest = sorted(self.weights.items(), key=lambda item: -item[1])
        terms = ", ".join(f"{term} {weight:g}" for term, weight in heaviest[:shown])
        more = f", and {len(heaviest) - shown} more" if len(heaviest) > shown else ""
        source = f" from {self.source}" if self.source else ""
        count = f"{len(self)} term{'s' if len(self) > 1 else ''}"
        return f"{count}{source}, as pages are matched: {terms}{more}"

    def encoding_warnings(self) -> tuple[str, ...]:
        """What to tell the user of a keyword file that reads as another text in another
        encoding: Chinese in GBK, or Russian in KOI8-R."""
        warnings = []
        if self.gbk_reading is not None:
            warnings.append(f"{self.source}: {_GBK_HINT.format(_shown(self.gbk_reading))}")
        if self.koi8r_reading is not None:
            warnings.append(
                f"{self.source}: read as GBK, {_shown(self.to_text())}, no Chinese word; in"
                f" KOI8-R it says {_shown(self.koi8r_reading)}: if it is KOI8-R, save it as UTF-8"
            )
        return tuple(warnings)

    def to_text(self) -> str:
        """The keyword-file form, stable so that two crawls can compare vectors."""
        return "".join(f"{term} {weight:g}\n" for term, weight in sorted(self.weights.items()))


def _weight(raw: str, where: str) -> float:
    """Read exactly: as a float, ``1e400`` is infinite and ``1e-400`` is 0, which were told
    as not positive."""
    try:
        weight = Decimal(raw)
    except InvalidOperation:
        raise KeywordError(f"{where}: weight {raw!r} is not a number") from None
    if weight.is_nan() or weight <= 0:
        raise KeywordError(f"{where}: weight {raw!r} must be a positive number")
    if not _LIGHTEST <= weight <= _HEAVIEST:  # squared by the cosine: beyond, infinite or 0
        raise KeywordError(f"{where}: weight {raw!r} must be a number from 1e-100 to 1e100")
    return float(weight)


def _add(weights: dict[str, float], term: str, weight: float, where: str) -> str | None:
    """Add ``term``'s weight; a warning if the term, read as pages are, lost a number or a
    single letter: ``C types`` matches every page's ``types``, ``H.264 codec`` any codec."""
    normalized = normalize_term(term)
    if not normalized:
        raise KeywordError(
            f"{where}: term {term!r} matches nothing: pages are read without punctuation,"
            " numbers, single letters and stop words"
        )
    weights[normalized] = weights.get(normalized, 0.0) + weight
    kept = set(_LATIN_RUN.findall(normalized))
    lost = [
        run
        for run in _LATIN_RUN.findall(term)
        if (run.isdigit() or len(run) == 1) and run.lower() not in kept
    ]
    if not lost:
        return None
    return (
        f"{where}: term {term!r} is matched as {normalized!r}, which is broader: pages are"
        f" read without numbers and single letters ({', '.join(map(repr, lost))})"
    )


def parse_keyword_file(path: Traversable) -> KeywordVector:
    """Parse a keyword file; a term may contain spaces, the weight is the last field.

    ``path`` may also be a resource inside a zipped egg (see :func:`bundled_keywords_dir`).
    A file that reads as Chinese in GBK too is read as UTF-8; the vector keeps the GBK
    reading (``gbk_reading``), which the crawl shows beside it, and a mistake in the
    file says it.
    """
    try:
        data = path.read_bytes()
        content = decode_text_file(data)
    except OSError as exc:
        raise KeywordError(f"{path}: cannot read keyword file: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        message = f"{path}: keyword file is neither UTF-8 nor GBK ({exc.reason})"
        raise KeywordError(message) from None
    russian = koi8r_reading(data)
    if russian and has_chinese_word(content):
        russian = None
    if russian and sum(not word.isascii() for word in russian.split()) >= _RUSSIAN_WORDS:
        raise KeywordError(
            f"{path}: keyword file is neither UTF-8 nor GBK (in GBK it reads as"
            f" {_shown(content)}, no Chinese word, in KOI8-R as {_shown(russian)}):"
            " save it as UTF-8"
        )
    other = gbk_reading(data)
    try:
        weights, broadened = _file_weights(path, content)
    except KeywordError as error:
        if other is None:
            raise
        raise KeywordError(f"{error} ({_GBK_HINT.format(_shown(other))})") from None
    return KeywordVector(
        weights,
        source=str(path),
        gbk_reading=other,
        koi8r_reading=russian,
        broadened=tuple(broadened),
    )


def _shown(text: str) -> str:
    """A file's text in one short line, for a message."""
    terms = " ".join(text.split())
    return repr(terms if len(terms) <= 60 else f"{terms[:60]}…")


def _file_weights(path: Traversable, content: str) -> tuple[dict[str, float], list[str]]:
    weights: dict[str, float] = {}
    broadened: list[str] = []
    for lineno, line in enumerate(editor_lines(content), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{path}, line {lineno}"
        match = _WEIGHT_AT_END.match(line)
        if not match:
            raise KeywordError(f"{where}: expected 'term weight', got {line!r}")
        if warning := _add(weights, match["term"], _weight(match["weight"], where), where):
            broadened.append(warning)
    if not weights:
        raise KeywordError(f"{path}: no keywords in file")
    return weights, broadened


def parse_inline(spec: str) -> KeywordVector:
    """Parse ``term:weight,term:weight`` (a missing weight means 1); ``;`` separates terms
    too, and ``足球：3，体育：2`` or ``足球：3；体育：2`` is read as a Chinese input method
    types it."""
    weights: dict[str, float] = {}
    broadened: list[str] = []
    for index, part in enumerate(_INLINE_SEPARATOR.split(spec), start=1):
        part = part.strip().replace(_FULL_WIDTH_COLON, ":")
        if not part:
            continue
        where = f"keywords argument, item {index} ({part!r})"
        if undecoded(part):
            raise KeywordError(
                f"{where}: not UTF-8 text (GBK bytes under a UTF-8 terminal?): type it in"
                " UTF-8, or put the terms in a keyword file, which may be GBK"
            )
        term, sep, raw = part.rpartition(":")
        if _WEIGHT_INSIDE.search(term):  # "a:3 b:2" would be the phrase "a:3 b" weighing 2
            raise KeywordError(f"{where}: two terms in one item: separate them with ','")
        if not sep or term.endswith(":"):  # no weight, or the colons of "std::vector"
            term, raw = part, "1"
        if warning := _add(weights, term, _weight(raw.strip(), where), where):
            broadened.append(warning)
    if not weights:
        raise KeywordError("keywords argument: no keywords given")
    return KeywordVector(weights, broadened=tuple(broadened))


def bundled_keywords_dir() -> Traversable:
    """``keywords/`` of the checkout, or the copy ``setup.py`` packs into the egg or wheel.

    Inside an egg the copy is a zipped resource, not a folder: read it through
    the returned object (``/``, ``is_file``, ``read_bytes``, ``iterdir``), never ``open()``.
    """
    checkout = Path(__file__).resolve().parent.parent / "keywords"
    if checkout.is_dir():
        return checkout
    return resources.files("topicspider").joinpath("keywords")


def _topic_names(directory: Traversable) -> list[str]:
    """The bundled topic names; none if ``directory`` is missing."""
    if not directory.is_dir():
        return []
    names = (entry.name for entry in directory.iterdir())
    return sorted(name.removesuffix(".txt") for name in names if name.endswith(".txt"))


def _file(path: Callable[[], Traversable]) -> Traversable | None:
    """The file ``path`` makes, if there is one. A list of terms is no file name, and may
    not even make one: longer than the system allows, ``~name`` of no user, a NUL in it."""
    try:
        found = path()
        return found if found.is_file() else None
    except (OSError, ValueError, RuntimeError):
        return None


def _folder(spec: str) -> bool:
    try:
        return Path(spec).expanduser().is_dir()
    except (OSError, ValueError, RuntimeError):  # as in _file
        return False


def _bundled(name: str, directory: Traversable) -> Traversable | None:
    """``keywords/NAME.txt`` if ``name`` is a bare name (no path, no ``.txt``) and it is there."""
    if re.fullmatch(r"[\w.-]+", name) and not name.endswith(".txt"):
        return _file(lambda: directory / f"{name}.txt")
    return None


def load_keywords(spec: str, keywords_dir: Traversable | None = None) -> KeywordVector:
    """Resolve a ``-a keywords=`` value: a file path, a bundled name, or inline terms."""
    spec = spec.strip()
    if not spec:
        raise NoKeywords(
            "no keywords: pass -a keywords=NAME (keywords/NAME.txt), -a keywords=FILE"
            " or -a keywords='足球:3,比赛:2'"
        )
    path = _file(lambda: Path(spec).expanduser())
    if path is not None:
        return parse_keyword_file(path)
    directory = keywords_dir or bundled_keywords_dir()
    named = _bundled(spec, directory)
    if named is not None:
        return parse_keyword_file(named)
    if _folder(spec):
        raise KeywordError(f"{spec}: a folder, not a keyword file (one term and weight a line)")
    # A path with a comma in it (a typo: "sports.txt,") is no list of terms.
    if spec.rstrip(",").endswith(".txt") or (("/" in spec or "\\" in spec) and ":" not in spec):
        where = "" if Path(spec).is_absolute() else f" (relative to {Path.cwd()})"
        hint = "; inline terms are term:weight,..." if "," in spec else ""
        raise KeywordError(f"{spec}: keyword file not found{where}{hint}")
    bare = spec.strip(", ")
    if bare != spec and _bundled(bare, directory) is not None:
        raise KeywordError(
            f"keywords {spec!r}: one term and a stray comma, where keywords/{bare}.txt is a"
            f" keyword file: -a keywords={bare} for the file, -a keywords={bare}:1 for the term"
        )
    if _INLINE_MARK.search(spec):
        return parse_inline(spec)
    available = ", ".join(_topic_names(directory)) or "none"
    raise KeywordError(
        f"keywords {spec!r}: no such file, no keywords/{spec}.txt (available: {available}),"
        " and not 'term:weight,...'"
    )
