"""Find the encoding of a page and decode it.

Sources are tried in order: the HTTP ``Content-Type`` charset, a byte order
mark, a ``<meta>`` declaration; then the bytes themselves. A declaration is only
believed when the body decodes with it, because Chinese sites often declare
one encoding and serve another. Nothing here raises on bad bytes.
"""

from __future__ import annotations

import codecs
import encodings

from charset_normalizer import from_bytes
from w3lib.encoding import (
    html_body_declared_encoding,
    http_content_type_encoding,
    read_bom,
    resolve_encoding,
    to_unicode,
)

#: Only this many leading bytes are checked; a character cut at the end is not an error.
SAMPLE_SIZE = 64 * 1024

# GBK labels of the WHATWG Encoding Standard that Python does not know.
_GBK_LABELS = frozenset({"x_gbk", "csgb2312", "gb_2312"})

_ERROR_MARK = "\udfff"
_COUNT_ERRORS = "topicspider_charset_mark"
_ASCII = bytes(range(128))


def _gbk_label(name: str) -> codecs.CodecInfo | None:
    if encodings.normalize_encoding(name).lower() in _GBK_LABELS:
        return codecs.lookup("gb18030")
    return None


def _mark(exc: UnicodeDecodeError) -> tuple[str, int]:
    # No decoder outputs a lone surrogate, so counting marks counts errors exactly.
    return _ERROR_MARK, exc.end


codecs.register(_gbk_label)
codecs.register_error(_COUNT_ERRORS, _mark)


def detect_encoding(body: bytes, content_type: str | None = None) -> str:
    """Return the Python codec name ``body`` is written in.

    GBK and GB2312 are reported as ``gb18030``, their superset; Latin-1 and
    ASCII as ``cp1252``, as browsers do.
    """
    sample = body[:SAMPLE_SIZE]
    final = len(body) <= SAMPLE_SIZE
    bom_encoding, _ = read_bom(sample)
    declared = (
        http_content_type_encoding(content_type),
        bom_encoding,
        html_body_declared_encoding(sample),
    )
    for encoding in declared:
        if encoding and _fits(sample, encoding, final):
            return encoding
    return _guess(sample, final)


def decode(body: bytes, content_type: str | None = None) -> tuple[str, str]:
    """Return ``(encoding, text)``; undecodable bytes become U+FFFD."""
    encoding = detect_encoding(body, content_type)
    bom_encoding, bom = read_bom(body)
    if bom and bom_encoding == encoding:
        body = body[len(bom) :]
    return encoding, to_unicode(body, encoding)


def decode_text_file(data: bytes) -> str:
    """A text file a user wrote (keyword file, seed list): UTF-8, with or without a byte
    order mark, or GBK, which Chinese Windows editors save by default. Anything else raises
    ``UnicodeDecodeError`` rather than being guessed at: a misread keyword would change the
    topic without a word."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        if _is_gb_chinese(data, final=True):
            return data.decode("gb18030")
        raise


def _decode(sample: bytes, encoding: str, final: bool) -> tuple[str, int]:
    """Decode ``sample`` and count its errors; an incomplete last character is kept back."""
    decoder = codecs.getincrementaldecoder(encoding)(_COUNT_ERRORS)
    text = decoder.decode(sample, final=final)
    return text, text.count(_ERROR_MARK)


def _fits(sample: bytes, encoding: str, final: bool) -> bool:
    """Whether a declared ``encoding`` is believable for ``sample``.

    Up to one error per twenty non-ASCII bytes is forgiven (a stray byte, or a
    snippet pasted in another encoding, in a real page; a wrong declaration
    fails on most characters). Non-ASCII bytes that are valid UTF-8 are UTF-8, whatever the
    declaration says; and a GB Chinese body is not the Latin-1 that server
    defaults send in the header.
    """
    errors = _decode(sample, encoding, final)[1]
    high = len(sample.translate(None, _ASCII))
    if errors > high // 20:
        return False
    if encoding != "utf-8" and high and _decode(sample, "utf-8", final)[1] == 0:
        return False
    return not (encoding == "cp1252" and _is_gb_chinese(sample, final))


def _guess(sample: bytes, final: bool) -> str:
    if _decode(sample, "utf-8", final)[1] == 0:
        return "utf-8"
    if _is_gb_chinese(sample, final):
        return "gb18030"
    matches = from_bytes(sample)
    best = matches.best()
    # A tie goes to cp1252, the default of the Western web.
    if best is None or any(m.encoding == "cp1252" and m.chaos <= best.chaos for m in matches):
        return "cp1252"
    return resolve_encoding(best.encoding) or "cp1252"


def _is_gb_chinese(sample: bytes, final: bool) -> bool:
    """Whether ``sample`` decodes as GB18030 into mostly GB2312 hanzi and punctuation.

    Other text often decodes too ("für" is a valid GBK pair, and so is most
    Big5) but into rare characters, symbols and private-use ones.
    """
    text, errors = _decode(sample, "gb18030", final)
    if errors:
        return False
    wide = {char for char in text if char > "\x7f"}
    common = sum(1 for char in wide if _is_gb2312_text(char.encode("gb18030")))
    return common * 5 >= len(wide) * 4 > 0


def _is_gb2312_text(code: bytes) -> bool:
    # Rows 0xA1 and 0xA3 hold punctuation; rows 0xB0-0xF7 hold the 6763 hanzi.
    return (
        len(code) == 2 and (code[0] in (0xA1, 0xA3) or 0xB0 <= code[0] <= 0xF7) and code[1] >= 0xA1
    )
