"""Find the encoding of a page and decode it.

Sources are tried in order, as browsers do: a byte order mark, the HTTP
``Content-Type`` charset, a ``<meta>`` declaration; then the bytes themselves. A
declaration is only believed when the body decodes with it, and a GB one is read as
Big5 (a Big5 one as GB) when the body reads better so, because Chinese sites often
declare one encoding and serve another. A stray byte or a character cut off is no
reason to doubt an encoding, declared or guessed. Nothing here raises on bad bytes or
on a bad declaration: one that names no charset (``hex``, ``rot13``) is ignored.
"""

from __future__ import annotations

import codecs
import collections
import encodings
import functools
import os
import re
from typing import TYPE_CHECKING

from charset_normalizer import from_bytes
from w3lib.encoding import (
    html_body_declared_encoding,
    http_content_type_encoding,
    read_bom,
    resolve_encoding,
)

if TYPE_CHECKING:
    from scrapy.http import Response

#: Only this many bytes are checked (the leading ones, or those from the first non-ASCII
#: byte); a character cut at the end is not an error.
SAMPLE_SIZE = 64 * 1024

# The labels of the WHATWG Encoding Standard, which browsers follow, that Python does not
# know, and GBK's Microsoft name (registered at IANA), by the codec they name.
_LABELS = {
    "utf-8": "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 x-unicode20utf8",
    "utf-16-le": "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff",
    "utf-16-be": "unicodefffe",
    "gb18030": "csgb2312 gb_2312 x-gbk windows-936",
    "big5hkscs": "cn-big5 x-x-big5",
    "euc_jp": "cseucpkdfmtjapanese x-euc-jp",
    "cp949": "cseuckr csksc56011987 iso-ir-149 ks_c_5601-1989 ksc_5601 windows-949",
    "cp1252": "iso88591 x-cp1252",
    "cp1254": "iso88599 x-cp1254",
    "cp874": "dos-874 iso885911",
    **{f"cp125{n}": f"x-cp125{n}" for n in (0, 1, 3, 5, 6, 7, 8)},
    **{f"iso8859-{n}": f"iso8859{n}" for n in (2, 3, 4, 5, 10, 13, 14)},
    "iso8859-6": "csiso88596e csiso88596i iso-8859-6-e iso-8859-6-i iso88596",
    "iso8859-7": "iso88597 sun_eu_greek",
    "iso8859-8": "csiso88598e csiso88598i iso-8859-8-e iso-8859-8-i iso88598 logical visual",
    "iso8859-15": "csisolatin9 iso885915",
    "koi8-r": "koi koi8",
    "koi8-u": "koi8-ru",
    "mac-roman": "csmacintosh mac x-mac-roman",
    "mac-cyrillic": "x-mac-cyrillic x-mac-ukrainian",
}
_CODEC_OF_LABEL = {
    encodings.normalize_encoding(label).lower(): codec
    for codec, labels in _LABELS.items()
    for label in labels.split()
}

# Errors forgiven, one per so many non-ASCII bytes. A real page may hold a stray byte, a
# character cut off or a snippet pasted in another encoding, and a wrong declaration fails on
# most characters. A guess needs more: Russian in KOI8-R reads as common hanzi in GBK, with
# one error in thirty bytes (after each word of an odd length).
_DECLARED = 20
_GUESSED = 100
# Bytes of another encoding fail as UTF-8 on three in five of their non-ASCII bytes or more
# (GBK 0.76, Big5 0.71, Shift_JIS 0.71, Latin-1 and Cyrillic all, on average), a few words
# on as few as one in five. A page declared UTF-8 on which fewer than one in three fail, and
# that is no GB or Big5, is UTF-8 with a part in another encoding: a sidebar or a footer
# left in GBK.
_MOSTLY_UTF8 = 3
_LINE_END = re.compile(r"\r\n?|\n")
#: Bytes of a file name that were not UTF-8, as Python keeps them (``surrogateescape``),
#: with the characters among them that a few of its bytes happen to make in UTF-8 (GBK
#: 关键词 is ``\xb9`` ``ؼ`` ``\xfc\xb4\xca``); not those beside them, a message's own.
_ESCAPED_BYTES = re.compile("[\udc80-\udcff](?:[^\x00-\x7f]*[\udc80-\udcff])?")
# The bytes ``_read`` decodes at a time.
_CHUNK = 1024

