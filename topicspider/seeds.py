"""The seed URLs a crawl starts from: inline, comma-separated, or a file of them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from w3lib.url import safe_url_string

from topicspider.charset import decode_text_file, editor_lines, undecoded
from topicspider.exceptions import SeedError

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["SEEDS_FAILED_REASON", "load_seeds", "start_urls"]

#: The close reason of a crawl none of whose seeds gave a page.
SEEDS_FAILED_REASON = "seeds_failed"
#: Between inline seeds: a comma, or the full-width one a Chinese input method types (a
#: URL has it only percent-encoded).
_SEPARATOR = re.compile("[,\uff0c]")


def _check(url: str, where: str) -> str:
    """``url`` as Scrapy requests it. One with a space or a tab inside is refused: Scrapy
    would request ``http://a/ http://b/``, or a spreadsheet's ``URL<tab>title``, as one
    URL, which no site has."""
    if undecoded(url):
        raise SeedError(
            f"{where}: {url!r} is not UTF-8 text (GBK bytes under a UTF-8 terminal?): type it"
            " in UTF-8 or percent-encoded, or put the seeds in a file, which may be GBK"
        )
    if len(url.split()) > 1:
        raise SeedError(
            f"{where}: {url!r} has a space in it (seeds are separated by commas, or one a "
            "line in a file; a space in a URL is written %20)"
        )
    try:
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.hostname:
            return safe_url_string(url)  # checks the port too
    except ValueError as error:  # "Invalid IPv6 URL", "Port out of range 0-65535"
        raise SeedError(f"{where}: {url!r} is not a valid URL ({error})") from None
    raise SeedError(f"{where}: {url!r} is not an http(s) URL")


def start_urls(urls: Iterable[str]) -> list[str]:
    """A spider's ``start_urls``, checked as seeds are: Scrapy's way to give a subclass its
    seeds, used when no ``-a seeds`` is given."""
    return list(
        dict.fromkeys(_check(url, f"start_urls, item {n}") for n, url in enumerate(urls, 1))
    )


def load_seeds(spec: str | None) -> list[str]:
    """Seeds from ``a,b,c`` (or ``a，b``) or from a file with one URL per line (``#``
    comments)."""
    spec = (spec or "").strip()
    if not spec:
        raise SeedError("no seeds: pass -a seeds=URL[,URL...] or -a seeds=FILE")
    if "://" not in spec:
        try:
            path = Path(spec).expanduser()
            content = decode_text_file(path.read_bytes())
        except FileNotFoundError:
            raise SeedError(f"{spec}: seed file not found (and not an http(s) URL)") from None
        except UnicodeDecodeError as exc:
            raise SeedError(f"{spec}: seed file is neither UTF-8 nor GBK ({exc.reason})") from None
        except (OSError, ValueError, RuntimeError) as exc:  # a NUL in the name, ~name of no user
            raise SeedError(f"{spec}: cannot read seed file: {exc}") from None
        seeds = [
            _check(url, f"{path}, line {lineno}")
            for lineno, line in enumerate(editor_lines(content), start=1)
            if (url := line.split("#", 1)[0].strip())
        ]
        if not seeds:
            raise SeedError(f"{path}: no seed URLs in file")
    else:
        seeds = [
            _check(url, f"seeds argument, item {index}")
            for index, part in enumerate(_SEPARATOR.split(spec), start=1)
            if (url := part.strip())
        ]
    return list(dict.fromkeys(seeds))
