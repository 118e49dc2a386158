"""The seed URLs a crawl starts from: inline, comma-separated, or a file of them."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from w3lib.url import safe_url_string

from topicspider.exceptions import SeedError

__all__ = ["load_seeds"]


def _check(url: str, where: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SeedError(f"{where}: {url!r} is not an http(s) URL")
    return safe_url_string(url)


def load_seeds(spec: str | None) -> list[str]:
    """Seeds from ``a,b,c`` or from a file with one URL per line (``#`` comments)."""
    spec = (spec or "").strip()
    if not spec:
        raise SeedError("no seeds: pass -a seeds=URL[,URL...] or -a seeds=FILE")
    path = Path(spec).expanduser()
    if "://" not in spec:
        try:
            content = path.read_text("utf-8-sig")
        except FileNotFoundError:
            raise SeedError(f"{spec}: seed file not found (and not an http(s) URL)") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise SeedError(f"{spec}: cannot read seed file: {exc}") from None
        seeds = [
            _check(url, f"{path}, line {lineno}")
            for lineno, line in enumerate(content.splitlines(), start=1)
            if (url := line.split("#", 1)[0].strip())
        ]
        if not seeds:
            raise SeedError(f"{path}: no seed URLs in file")
    else:
        seeds = [
            _check(url, f"seeds argument, item {index}")
            for index, part in enumerate(spec.split(","), start=1)
            if (url := part.strip())
        ]
    return list(dict.fromkeys(seeds))