_ERROR_MARK = "\udfff"
# How many of a text file's rare hanzi an error shows.
_RARE_SHOWN = 6
_COUNT_ERRORS = "topicspider_charset_mark"
_REPLACE = "topicspider_charset_replace"
_ASCII = bytes(range(128))
_NON_ASCII = re.compile(rb"[\x80-\xff]")
# What UTF-8 text may hold besides ASCII and the letters from U+00C0 to U+07FF (accented,
# Greek, Cyrillic): symbols such as © or “, hanzi, error marks.
_NOT_LETTERS = re.compile("[\x80-\xbf\u0800-\U0010ffff]")
# The codec a page declared in one Chinese encoding may be written in instead.
_OTHER_CHINESE = {
    **dict.fromkeys(("gb2312", "gbk", "gb18030"), "big5hkscs"),
    **dict.fromkeys(("big5", "cp950", "big5hkscs"), "gb18030"),
}
# The Chinese codecs a page declared in an encoding may be written in instead: the other
# Chinese one, or either for a Korean or Japanese declaration, a template's left on a
# Chinese site (GBK reads as EUC-KR's Hangul and Hanja, or Shift_JIS's half-width katakana,
# mostly without an error).
_CHINESE_INSTEAD = {
    **{codec: (other,) for codec, other in _OTHER_CHINESE.items()},
    **dict.fromkeys(("cp949", "euc_kr", "cp932", "shift_jis", "euc_jp"), ("gb18030", "big5hkscs")),
}

# The least share of the most frequent hanzi below (``_frequent_share``) that a few
# sentences of real Chinese text hold (six tenths on average).
_REAL_TEXT = 0.3
# The 300 most frequent hanzi, counted over the words of jieba's dictionary times their
# counts (they make three fifths of that text), each followed by its Traditional forms
# (OpenCC s2t, s2tw, s2hk).
_FREQUENT = frozenset(
    "一是人了不在有大中国國和为為这這上他个個地年来來我会會以到时時要出的生学學说說説道民家子"
    "也成行下们們于於后後就发發自之对對得主长長可过過天作分方用多你着著部能市等业業全里裡工公"
    "经經本都而高政法面门門动動日进進事区區代那去心小同北定开開产產前其军軍还還然起种種所如现"
    "現理机機体體表力好外与與文当當两兩实實重新三么麼只山水关關明从從化平建又制南内內西没沒此"
    "将將员員名手最东東头頭者月间間无無安看见見各城十相但已些正口通想度加第她合院物性战戰由位"
    "常点點海意场場武使次二向治因立数數样樣身情入原问問把路被并並利石老教万萬知级級量任江及应"
    "應省资資委务務元美特期世湖回系比气氣汉漢总總展电電科金先声聲提品设設或义義王社很统統处處"
    "四首共马馬形己儿兒司太目领領基队隊直计計别別女权權话話少流命至报報米给給打变變果书書清活"
    "几幾州华華解议議更称稱程今决決张張导導术術府才保交放管结結师師便走达達族反再题題色五"
)

# Text codecs of Python that no page is written in: they turn backslash escapes into
# characters, markup included. (Codecs such as hex or rot13 are not text codecs at all.)
_NOT_CHARSETS = frozenset({"unicode-escape", "raw-unicode-escape"})
_WIDE = ("utf-16", "utf-32")
_CONTROL_BYTES = bytes([*range(9), *range(14, 32)])


def _web_label(name: str) -> codecs.CodecInfo | None:
    codec = _CODEC_OF_LABEL.get(encodings.normalize_encoding(name).lower())
    return codecs.lookup(codec) if codec else None


def _euro(exc: UnicodeDecodeError) -> int | None:
    """Where the euro sign ends that Python's codec refused and browsers read: Windows
    GBK's 0x80 and Big5's 0xA3E1 (cp950; big5hkscs lacks it)."""
    if exc.encoding == "gb18030" and exc.object[exc.start] == 0x80:
        return exc.start + 1
    if exc.encoding == "big5hkscs" and exc.object[exc.start : exc.start + 2] == b"\xa3\xe1":
        return exc.start + 2
    return None


def _mark(exc: UnicodeDecodeError) -> tuple[str, int]:
    # No decoder outputs a lone surrogate, so counting marks counts errors exactly.
    euro_end = _euro(exc)
    return ("\u20ac", euro_end) if euro_end else (_ERROR_MARK, exc.end)


