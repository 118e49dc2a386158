"""``scrapy keywords``: a keyword file learned from sample on-topic pages (tf-idf)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit
from urllib.request import Request, urlopen

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from w3lib.url import safe_url_string

from topicspider.addon import TopicSpiderAddon
from topicspider.exceptions import SourceError, TopicSpiderError
from topicspider.extraction import (
    PageTerms,
    RegionTally,
    RepeatedRegions,
    background_idf,
    default_idf,
    html_terms,
    rank_terms,
    scale_weights,
    spell,
    text_terms,
    with_subwords,
)
from topicspider.text import SeenRegions

if TYPE_CHECKING:
    import argparse

#: Files of a sample folder that are read; ``.txt`` is plain text, the others HTML.
SAMPLE_SUFFIXES = (".html", ".htm", ".txt")


class PageReader:
    """Sample pages from a source: a URL (fetched once, no link is followed, however often
    it is read), an HTML or text file, or a folder of them; each page as the crawler would
    count its terms, without the link regions ``regions`` says were seen."""

    def __init__(self, *, title_weight: float, timeout: float, user_agent: str, max_size: int):
        self.title_weight = title_weight
        self.timeout = timeout
        self.user_agent = user_agent
        self.max_size = max_size
        self._fetched: dict[str, tuple[bytes, str, str]] = {}

    def read(self, source: str, regions: SeenRegions) -> list[PageTerms]:
        try:
            scheme = urlsplit(source).scheme.lower()
        except ValueError as error:  # "Invalid IPv6 URL"
            raise SourceError(f"{source}: not a valid URL ({error})") from None
        if scheme in ("http", "https"):
            return [self._nonempty(source, self._url(source, regions))]
        if "://" in source:
            raise SourceError(f"{source}: not an http(s) URL")
        path = Path(source).expanduser()
        if path.is_dir():
            return self._folder(path, regions)
        if path.is_file():
            return [self._nonempty(source, self._file(path, regions))]
        raise SourceError(f"{source}: no such file or folder, and not an http(s) URL")

    def _folder(self, folder: Path, regions: SeenRegions) -> list[PageTerms]:
        files = sorted(
            p for p in folder.rglob("*") if p.suffix.lower() in SAMPLE_SUFFIXES and p.is_file()
        )
        if not files:
            raise SourceError(f"{folder}: no {', '.join(SAMPLE_SUFFIXES)} files in the folder")
        pages = [terms for terms in (self._file(file, regions) for file in files) if terms]
        if not pages:
            raise SourceError(f"{folder}: none of its {len(files)} files has any text")
        return pages

    def _file(self, path: Path, regions: SeenRegions) -> PageTerms:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise SourceError(f"{path}: cannot read: {exc.strerror}") from None
        if path.suffix.lower() == ".txt":
            return text_terms(data)
        uri = path.resolve().as_uri()
        return html_terms(data, uri, title_weight=self.title_weight, regions=regions)

    def _url(self, url: str, regions: SeenRegions) -> PageTerms:
        if url not in self._fetched:
            self._fetched[url] = self._fetch(url)
        data, final_url, content_type = self._fetched[url]
        if content_type == "text/plain":
            return text_terms(data)
        return html_terms(
            data, final_url, content_type, title_weight=self.title_weight, regions=regions
        )

    def _fetch(self, url: str) -> tuple[bytes, str, str]:
        """The page's bytes, final URL and content type (``text/plain`` for plain text)."""
        try:
            request = Request(  # noqa: S310 - the caller allows http(s) only
                safe_url_string(url), headers={"User-Agent": self.user_agent}
            )
        except ValueError as error:  # "Port out of range 0-65535"
            raise SourceError(f"{url}: not a valid URL ({error})") from None
        try:
            with urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                data = response.read(self.max_size + 1)
                content_type = response.headers.get("Content-Type") or "text/html"
                final_url = response.geturl()
        except HTTPError as exc:
            raise SourceError(f"{url}: HTTP {exc.code} {exc.reason}") from None
        except URLError as exc:
            raise SourceError(f"{url}: cannot fetch: {exc.reason}") from None
        except (TimeoutError, OSError) as exc:
            raise SourceError(f"{url}: cannot fetch: {exc}") from None
        if len(data) > self.max_size:
            raise SourceError(f"{url}: larger than DOWNLOAD_MAXSIZE ({self.max_size} bytes)")
        media_type = content_type.split(";", 1)[0].strip().lower()
        if media_type == "text/plain":
            return data, final_url, media_type
        if "html" not in media_type:
            raise SourceError(f"{url}: not an HTML or text page ({media_type})")
        return data, final_url, content_type

    @staticmethod
    def _nonempty(source: str, terms: PageTerms) -> PageTerms:
        if not terms:
            raise SourceError(f"{source}: no text")
        return terms


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
            "-o", "--output", metavar="FILE", help="write the keyword file here (default: stdout)"
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
            raise UsageError("give at least one SOURCE: a URL, an HTML file or a folder")
        if options := [arg for arg in args if arg.startswith("-")]:
            raise UsageError(f"unknown option {options[0]}")
        if opts.top < 1:
            raise UsageError("--top must be at least 1")
        try:
            text = self.keyword_file(args, opts.background, opts.top)
            if opts.output:
                output = Path(opts.output)
                output.parent.mkdir(parents=True, exist_ok=True)
                output.write_text(text, "utf-8")
        except OSError as exc:
            self._fail(f"{opts.output}: cannot write: {exc.strerror}")
        except TopicSpiderError as error:
            self._fail(str(error))
        else:
            if not opts.output:
                sys.stdout.write(text)

    def _fail(self, message: str) -> None:
        print(f"topicspider: error: {message}", file=sys.stderr)
        self.exitcode = 2

    def keyword_file(self, sources: list[str], background: list[str], top: int) -> str:
        assert self.settings is not None
        settings = self.settings.copy()
        TopicSpiderAddon().update_settings(settings)  # the crawl's User-Agent; no crawler here
        reader = PageReader(
            title_weight=settings.getfloat("TOPIC_TITLE_WEIGHT", 3.0),
            timeout=settings.getfloat("DOWNLOAD_TIMEOUT"),
            user_agent=settings.get("USER_AGENT"),
            max_size=settings.getint("DOWNLOAD_MAXSIZE"),
        )
        tally = RegionTally()
        for source in [*sources, *background]:
            reader.read(source, tally)
        repeated = RepeatedRegions(tally)
        samples = [page for source in sources for page in reader.read(source, repeated)]
        words = set().union(*(page.counts for page in samples))
        samples = [with_subwords(page, words) for page in samples]
        counts = [page.counts for page in samples]
        if background:
            others = [page for source in background for page in reader.read(source, repeated)]
            idf = background_idf(with_subwords(page, words).counts for page in others)
            idf_from = f"idf from {len(others)} background pages ({_listing(background)})"
        else:
            idf = default_idf(counts)
            idf_from = "idf from jieba's table (Chinese) and the samples (other terms)"
        weights = scale_weights(spell(rank_terms(counts, idf, top), samples))
        if not weights:
            raise SourceError(
                "no term sets the samples apart from the background: every word of the "
                "samples is also on every background page"
            )
        header = (
            f"# Extracted by `scrapy keywords`: the top {len(weights)} terms by tf-idf over "
            f"{len(samples)} sample pages ({_listing(sources)});\n"
            f"# {idf_from}.\n"
            "# Weights are scaled so that the best term has 3; edit freely.\n"
        )
        return header + "".join(f"{term} {weight:g}\n" for term, weight in weights)


def _listing(sources: list[str], limit: int = 160) -> str:
    text = " ".join(", ".join(sources).split())  # one comment line, whatever the names
    return text if len(text) <= limit else text[: limit - 1] + "…"
