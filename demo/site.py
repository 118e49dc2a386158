"""The demo web site: a generator for a small bilingual site and a static server for it.

Tests and ``make demo`` crawl this site instead of the internet. Its shape makes a focused
crawler earn its keep: the on-topic section (football, mostly in Chinese) is reachable only
through an off-topic hub page, the off-topic sections are larger and densely linked, and several
pages are GBK-encoded with missing, indirect or wrong charset declarations.

This module is the public face (``write_site``, ``SiteInfo``, ``serve``); the plan of pages
lives in :mod:`demo.layout`, their wording in :mod:`demo.corpus`, the HTML in :mod:`demo.pages`
and the server in :mod:`demo.server`.

``python -m demo.site --out DIR [--port N] [--access-log FILE]`` writes the site and serves it
until killed; the first line on stdout is the base URL.
"""

from __future__ import annotations

import argparse
import base64
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path

from demo.layout import (
    CHARSETS,
    HUB,
    OFFSITE_URLS,
    PRIVATE,
    SECTIONS,
    SEED,
    WRONG_HEADER_CHARSETS,
)
from demo.pages import build_pages, render
from demo.server import HEADERS_FILE, serve

__all__ = ["SiteInfo", "main", "serve", "write_site"]

ROBOTS_TXT = "User-agent: *\nDisallow: /private/\n"

# An 8x8 grey JPEG, so the image link points at a real picture.
_JPEG = base64.b64decode(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAFA3PEY8MlBGQUZaVVBfeMiCeG5uePWvuZHI////////////////////////"
    "////////////////////////////wAALCAAIAAgBAREA/8QAFAABAAAAAAAAAAAAAAAAAAAAA//EABQQAQAAAAAAAAAA"
    "AAAAAAAAAAD/2gAIAQEAAD8Ad//Z"
)


@dataclass
class SiteInfo:
    """What :func:`write_site` wrote: where, and the facts tests check a crawl against.

    Paths are URL paths (``/sports/cup-final.html``); join them to the server's base URL.
    """

    root: Path
    seed_path: str = SEED
    hub_path: str = HUB
    #: The football pages, Chinese and English: what a focused crawl should find first.
    on_topic: set[str] = field(default_factory=set)
    #: Pages whose bytes are GBK (some of them GB2312, a subset).
    gbk_pages: set[str] = field(default_factory=set)
    #: UTF-8 pages served with a Content-Type that claims another charset.
    wrong_header_pages: set[str] = field(default_factory=set)
    #: Per-path response headers that override the server's defaults (also in ``_headers.json``).
    headers: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Codec each page's bytes are really in.
    encodings: dict[str, str] = field(default_factory=dict)
    #: The ``<title>`` text of every HTML page, unescaped.
    titles: dict[str, str] = field(default_factory=dict)
    #: Non-HTML files the pages link to.
    assets: set[str] = field(default_factory=set)
    #: Pages robots.txt forbids; the seed links to them.
    disallowed: set[str] = field(default_factory=lambda: {PRIVATE})
    #: Links to other hosts, which must never be fetched.
    offsite_urls: set[str] = field(default_factory=lambda: set(OFFSITE_URLS))

    @property
    def pages(self) -> set[str]:
        return set(self.titles)


def write_site(root: Path, seed: int = 2024) -> SiteInfo:
    """Write the site under ``root`` and describe it; the same ``seed`` writes the same bytes.

    Existing files are overwritten but nothing is deleted, so use a fresh directory.
    """
    root = Path(root)
    info = SiteInfo(root=root)
    for page in build_pages(seed):
        codec, _, content_type = CHARSETS[page.charset]
        _write(root, page.path, render(page).encode(codec))
        info.titles[page.path] = page.title
        info.encodings[page.path] = codec
        if codec != "utf-8":
            info.gbk_pages.add(page.path)
        if content_type:
            info.headers[page.path] = {"Content-Type": content_type}
        if page.charset in WRONG_HEADER_CHARSETS:
            info.wrong_header_pages.add(page.path)
    info.on_topic = {
        path
        for s in SECTIONS
        if s.on_topic
        for path in [s.index, *(s.folder + a.slug for a in s.articles)]
    }
    assets = {
        "/files/menu.pdf": _pdf("Menu of the month"),
        "/files/schedule.pdf": _pdf("League fixtures"),
        "/images/dumplings.jpg": _JPEG,
    }
    for path, data in assets.items():
        _write(root, path, data)
    info.assets = set(assets)
    _write(root, "/robots.txt", ROBOTS_TXT.encode())
    _write(root, "/" + HEADERS_FILE, json.dumps(info.headers, indent=2, sort_keys=True).encode())
    return info


def _write(root: Path, path: str, data: bytes) -> None:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def _pdf(text: str) -> bytes:
    """A one-page PDF showing ``text`` (ASCII), with a correct cross-reference table."""
    stream = f"BT /F1 18 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, obj)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m demo.site",
        description="Write the demo site and serve it until killed; prints the base URL first.",
    )
    parser.add_argument("--out", type=Path, required=True, help="directory to write the site to")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any free)")
    parser.add_argument("--access-log", type=Path, help="append one line per request to this file")
    args = parser.parse_args(argv)
    write_site(args.out)
    server, url = serve(args.out, args.port, args.access_log)
    print(url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    main()