def _replace(exc: UnicodeDecodeError) -> tuple[str, int]:
    euro_end = _euro(exc)
    return ("\u20ac", euro_end) if euro_end else ("\ufffd", exc.end)


codecs.register(_web_label)
codecs.register_error(_COUNT_ERRORS, _mark)
codecs.register_error(_REPLACE, _replace)


def detect_encoding(body: bytes, content_type: str | None = None) -> str:
    """Return the Python codec name ``body`` is written in.

    GBK and GB2312 are reported as ``gb18030``, their superset; Latin-1 and
    ASCII as ``cp1252``, as browsers do.
    """
    head = body[:SAMPLE_SIZE]
    sample, final = _sample(body)
    bom_encoding, _ = read_bom(head)
    meta_encoding = html_body_declared_encoding(head)
    if meta_encoding and meta_encoding.startswith(_WIDE):
        # The HTML standard: a <meta> that could be read this way is not in UTF-16 or UTF-32.
        meta_encoding = "utf-8"
    declared = [
        encoding
        for encoding in (bom_encoding, http_content_type_encoding(content_type), meta_encoding)
        if encoding and _is_charset(encoding)
    ]
    for encoding in declared:
        believed = _believed(sample, encoding, final, utf8_declared="utf-8" in declared)
        if believed:
            return believed
    return _guess(sample, final, utf8_declared="utf-8" in declared)


def is_binary(body: bytes, content_type: str | None = None) -> bool:
    """Whether ``body`` is no text (a PDF, an image, an archive sent as ``text/html``): over
    one in 20 of its first 4 KB are control bytes. UTF-16 and UTF-32 text is mostly NULs
    (the ASCII of its markup), and its hanzi are bytes of every value: it is text when its
    byte order mark or ``content_type`` says so and it decodes that way. Other NULs count
    as control bytes: a page may hold a few (a form's value from a padded database field),
    which browsers read past."""
    head = body[:4096]
    if b"\x00" in head and detect_encoding(head, content_type).startswith(_WIDE):
        return False
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    return controls > len(head) // 20


def content_type(response: Response) -> str:
    """The response's ``Content-Type`` header, "" if none (read as Latin-1, as HTTP is)."""
    return (response.headers.get("Content-Type") or b"").decode("latin-1")


def decode(body: bytes, content_type: str | None = None) -> tuple[str, str]:
    """Return ``(encoding, text)``; undecodable bytes become U+FFFD."""
    encoding = detect_encoding(body, content_type)
    return encoding, to_text(body, encoding)


def to_text(body: bytes, encoding: str) -> str:
    """``body`` decoded with ``encoding``, which :func:`detect_encoding` found, without a
    byte order mark; undecodable bytes become U+FFFD.

    A byte order mark of another encoding is no text either: a GBK site whose template
    was saved "with BOM" starts every page with a UTF-8 one. (Scrapy's
    ``TextResponse.text`` decodes by a byte order mark, whatever encoding it is given.)
    """
    _, bom = read_bom(body)
    return body[len(bom or b"") :].decode(encoding, _REPLACE)


def editor_lines(text: str) -> list[str]:
    """The lines of a file a user wrote, as an editor numbers them: ``str.splitlines`` also
    ends a line at a form feed (``pdftotext`` puts one before each page), U+2028, ...,
    and the line an error names would be one further down."""
    return _LINE_END.split(text)


def undecoded(argument: str) -> bool:
    """Whether a command-line argument holds bytes the locale's encoding (UTF-8) could not
    decode, which Python keeps as lone surrogates: GBK text typed or scripted under a
    UTF-8 locale."""
    return _ESCAPED_BYTES.search(argument) is not None


def readable(text: str) -> str:
    """A message naming a file whose name is not UTF-8 (a GBK name under a UTF-8 locale,
    which Python keeps as lone surrogates), with that name as a person reads it: in GBK, or
    its bytes escaped. A log file in UTF-8 refuses lone surrogates: the message was lost."""
    return _ESCAPED_BYTES.sub(lambda run: _read_name(os.fsencode(run.group())), text)


def _read_name(raw: bytes) -> str:
    try:
        return raw.decode("gb18030")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "backslashreplace")


