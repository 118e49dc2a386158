"""Where a page is stored: a safe, readable relative path for each URL."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from urllib.parse import unquote_to_bytes, urlsplit

#: The pipeline's index, beside the site folders; no site folder takes this name.
INDEX_NAME = "index.jsonl"
#: Longest file or folder name, in UTF-8 bytes.
MAX_NAME_BYTES = 100
#: Longest path, in characters.
MAX_PATH_CHARS = 240

_DEFAULT_PORTS = {"http": 80, "https": 443}
_PAGE_EXTENSIONS = (".html", ".htm")
# Not allowed in a name on Windows or Linux, plus "%" (our escape) and "~" (our marker).
_UNSAFE = frozenset('/\\:*?"<>|%~')
# Controls, format characters (bidi overrides, zero-width), surrogates, line separators.
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_WINDOWS_DEVICES = frozenset(
    {"CON", "PRN", "AUX", "NUL", *(f"{name}{i}" for name in ("COM", "LPT") for i in range(1, 10))}
)
# Escapes Scrapy fetches apart from what they decode to (``/a%3Bb`` and ``/a;b``), and a
# ``%`` that escapes nothing (``/100%`` and ``/100%25``).
_AMBIGUOUS_ESCAPE = re.compile(r"%3[Bb]|%(?![0-9A-Fa-f]{2})")
# urlsplit() drops these from the start of a URL (and tabs and newlines from anywhere).
_C0_OR_SPACE = "".join(map(chr, range(0x21)))


def url_to_path(url: str) -> str:
    r"""Return the path, relative and with ``/`` separators, where the page at ``url`` is stored.

    >>> url_to_path("https://example.com/")
    'example.com/index.html'
    >>> url_to_path("http://news.example.com:8080/2024/足球/")
    'news.example.com_8080/2024/足球/index.html'
    >>> url_to_path("https://example.com/news/page.html")
    'example.com/news/page.html'
    >>> url_to_path("https://example.com/news")
    'example.com/news~.html'
    >>> url_to_path("https://example.com/list.html?page=2")
    'example.com/list~0e201a12c9e9.html'
    >>> url_to_path("https://example.com/%2e%2e/..%2F..%2Fetc/passwd")
    'example.com/.%2E/..%2F..%2Fetc/passwd~.html'

    The rules, each there so that a path is safe and no two URLs share one:

    * The first folder is the host, lower-cased, then ``_port`` unless the URL
      is https on port 443 (so ``http://a/`` is under ``a_80``: a port speaks
      one protocol, so host and port name a site). Other schemes add
      ``~scheme`` and the port, if any.
    * Each path segment is percent-decoded (invalid UTF-8 is kept as bytes),
      so Chinese names stay readable; then ``%`` re-encodes only what is unsafe:
      ``/ \ : * ? " < > |``, ``%``, ``~``, control and invisible characters, a
      trailing ``.`` or space (Windows drops them, and this also turns ``.``
      and ``..`` into plain names), the first letter of a Windows device name
      (``CON``, ``NUL``...), and the last letter of a folder ending in
      ``.html`` or ``.htm``. An empty segment (``a//b``) becomes ``~``.
    * Every file name ends in ``.html`` or ``.htm`` and no folder name does, so
      a page is never where a folder must go: ``/news`` is ``news~.html`` beside
      the folder ``news/`` of ``/news/2024``. An empty last segment (``/``,
      ``/news/``) is ``index.html``, so a literal ``index.html`` is escaped.
    * ``~`` followed by 12 hex digits of a hash of the whole URL goes before the
      extension when the URL has a query, when the name was shortened, or when
      the URL is one that the mapping would otherwise confuse with another
      (user info, a missing host, characters that ``urlsplit`` drops, a path
      with ``%3B`` or a ``%`` that escapes nothing, which Scrapy fetches apart
      from ``;`` and ``%25``), so different queries never collide.
    * A name longer than :data:`MAX_NAME_BYTES` is cut, at a character, and
      gets a hash. A path longer than :data:`MAX_PATH_CHARS` keeps its first
      folders and becomes ``~<hash>.html``. An unparsable URL is ``~/~<hash>.html``.

    A fragment is not part of the page and an empty query is no query; whether a
    character is percent-encoded, the case of scheme and host, and an explicit
    default port do not change the path of a URL without a query. Those with one are
    told apart by a hash of the URL as it is written.
    """
    digest = _digest(url.split("#", 1)[0])
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return f"~/~{digest}.html"
    confusable = (
        url.lstrip(_C0_OR_SPACE) != url
        or any(char in url for char in "\t\r\n")
        or "@" in parts.netloc
        or not parts.hostname
        or _AMBIGUOUS_ESCAPE.search(parts.path) is not None
    )
    site = _site_name(parts.scheme, parts.hostname or "", port)
    *segments, last = parts.path.removeprefix("/").split("/")
    folders = [_folder_name(segment) for segment in segments]
    name = _file_name(last, digest, hashed=bool(parts.query) or confusable)
    path = "/".join([site, *folders, name])
    if len(path) <= MAX_PATH_CHARS:
        return path
    room = MAX_PATH_CHARS - len(site) - len(f"/~{digest}.html")
    kept = [site]
    for folder in folders:
        room -= len(folder) + 1
        if room < 0:
            break
        kept.append(folder)
    return "/".join([*kept, f"~{digest}.html"])


def _site_name(scheme: str, host: str, port: int | None) -> str:
    if scheme not in _DEFAULT_PORTS:
        suffix = f"~{scheme}" if port is None else f"~{scheme}_{port}"
    else:
        port = _DEFAULT_PORTS[scheme] if port is None else port
        suffix = "" if (scheme, port) == ("https", 443) else f"_{port}"
    tokens = _windows_safe([*_escape(_as_text(host), _UNSAFE | {"_"}), *suffix])
    if not tokens:
        return "~"
    if "".join(tokens) == INDEX_NAME:
        tokens[0] = _quote(tokens[0])
    return _bounded(tokens, "", "~" + _digest(host + suffix))


def _folder_name(segment: str) -> str:
    text = _unquote(segment)
    if not text:
        return "~"
    tokens = _windows_safe(_escape(text))
    if text.lower().endswith(_PAGE_EXTENSIONS):
        tokens[-1] = _quote(tokens[-1])
    return _bounded(tokens, "", "~" + _digest(text))


def _file_name(segment: str, digest: str, hashed: bool) -> str:
    text = _unquote(segment)
    if not text:
        stem, extension, marker = "index", ".html", ""
    elif text.lower().endswith(_PAGE_EXTENSIONS):
        stem, dot, extension = text.rpartition(".")
        extension, marker = dot + extension, ""
    else:
        stem, extension, marker = text, ".html", "~"
    if hashed:
        marker = "~" + digest
    tokens = _escape(stem)
    name = "".join(tokens) + marker + extension
    if name.split(".", 1)[0].upper() in _WINDOWS_DEVICES or (text and name == "index.html"):
        tokens[0] = _quote(tokens[0])
    return _bounded(tokens, marker + extension, f"~{digest}{extension}")


def _bounded(tokens: list[str], suffix: str, cut_suffix: str) -> str:
    """Join ``tokens`` and ``suffix``; if too long, cut the tokens and end with ``cut_suffix``."""
    name = "".join(tokens) + suffix
    if len(name.encode()) <= MAX_NAME_BYTES:
        return name
    room = MAX_NAME_BYTES - len(cut_suffix.encode())
    kept = []
    for token in tokens:
        room -= len(token.encode())
        if room < 0:
            break
        kept.append(token)
    return "".join(kept) + cut_suffix


def _unquote(segment: str) -> str:
    """Percent-decode; bytes that are not UTF-8 become lone surrogates, escaped back later."""
    return unquote_to_bytes(segment.encode("utf-8", "surrogatepass")).decode(
        "utf-8", "surrogateescape"
    )


def _as_text(text: str) -> str:
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "surrogateescape")


def _escape(text: str, unsafe: frozenset[str] = _UNSAFE) -> list[str]:
    """One token per character: itself, or its ``%XX`` escape."""
    return [
        _quote(char) if char in unsafe or unicodedata.category(char) in _INVISIBLE else char
        for char in text
    ]


def _quote(char: str) -> str:
    if "\udc80" <= char <= "\udcff":  # a byte that was not UTF-8
        return f"%{ord(char) - 0xDC00:02X}"
    return "".join(f"%{byte:02X}" for byte in char.encode("utf-8"))


def _windows_safe(tokens: list[str]) -> list[str]:
    if tokens and tokens[-1] in (".", " "):
        tokens[-1] = _quote(tokens[-1])
    if "".join(tokens).split(".", 1)[0].upper() in _WINDOWS_DEVICES:
        tokens[0] = _quote(tokens[0])
    return tokens


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()
