"""``scrapy keywords``: a keyword file learned from sample on-topic pages (tf-idf)."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import mimetypes
import os
import signal
import sys
import threading
import time
import zlib
from dataclasses import dataclass
from http.client import HTTPException, HTTPResponse
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit
from urllib.request import HTTPCookieProcessor, HTTPRedirectHandler, Request, build_opener

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from w3lib.url import safe_url_string

from topicspider.addon import TopicSpiderAddon
from topicspider.charset import is_binary, readable
from topicspider.exceptions import SourceError, TopicSpiderError
from topicspider.extraction import (
    PageTerms,
    RegionTally,
    RepeatedRegions,
    SharedText,
    background_idf,
    default_idf,
    html_text,
    plain_text,
    rank_terms,
    scale_weights,
    spell,
    term_counts,
    with_subwords,
)
from topicspider.inflate import ZLIB_CODINGS, inflate
from topicspider.settingtypes import check_types
from topicspider.text import SeenRegions

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator
    from typing import TextIO

#: Files of a sample folder that are read; ``.txt`` is plain text, the others HTML.
SAMPLE_SUFFIXES = (".html", ".htm", ".txt")
#: How every keyword file this command writes begins.
HEADER = "# Extracted by `scrapy keywords`"
#: Bytes read from a response at a time, between two looks at the clock.
CHUNK_SIZE = 64 * 1024


@dataclass(frozen=True)
class Page:
    """A sample page: its address, content type (``text/plain`` for plain text, None for
    an HTML file), and its bytes if it was fetched or the file they are in (read again
    when needed, not kept: a background folder may hold thousands of pages)."""

    url: str
    content_type: str | None
    content: bytes | Path


class _HttpRedirects(HTTPRedirectHandler):
    """Redirects to http(s) only, as the crawler follows them: urllib would follow one to
    ``ftp://`` too."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if urlsplit(newurl).scheme.lower() not in ("http", "https"):
            raise HTTPError(newurl, code, f"{msg}, to {newurl}", headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class PageReader:
    """Sample pages from a source: a URL (fetched once, no link is followed, however often
    it is given), an HTML or text file, or a folder of them. A page read before (the same
    bytes, from whatever source) is not read again: counted twice, its words would weigh
    twice, and its own link lists would look like a sidebar two pages share. ``tally``
    counts the link regions of the pages read (see :class:`RepeatedRegions`)."""

    def __init__(
        self, *, title_weight: float, max_chars: int, timeout: float, user_agent: str, max_size: int
    ):
        self.title_weight = title_weight
        #: ``TOPIC_MAX_TEXT_CHARS``: a sample's text as far as the crawl reads a page's.
        self.max_chars = max_chars
        self.timeout = timeout
        self.user_agent = user_agent
        self.max_size = max_size
        self.tally = RegionTally()
        #: Pages given again (read before, by their bytes) and left out.
        self.repeated = 0
        self._digests: set[bytes] = set()
        self._fetched: dict[str, Page] = {}
        # Cookies kept, as Scrapy keeps them: a site that sets one and redirects back
        # to the page is no redirect loop.
        self._opener = build_opener(HTTPCookieProcessor(), _HttpRedirects)

    def read(self, source: str) -> list[Page]:
        """The pages of ``source`` that have text and were not read before."""
        pages, empty = self._pages(source)
        counted = []
        repeated = self.repeated
        for page in pages:
            data = _data(page)
            digest = hashlib.sha256(data).digest()
            if digest in self._digests:
                self.repeated += 1
            elif self._terms(page, data, self.tally):
                counted.append(page)
            self._digests.add(digest)
        if not counted and self.repeated - repeated < len(pages):
            raise SourceError(f"{source}: {empty}")
        return counted

    def text(self, page: Page, regions: SeenRegions) -> tuple[str, str]:
        """The page's title and body, as far as the crawl reads a page, without the link
        regions ``regions`` says were seen."""
        return self._text(page, _data(page), regions)

    def terms(self, page: Page, regions: SeenRegions) -> PageTerms:
        """The page's terms as the crawler counts them, without the link regions ``regions``
        says were seen."""
        return term_counts(*self.text(page, regions), title_weight=self.title_weight)

    def _terms(self, page: Page, data: bytes, regions: SeenRegions) -> PageTerms:
        return term_counts(*self._text(page, data, regions), title_weight=self.title_weight)

    def _text(self, page: Page, data: bytes, regions: SeenRegions) -> tuple[str, str]:
        if page.content_type == "text/plain":
            return plain_text(data)
        return html_text(data, page.url, page.content_type, regions, self.max_chars)

    def _pages(self, source: str) -> tuple[list[Page], str]:
        """The source's pages, and what to say if none of them has text."""
        try:
            scheme = urlsplit(source).scheme.lower()
        except ValueError as error:  # "Invalid IPv6 URL"
            raise SourceError(f"{source}: not a valid URL ({error})") from None
        if scheme in ("http", "https"):
            if source not in self._fetched:
                self._fetched[source] = self._fetch(source)
            return [self._fetched[source]], "no text"
        if "://" in source:
            raise SourceError(f"{source}: not an http(s) URL")
        try:
            path = Path(source).expanduser()
            if path.is_dir():
                pages = self._folder(path)
                return pages, f"none of its {len(pages)} files has any text"
            if path.is_file():
                _check_media_type(path)
                return [_file(path)], "no text"
        except (OSError, RuntimeError) as error:  # a name too long; "~name" of no user
            raise SourceError(f"{source}: cannot read: {_reason(error)}") from None
        raise SourceError(f"{source}: no such file or folder, and not an http(s) URL")

    def _folder(self, folder: Path) -> list[Page]:
        """The folder's pages; a keyword file this command wrote there is none."""
        files = sorted(
            p for p in folder.rglob("*") if p.suffix.lower() in SAMPLE_SUFFIXES and p.is_file()
        )
        pages = [_file(file) for file in files if not _keyword_file(file)]
        if not pages:
            raise SourceError(f"{folder}: no {', '.join(SAMPLE_SUFFIXES)} files in the folder")
        return pages

    def _fetch(self, url: str) -> Page:
        """The page at ``url``, whole, within ``timeout`` seconds and ``max_size`` bytes
        (0: any size), as Scrapy's ``DOWNLOAD_TIMEOUT`` and ``DOWNLOAD_MAXSIZE`` bound a
        download."""
        try:
            request = Request(  # noqa: S310 - the caller allows http(s) only
                safe_url_string(url), headers={"User-Agent": self.user_agent}
            )
        except ValueError as error:  # "Port out of range 0-65535"
            raise SourceError(f"{url}: not a valid URL ({error})") from None
        deadline = time.monotonic() + self.timeout
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                content_type = response.headers.get("Content-Type") or "text/html"
                coding = (response.headers.get("Content-Encoding") or "").strip().lower()
                data = self._decompressed(url, self._body(url, response, deadline), coding)
                final_url = response.geturl()
        except HTTPError as exc:
            if str(exc.reason).startswith(HTTPRedirectHandler.inf_msg):  # three lines long
                raise SourceError(f"{url}: a redirect loop, or too many redirects") from None
            raise SourceError(f"{url}: HTTP {exc.code} {exc.reason}") from None
        except URLError as exc:
            raise SourceError(f"{url}: cannot fetch: {exc.reason}") from None
        except (TimeoutError, OSError) as exc:
            raise SourceError(f"{url}: cannot fetch: {exc}") from None
        except SourceError:  # said already (a ValueError too)
            raise
        except ValueError as exc:  # a host IDNA refuses (a..b), a timeout out of range
            raise SourceError(f"{url}: cannot fetch: {exc}") from None
        except HTTPException as exc:  # no HTTP answer, or a broken one
            raise SourceError(f"{url}: cannot fetch: {exc!r}") from None
        media_type = content_type.split(";", 1)[0].strip().lower()
        if is_binary(data, content_type):  # as the crawl skips it
            raise SourceError(f"{url}: not an HTML or text page (binary data)")
        if media_type == "text/plain":
            return Page(final_url, media_type, data)
        if "html" not in media_type:
            raise SourceError(f"{url}: not an HTML or text page ({media_type})")
        return Page(final_url, content_type, data)

    def _body(self, url: str, response: HTTPResponse, deadline: float) -> bytes:
        """The response's body; a server that trickles it out times out all the same."""
        chunks: list[bytes] = []
        size = 0
        while chunk := response.read1(CHUNK_SIZE):
            size += len(chunk)
            if self.max_size and size > self.max_size:
                raise SourceError(f"{url}: larger than DOWNLOAD_MAXSIZE ({self.max_size} bytes)")
            if time.monotonic() > deadline:
                raise SourceError(f"{url}: cannot fetch: timed out after {self.timeout:g} s")
            chunks.append(chunk)
        if response.length:  # the connection closed before the Content-Length was read
            raise SourceError(f"{url}: cannot fetch: cut short after {size} bytes")
        return b"".join(chunks)

    def _decompressed(self, url: str, data: bytes, coding: str) -> bytes:
        """The body without its ``Content-Encoding``. None is asked for, but some servers
        compress all the same, and Scrapy undoes it: counted as they are, the compressed
        bytes would be the page's words."""
        if coding in ("", "identity"):
            return data
        if coding not in ZLIB_CODINGS:
            raise SourceError(f"{url}: cannot fetch: Content-Encoding {coding!r} is not supported")
        limit = self.max_size + 1 if self.max_size else 0
        try:
            body = inflate(data, limit)
        except zlib.error as error:
            raise SourceError(f"{url}: cannot fetch: broken {coding} body ({error})") from None
        if self.max_size and len(body) > self.max_size:
            raise SourceError(f"{url}: larger than DOWNLOAD_MAXSIZE ({self.max_size} bytes)")
        return body


def _file(path: Path) -> Page:
    content_type = "text/plain" if path.suffix.lower() == ".txt" else None
    return Page(path.resolve().as_uri(), content_type, path)


def _check_media_type(path: Path) -> None:
    """A file named as a source is read as HTML unless it is ``.txt``; one whose name says
    it is something else (``.pdf``, ``.jpg``, ``.docx``) is refused, as a URL serving it is,
    instead of its bytes being counted as words."""
    media_type = mimetypes.guess_type(path.name)[0]
    if media_type and not (
        media_type.startswith("text/") or "html" in media_type or media_type.endswith("xml")
    ):
        raise SourceError(f"{path}: not an HTML or text file ({media_type})")


def _data(page: Page) -> bytes:
    if isinstance(page.content, bytes):
        return page.content
    try:
        data = page.content.read_bytes()
    except OSError as exc:
        raise SourceError(f"{page.content}: cannot read: {_reason(exc)}") from None
    if is_binary(data, page.content_type):
        raise SourceError(f"{page.content}: not an HTML or text file (binary data)")
    return data


def _keyword_file(path: Path) -> bool:
    """Whether ``path`` is a keyword file this command wrote: an earlier run's, among the
    samples it was learned from, is no sample."""
    header = HEADER.encode()
    try:
        with path.open("rb") as file:
            return file.read(len(header)) == header
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {_reason(exc)}") from None


def _reason(error: Exception) -> str:
    return (error.strerror if isinstance(error, OSError) else None) or str(error)


@contextlib.contextmanager
def _replacing(path: Path) -> Iterator[TextIO]:
    """A file that replaces ``path`` when the block ends without an error, and is removed
    otherwise: a keyword file is never left half written. Opened before any page is read,
    so that an output that cannot be written stops the command before it fetches."""
    path = path.resolve()  # a symlinked keyword file stays a symlink
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    if not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with open(descriptor, "w", encoding="utf-8") as file:
            yield file
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


class Command(ScrapyCommand):
    requires_crawler_process = False
    default_settings = {"DOWNLOAD_TIMEOUT": 30}  # noqa: RUF012 - Scrapy's own interface

    def syntax(self) -> str:
        return "[options] SOURCE ... [--background SOURCE ...]"

    def short_desc(self) -> str:
        return "Write a keyword file from sample on-topic pages (tf-idf)"

    def long_desc(self) -> str:
        return (
            "Rank the terms of sample on-topic pages by tf-idf and write the best as a keyword "
            "file. SOURCE is an http(s) URL (fetched once), an HTML or .txt file, or a folder "
            "of *.html, *.htm and *.txt files. idf comes from the --background pages (off-topic "
            "text, e.g. other sections of the same site); without them, from jieba's idf table "
            "for Chinese terms and from the samples for other terms."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "--top", type=int, default=20, metavar="N", help="keep the N best terms (default 20)"
        )
        parser.add_argument(
            "-o",
            "--output",
            metavar="FILE",
            help="write the keyword file here (default, or '-': stdout)",
        )
        parser.add_argument(
            "--background",
            nargs="+",
            action="extend",
            default=[],
            metavar="SOURCE",
            help="off-topic pages the idf is learned from (URLs, files or folders)",
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args:
            after = " before --background, which takes every source after it" * bool(
                opts.background
            )
            raise UsageError(f"give at least one SOURCE: a URL, an HTML file or a folder{after}")
        if options := [arg for arg in args if arg.startswith("-")]:
            raise UsageError(f"unknown option {options[0]}")
        if opts.top < 1:
            raise UsageError("--top must be at least 1")
        with _interruptible():
            self._write_keyword_file(args, opts)

    def _write_keyword_file(self, args: list[str], opts: argparse.Namespace) -> None:
        try:
            check_types(self.settings)  # as a crawl checks them, before any page is read
            with contextlib.ExitStack() as stack:
                to_file = opts.output not in (None, "", "-")  # "-": stdout, as Scrapy's -o
                output = stack.enter_context(_replacing(Path(opts.output))) if to_file else None
                text = self.keyword_file(args, opts.background, opts.top)
                (output or sys.stdout).write(text)
        except OSError as exc:
            self._fail(f"{opts.output}: cannot write: {_reason(exc)}")
        except TopicSpiderError as error:
            self._fail(str(error))
        except KeyboardInterrupt:  # Ctrl-C while a page is read: nothing written, no traceback
            print("topicspider: stopped: no keyword file written", file=sys.stderr)
            self.exitcode = 128 + signal.SIGINT

    def _fail(self, message: str) -> None:
        print(f"topicspider: error: {readable(message)}", file=sys.stderr)
        self.exitcode = 2

    def keyword_file(self, sources: list[str], background: list[str], top: int) -> str:
        assert self.settings is not None
        settings = self.settings.copy()
        TopicSpiderAddon().update_settings(settings)  # the crawl's User-Agent; no crawler here
        reader = PageReader(
            title_weight=settings.getfloat("TOPIC_TITLE_WEIGHT", 3.0),
            max_chars=settings.getint("TOPIC_MAX_TEXT_CHARS"),
            timeout=settings.getfloat("DOWNLOAD_TIMEOUT"),
            user_agent=settings.get("USER_AGENT"),
            max_size=settings.getint("DOWNLOAD_MAXSIZE"),
        )
        sample_pages = [page for source in sources for page in reader.read(source)]
        repeated = reader.repeated
        other_pages = [page for source in background for page in reader.read(source)]
        left_out = reader.repeated - repeated
        if background and not other_pages:
            raise SourceError(
                "every --background page is also a sample: the background is off-topic text"
            )
        regions = RepeatedRegions(reader.tally)
        texts = [reader.text(page, regions) for page in sample_pages]
        # Background pages weigh what the site says everywhere (its name, header, footer)
        # at nothing, and keep what the samples' section of it says: the samples alone
        # cannot tell the two apart, and lose what they share.
        shared = None if background else SharedText(texts)
        title_weight = reader.title_weight
        samples = [term_counts(*text, title_weight=title_weight, shared=shared) for text in texts]
        words = set().union(*(page.counts for page in samples))
        samples = [with_subwords(page, words) for page in samples]
        counts = [page.counts for page in samples]
        if background:
            others = (reader.terms(page, regions) for page in other_pages)
            idf = background_idf(with_subwords(page, words).counts for page in others)
            idf_from = f"idf from {len(other_pages)} background pages ({_listing(background)}"
            idf_from += f"; {left_out} also samples or given twice, left out)" if left_out else ")"
        else:
            idf = default_idf(counts)
            idf_from = "idf from jieba's table (Chinese) and the samples (other terms)"
        weights = scale_weights(spell(rank_terms(counts, idf, top), samples))
        if not weights:
            raise SourceError(
                "no term sets the samples apart from the background: every word of the "
                "samples is also on every background page"
            )
        given_again = f"; {repeated} given twice, counted once" if repeated else ""
        header = (
            f"{HEADER}: the top {len(weights)} terms by tf-idf over "
            f"{len(samples)} sample {'page' if len(samples) == 1 else 'pages'}"
            f" ({_listing(sources)}{given_again});\n"
            f"# {idf_from}.\n"
            "# Weights are scaled so that the best term has 3; edit freely.\n"
        )
        return header + "".join(f"{term} {weight:g}\n" for term, weight in weights)


def _listing(sources: list[str], limit: int = 160) -> str:
    text = " ".join(", ".join(sources).split())  # one comment line, whatever the names
    return text if len(text) <= limit else text[: limit - 1] + "…"


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C (SIGINT) stops the command, as it does a crawl, even if it was started with
    SIGINT ignored, as a shell without job control starts a command run with ``&``; the
    handler before is put back after. Only the main thread can set one."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