def decode_text_file(data: bytes) -> str:
    """A text file a user wrote (keyword file, seed list): UTF-8, with or without a byte
    order mark, or GBK (Simplified or Traditional characters), which Chinese Windows editors
    save by default. Anything else raises ``UnicodeDecodeError`` rather than being guessed at:
    a misread keyword would change the topic without a word. So does a file of both, a GBK
    one with a line added in a UTF-8 editor or terminal, whose UTF-8 lines read as GBK into
    other hanzi (足球 as 瓒崇悆). UTF-16 and UTF-32 are read by their byte order mark, which
    Notepad's "Unicode" writes; without one, UTF-16 is valid UTF-8 with NUL bytes, which no
    text a person wrote has, and is refused too."""
    text = _decoded_text_file(data)
    if "\0" in text:
        raise UnicodeDecodeError("utf-8", data, 0, 1, "it has NUL bytes: UTF-16, or no text")
    return text


def _decoded_text_file(data: bytes) -> str:
    bom_encoding, bom = read_bom(data)
    if bom_encoding and bom_encoding.startswith(("utf-16", "utf-32")):
        return data[len(bom) :].decode(bom_encoding)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        _refuse_utf8_and_gbk(data)
        if _chinese(data, final=True) == "gb18030":
            text = data.decode("gb18030")
            _refuse_rare_hanzi(data, text)
            return text
        raise


def _refuse_rare_hanzi(data: bytes, text: str) -> None:
    """Raise ``UnicodeDecodeError`` if most hanzi of ``text``, the GBK reading of
    ``data``, are of GB2312's second level (rows 0xD8-0xF7, the rare ones): one or two
    words in a Cyrillic, Greek or Hebrew encoding read as such (cp1251 футбол as 趔蜥铍),
    where a Chinese keyword file or seed list holds the first level's everyday words."""
    hanzi = dict.fromkeys(char for char in text if "\u4e00" <= char <= "\u9fff")
    rare = [char for char in hanzi if _is_rare(char)]
    if len(rare) * 2 > len(hanzi):
        shown = "".join(rare[:_RARE_SHOWN])
        raise UnicodeDecodeError(
            "gbk", data, 0, len(data), f"in GBK it reads as rare hanzi, {shown}: another encoding"
        )


_CYRILLIC_WORDS = re.compile("[\u0400-\u04ff]+")
_RUSSIAN_VOWELS = frozenset("аеёиоуыэюя")


def koi8r_reading(data: bytes) -> str | None:
    """``data`` read as KOI8-R, if it reads as Russian there: its letters, 0xC0-0xFF, are
    hanzi in GBK (вода is 紫牧), everyday ones, which :func:`_refuse_rare_hanzi` lets
    through. Each word of Russian is in small letters, capitals or capitalized, and has a
    vowel; GBK bytes read as KOI8-R mix the cases (足球 is вЦгР)."""
    if any(0x80 <= byte < 0xC0 for byte in data):
        return None
    text = data.decode("koi8-r")
    words = _CYRILLIC_WORDS.findall(text)
    russian = all(
        (word.islower() or word.isupper() or word.istitle())
        and not _RUSSIAN_VOWELS.isdisjoint(word.lower())
        for word in words
    )
    return text if words and russian else None


def gbk_reading(data: bytes) -> str | None:
    """What a text file that :func:`decode_text_file` reads as UTF-8 says in GBK, if that
    is Chinese too and the UTF-8 no more so: GBK is valid UTF-8 at times (医学 reads as
    ҽѧ, 图片 as ͼƬ), most often in a file of a word or two. None if the file can only be
    UTF-8, or says so with a byte order mark."""
    if data.isascii() or read_bom(data)[1] or not _is_utf8(data):
        return None
    try:
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        return None
    if _chinese(data, final=True) != "gb18030" or _utf8_rather_than_gbk(data):
        return None
    # café's é reads as GBK 茅: no hanzi stands alone inside a Latin word.
    wide = {char for char in set(text) if char > "\x7f"}
    return text if all(_not_only_in_latin_words(text, char) for char in wide) else None


def _refuse_utf8_and_gbk(data: bytes) -> None:
    """Raise ``UnicodeDecodeError`` if the lines of ``data`` that are not UTF-8 are GBK and
    another line is UTF-8 (``_utf8_rather_than_gbk``)."""
    lines = data.splitlines(keepends=True)
    gbk = [number for number, line in enumerate(lines, 1) if not _is_utf8(line)]
    if _chinese(b"".join(lines[number - 1] for number in gbk), final=True) != "gb18030":
        return
    start = 0
    for number, line in enumerate(lines, 1):
        if not line.isascii() and _is_utf8(line) and _utf8_rather_than_gbk(line):
            reason = f"line {number} is UTF-8 and line {gbk[0]} GBK: save it in one encoding"
            raise UnicodeDecodeError("utf-8", data, start, start + len(line), reason)
        start += len(line)


def _utf8_rather_than_gbk(line: bytes) -> bool:
    """Whether ``line``, valid UTF-8, reads into more common Chinese characters
    (``_common_share``), or as many and more of the most frequent ones, in UTF-8 than in
    GBK. GBK is valid UTF-8 at times (思路 reads as ˼·), but not into hanzi more common than
    its own."""
    utf8_text, gbk_text = line.decode("utf-8-sig"), line.decode("gb18030", "replace")
    return (_common_share(utf8_text, "utf-8"), _frequent_share(utf8_text)) > (
        _common_share(gbk_text, "gb18030"),
        _frequent_share(gbk_text),
    )


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return False
    return True


def _sample(body: bytes) -> tuple[bytes, bool]:
    """The bytes to judge ``body``'s encoding by, and whether they end it.

    These are the first ``SAMPLE_SIZE`` bytes, unless all of them are ASCII (a long inline
    script or stylesheet, navigation links), which tells nothing of the text after them:
    then the ``SAMPLE_SIZE`` from the first byte that is not. A character of any
    ASCII-compatible encoding starts there; a start rounded down to a multiple of four
    keeps UTF-16 and UTF-32 aligned. The rest of a large page is only scanned for that
    byte, a chunk at a time: at most ``SAMPLE_SIZE`` bytes are decoded, whatever its size.
    """
    head = body[:SAMPLE_SIZE]
    if head.isascii():
        for start in range(SAMPLE_SIZE, len(body), SAMPLE_SIZE):
            chunk = body[start : start + SAMPLE_SIZE]
            if not chunk.isascii():
                first = start + _NON_ASCII.search(chunk).start()
                first -= first % 4
                return body[first : first + SAMPLE_SIZE], first + SAMPLE_SIZE >= len(body)
    return head, len(body) <= SAMPLE_SIZE


def _is_charset(encoding: str) -> bool:
    codec = codecs.lookup(encoding)
    return codec._is_text_encoding and codec.name not in _NOT_CHARSETS


def _read(
    sample: bytes, encoding: str, final: bool, bytes_per_error: int, at_least: int = 0
) -> str | None:
    """What ``sample`` decodes into, each error marked, or ``None`` if it has more than one
    per ``bytes_per_error`` non-ASCII bytes (``_DECLARED``, ``_GUESSED``, ``_MOSTLY_UTF8``),
    or than ``at_least``.

    It is decoded a chunk at a time, so that a wrong encoding, which fails every few bytes,
    is given up early. An incomplete last character is kept back unless ``final``.
    """
    forgiven = max(at_least, _forgiven(sample, bytes_per_error))
    decoder = codecs.getincrementaldecoder(encoding)(_COUNT_ERRORS)
    parts = []
    errors = 0
    for start in range(0, len(sample) + 1, _CHUNK):
        last = start + _CHUNK > len(sample)
        part = decoder.decode(sample[start : start + _CHUNK], final=final and last)
        errors += part.count(_ERROR_MARK)
        if errors > forgiven:
            return None
        parts.append(part)
    return "".join(parts)


def _forgiven(sample: bytes, bytes_per_error: int) -> int:
    return len(sample.translate(None, _ASCII)) // bytes_per_error


def _believed(sample: bytes, encoding: str, final: bool, utf8_declared: bool) -> str | None:
    """The encoding of ``sample``, which declares ``encoding``: that one if it is believable,
    or for GB (or Big5) Big5 (or GB) if that reads better (``_other_chinese_if_better``).

    The declared encoding must ``_read`` the sample. An encoding whose decoder raises
    (``utf-16`` without a byte order mark) does not fit, and UTF-16 or UTF-32 without one
    fit only bytes with NULs (the ASCII characters of markup). Non-ASCII bytes that read as
    UTF-8 are UTF-8, whatever the declaration says, unless it is GB or Big5, no other
    declaration says UTF-8 and ``_chinese_rather_than_utf8``; and a Chinese body (GB or
    Big5) is not the Latin-1 that server defaults send in the header.
    """
    if encoding.startswith(_WIDE) and b"\x00" not in sample and not read_bom(sample)[1]:
        return None
    try:
        text = _read(sample, encoding, final, _DECLARED)
    except UnicodeError:
        return None
    if text is None:
        return None
    if encoding != "utf-8" and not sample.isascii():
        utf8_text = _read(sample, "utf-8", final, _GUESSED)
        if utf8_text is not None and (
            utf8_declared or not _chinese_rather_than_utf8(text, utf8_text, encoding)
        ):
            return None
    if encoding == "cp1252" and _chinese(sample, final):
        return None
    return _other_chinese_if_better(sample, text, encoding, final) or encoding


def _chinese_rather_than_utf8(text: str, utf8_text: str, encoding: str) -> bool:
    """Whether bytes that read as ``utf8_text`` in UTF-8 are rather the GB or Big5
    ``encoding`` they declare, in which they read as ``text``.

    One or two hanzi can be valid UTF-8 too (GBK 学校 reads as ѧУ). So the declaration wins
    when its reading holds only common Chinese characters, none inside a Latin word, and
    the UTF-8 one only letters from U+00C0 to U+07FF (accented, Greek, Cyrillic): UTF-8
    Chinese, “quotes”, €, © or ½ stay UTF-8, and so does café, whose é reads as GBK 茅.
    """
    if codecs.lookup(encoding).name not in _OTHER_CHINESE or _NOT_LETTERS.search(utf8_text):
        return False
    wide = {char for char in set(text) if char > "\x7f"}
    return all(_is_common(char) and _not_only_in_latin_words(text, char) for char in wide)


def _guess(sample: bytes, final: bool, utf8_declared: bool = False) -> str:
    """The encoding of ``sample``, which no declaration fits: UTF-8, GB or Big5
    (``_chinese``), the UTF-8 declared if it fits but a part (``_MOSTLY_UTF8``), else
    charset-normalizer's."""
    if _read(sample, "utf-8", final, _GUESSED) is not None:
        return "utf-8"
    chinese = _chinese(sample, final)
    if chinese:
        return chinese
    if utf8_declared and _read(sample, "utf-8", final, _MOSTLY_UTF8) is not None:
        return "utf-8"
    matches = from_bytes(sample)
    best = matches.best()
    # A tie goes to cp1252, the default of the Western web; charset-normalizer lists it
    # among the encodings of a match that decode the sample alike.
    if best is None or any(
        "cp1252" in m.could_be_from_charset and m.chaos <= best.chaos for m in matches
    ):
        return "cp1252"
    return resolve_encoding(best.encoding) or "cp1252"


@functools.lru_cache(maxsize=1)
def _chinese(sample: bytes, final: bool) -> str | None:
    """``gb18030`` or ``big5hkscs`` (Big5), whichever reads ``sample`` (``_read``) into
    mostly common Chinese characters, if one does; if both do, the one with fewer errors,
    then with more common characters, then GB.

    Other text often decodes too ("für" is a valid GBK pair, and so is most Big5 in GBK
    and most GBK in Big5) but into rare characters, symbols and private-use ones. (A page
    declared Latin-1 asks this twice: of its declaration, then of the bytes.)

    A short text (under ``_GUESSED`` non-ASCII bytes: a notice, a page of a few lines) is
    forgiven one error too, a stray byte, if it also holds as many of the most frequent
    hanzi as real Chinese text does (``_frequent_share``): a few words of another
    encoding that happen to read as common characters seldom do.
    """
    best = None  # (errors, -share, codec) of the best reading; GB, read first, keeps a tie.
    forgiven = _forgiven(sample, _GUESSED)
    for codec in ("gb18030", "big5hkscs"):
        text = _read(sample, codec, final, _GUESSED, at_least=1)
        if text is None:
            continue
        errors = text.count(_ERROR_MARK)
        if best and errors > best[0]:
            continue  # Losing already: its characters need no counting.
        if errors > forgiven and _frequent_share(text) < _REAL_TEXT:
            continue
        share = _common_share(text, codec)
        if share >= 0.8 and (best is None or (errors, -share) < best[:2]):
            best = (errors, -share, codec)
    return best[2] if best else None


def _other_chinese_if_better(sample: bytes, text: str, encoding: str, final: bool) -> str | None:
    """Big5 (or GB), if ``sample``, which decodes into ``text`` with the GB (or Big5)
    ``encoding`` it declares, reads better in it; GB or Big5, if it declares a Korean or
    Japanese encoding (``_CHINESE_INSTEAD``) and reads better in one of them.

    Big5 decodes as GBK, and short GBK as Big5, mostly without an error but into nonsense:
    so the other reading must have no more errors and hold more common characters
    (``_common_share``) and more of the most frequent ones, which nonsense seldom hits
    since it draws from thousands evenly. A tie keeps the declaration. The frequent ones
    also keep a GB page whose pinyin, Cyrillic or circled numbers read as common Big5
    hanzi: a few sentences of real text hold three tenths of them or more (six on average).
    Against a Korean or Japanese declaration only the frequent ones count: GBK read as
    EUC-JP is common kanji, and Korean or Japanese read as GBK common hanzi, but few of
    them frequent.
    """
    name = codecs.lookup(encoding).name
    for other in _CHINESE_INSTEAD.get(name, ()):
        other_text = _read(sample, other, final, _DECLARED)
        if other_text is None or other_text.count(_ERROR_MARK) > text.count(_ERROR_MARK):
            continue
        other_share = _common_share(other_text, other)
        if other_share < 0.8 or (
            name in _OTHER_CHINESE and other_share <= _common_share(text, encoding)
        ):
            continue
        frequent = _frequent_share(other_text)
        if frequent >= _REAL_TEXT and frequent > _frequent_share(text):
            return other
    return None


def _frequent_share(text: str) -> float:
    """The share of the hanzi of ``text`` (each time one occurs) that are among the most
    frequent; 0 if it has none."""
    counts = collections.Counter(text)
    hanzi = sum(count for char, count in counts.items() if "\u4e00" <= char <= "\u9fff")
    return sum(counts[char] for char in _FREQUENT) / hanzi if hanzi else 0.0


def _common_share(text: str, encoding: str) -> float:
    """The share of common Chinese characters among the distinct non-ASCII ones of ``text``,
    decoded from ``encoding``, its errors left out; 0 if it has none.

    A character whose second byte is ASCII counts only where it is not one alone against
    a Latin letter: an accented letter and the letter after it ("ü" and "r", "ß" and "e")
    make such a pair.
    """
    wide = {char for char in set(text) if char > "\x7f"} - {_ERROR_MARK}
    common = sum(
        1
        for char in wide
        if _is_common(char)
        and (char.encode(encoding)[-1] > 0x7F or _not_only_in_latin_words(text, char))
    )
    return common / len(wide) if wide else 0.0


def _not_only_in_latin_words(text: str, char: str) -> bool:
    """Whether ``char`` is somewhere in ``text`` other than alone against a Latin letter."""
    index = text.find(char)
    while index >= 0:
        before, after = text[index - 1 : index], text[index + 1 : index + 2]
        alone = before < "\x80" and after < "\x80"
        if not (alone and (before.isalpha() or after.isalpha())):
            return True
        index = text.find(char, index + 1)
    return False


def _gb2312_row(char: str) -> int:
    """The row (first byte) of ``char``'s two-byte GB2312 code, 0 if it has none."""
    try:
        gb = char.encode("gb2312")
    except UnicodeEncodeError:
        return 0
    return gb[0] if len(gb) == 2 and gb[1] >= 0xA1 else 0


def _is_rare(char: str) -> bool:
    """Whether ``char`` is a hanzi of GB2312's second level (rows 0xD8-0xF7), ordered by
    radical after the 3755 of everyday use."""
    return 0xD8 <= _gb2312_row(char) <= 0xF7


@functools.lru_cache(maxsize=16384)
def _is_common(char: str) -> bool:
    """Whether ``char`` is a hanzi or punctuation of GB2312 or of Big5's first level.

    These hold the Simplified and the Traditional characters in everyday use.
    """
    # Rows 0xA1 and 0xA3 hold punctuation; rows 0xB0-0xF7 hold the 6763 hanzi.
    row = _gb2312_row(char)
    if row in (0xA1, 0xA3) or 0xB0 <= row <= 0xF7:
        return True
    try:
        big5 = char.encode("big5")
    except UnicodeEncodeError:
        return False
    # 0xA140-0xA3BF: punctuation and symbols; 0xA440-0xC67E: the 5401 frequent hanzi.
    return len(big5) == 2 and 0xA140 <= int.from_bytes(big5, "big") <= 0xC67E
