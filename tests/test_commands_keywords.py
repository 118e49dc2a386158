"""``scrapy keywords`` on the fixture site: files, folders and URLs served on 127.0.0.1."""

from __future__ import annotations

import gzip
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pytest

from tests.httpserver import Handler, serving
from topicspider.commands.keywords import _interruptible
from topicspider.keywords import parse_keyword_file
from topicspider.relevance import Relevance
from topicspider.tokens import normalize_term

ROOT = Path(__file__).resolve().parent.parent

FOOTBALL = {
    "足球",
    "比赛",
    "球队",
    "联赛",
    "赛季",
    "本赛季",
    "球员",
    "进球",
    "射门",
    "教练",
    "球迷",
    "战术",
    "控球",
    "体育",
    "football",
    "league",
    "goal",
    "coach",
    "match",
    "player",
    "club",
    "season",
}
#: Words of the site's cooking and finance pages (checked to be there) that are no football term.
COOKING_AND_FINANCE = {"菜谱", "烹饪", "火候", "理财", "基金", "股票", "投资", "recipe", "oven"}


def scrapy_keywords(*args: str | Path, **popen) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "keywords", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        **{"cwd": ROOT, "env": {**os.environ, "PYTHONPATH": str(ROOT)}, **popen},
    )


def terms_of(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    return [line.rsplit(" ", 1)[0] for line in lines]


def weighted(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def files(site, paths) -> list[Path]:
    return [site.root / path.lstrip("/") for path in sorted(paths)]


def off_topic(site) -> set[str]:
    return site.pages - site.on_topic - site.disallowed


def test_on_topic_pages_against_off_topic_background(site, tmp_path):
    out = tmp_path / "keywords" / "football.txt"
    result = scrapy_keywords(
        *files(site, site.on_topic),
        "--top",
        "20",
        "-o",
        out,
        "--background",
        *files(site, off_topic(site)),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout == ""
    text = out.read_text("utf-8")
    assert text.startswith("# Extracted by `scrapy keywords`")
    assert f"over {len(site.on_topic)} sample pages" in text
    assert f"idf from {len(off_topic(site))} background pages" in text
    terms = terms_of(text)
    assert len(terms) == 20
    assert len(set(terms[:5]) & FOOTBALL) >= 4, terms
    assert {"足球", "比赛"} <= set(terms), terms
    assert {"football", "league", "match", "goal"} & set(terms), terms
    background_text = " ".join(
        path.read_bytes().decode("gb18030", "replace") for path in files(site, off_topic(site))
    )
    assert all(word in background_text for word in COOKING_AND_FINANCE)
    assert not set(terms) & COOKING_AND_FINANCE

    # The file is a keyword file like any other: it loads, with the weights it shows, each
    # term read as the tokenizer reads it (``league`` as ``leagu``).
    vector = parse_keyword_file(out)
    assert list(vector.weights) == [normalize_term(term) for term in terms]
    assert max(vector.weights.values()) == 3.0
    assert all(weight >= 0.1 for weight in vector.weights.values())


def test_urls_are_fetched_and_decoded(site, site_url):
    sports = sorted(path for path in site.on_topic if path.startswith("/sports/"))
    assert set(sports) & site.gbk_pages, "the samples should include GBK pages"
    result = scrapy_keywords(
        *(site_url + path for path in sports),
        "--top",
        "10",
        "--background",
        *(site_url + path for path in sorted(off_topic(site))),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"over {len(sports)} sample pages ({site_url}/sports/" in result.stdout
    terms = terms_of(result.stdout)
    assert len(terms) == 10
    assert "足球" in terms
    assert len(set(terms[:5]) & FOOTBALL) >= 4, terms
    assert not set(terms) & COOKING_AND_FINANCE


def test_a_folder_without_background_uses_jiebas_idf(site, tmp_path):
    result = scrapy_keywords(site.root / "sports", "--top", "15")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "idf from jieba's table" in result.stdout
    terms = terms_of(result.stdout)
    assert len(terms) == 15
    assert len(set(terms[:5]) & FOOTBALL) >= 4, terms
    assert not set(terms) & COOKING_AND_FINANCE
    out = tmp_path / "stdout.txt"
    out.write_text(result.stdout, "utf-8")
    assert list(parse_keyword_file(out).weights) == terms


def test_output_dash_is_stdout_and_one_sample_is_one_page(site, tmp_path):
    """Before, ``-o -`` wrote a file named ``-`` (Scrapy's ``-o -`` is stdout), and the header
    of a file learned from one page said "over 1 sample pages"."""
    page = next(iter(files(site, site.on_topic)))
    project = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SCRAPY_SETTINGS_MODULE": "topicspider.settings",
    }
    result = scrapy_keywords(page, "-o", "-", cwd=tmp_path, env=project)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "over 1 sample page (" in result.stdout
    assert terms_of(result.stdout)
    assert not (tmp_path / "-").exists()


def learned(tmp_path: Path, samples: list[str], other: list[str], top: int) -> str:
    """The keyword file learned from a folder of sample pages against one of background
    pages, each page in UTF-8."""
    folders = tmp_path / "samples", tmp_path / "other"
    for folder, pages in zip(folders, (samples, other), strict=True):
        folder.mkdir()
        for n, page in enumerate(pages):
            (folder / f"{n}.html").write_text(page, "utf-8")
    result = scrapy_keywords(folders[0], "--top", str(top), "--background", folders[1])
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_terms_are_written_as_the_samples_spell_them(tmp_path):
    stdout = learned(
        tmp_path,
        [
            "<title>Browser caches</title><p>Cookies and caches: a browser keeps cookies for "
            "each server. 代理服务器缓存网页。</p>",
            "<title>HTTP cookies</title><p>A server sets cookies; caches keep pages. "
            "服务器设置缓存。</p>",
        ],
        ["<p>Recipes for the oven. 菜谱和烹饪。</p>"],
        top=12,
    )
    terms = terms_of(stdout)
    assert {"cookies", "caches", "服务器", "代理服务器"} <= set(terms), terms
    assert not {"cooki", "cach", "务器", "服务"} & set(terms), terms  # 服务 is never a word here
    out = tmp_path / "web.txt"
    out.write_text(stdout, "utf-8")
    assert {"cooki", "cach", "服务器"} <= set(parse_keyword_file(out).weights)


def test_a_word_joined_to_a_letter_is_learned_with_it(tmp_path):
    """Before, pages on B-trees gave ``tree``, which a crawl matches on every tree."""
    stdout = learned(
        tmp_path,
        [
            "<title>B-tree indexes</title><p>A B-tree index keeps keys sorted; a B-tree page"
            " splits when full.</p>",
            "<title>Index types</title><p>Hash and B-tree indexes: the planner picks a B-tree"
            " for ranges.</p>",
        ],
        ["<title>Widgets</title><p>The tree view shows a tree of folders.</p>"],
        top=5,
    )
    assert "b-tree" in terms_of(stdout), stdout
    out = tmp_path / "indexes.txt"
    out.write_text(stdout, "utf-8")
    assert "b tree" in parse_keyword_file(out).weights


def test_traditional_samples_give_terms_in_traditional_characters(tmp_path):
    """Big5 samples in Traditional characters: the terms come out as the samples write
    them, and the file reads back as the tokenizer reads them, in Simplified ones, which
    match pages in either."""
    samples, other = tmp_path / "samples", tmp_path / "other"
    samples.mkdir()
    other.mkdir()
    for name, title, text in (
        ("a", "聯賽戰報", "聯賽第十輪比賽，主隊球員連進兩球，球迷在看臺上歡呼。"),
        ("b", "球隊動態", "球隊在聯賽中保持不敗，球員和教練一起慶祝勝利。"),
    ):
        page = f"<meta charset=big5><title>{title}</title><p>{text}</p>"
        (samples / f"{name}.html").write_bytes(page.encode("big5"))
    (other / "c.html").write_text("<p>菜谱和烹饪：先把土豆切成细丝，再下锅快炒。</p>", "utf-8")
    result = scrapy_keywords(samples, "--top", "6", "--background", other)
    assert result.returncode == 0, result.stderr[-2000:]
    terms = set(terms_of(result.stdout))
    assert {"聯賽", "球員", "球隊"} <= terms, terms
    assert not {"联赛", "球员", "球队"} & terms, terms
    out = tmp_path / "football.txt"
    out.write_text(result.stdout, "utf-8")
    relevance = Relevance(parse_keyword_file(out))
    simplified, traditional = "联赛第十轮，球员和球队", "聯賽第十輪，球員和球隊"
    assert relevance.text(simplified) == relevance.text(traditional) > 0.3


def sidebar(name: str) -> str:
    """A site's table of contents in a plain ``div``, as Texinfo and most templates write it."""
    entries = "".join(
        f'<div><a href="/book/{name}-{n}.html">{name.title()} ensembles, part {n}</a></div>'
        for n in range(45)
    )
    return f'<div class="contents">{entries}</div>'


def test_a_sidebar_every_sample_shows_gives_no_keyword(tmp_path):
    """The samples come from one part of a site and the background from another, with
    another sidebar: the samples' sidebar is on each of them, the background has none of
    its words, and it would make them the best keywords."""
    football = ["The league match ended with a late goal.", "The coach praised the club's goal."]
    cooking = ["Stir the sauce over a low flame.", "Bake the bread for an hour."]
    stdout = learned(
        tmp_path,
        [f"<title>Match report</title><body>{sidebar('vocal')}<p>{t}</p></body>" for t in football],
        [f"<title>Recipe</title><body>{sidebar('kitchen')}<p>{t}</p></body>" for t in cooking],
        top=8,
    )
    terms = terms_of(stdout)
    assert {"goal", "match"} <= set(terms), terms
    assert not {"vocal", "ensembles", "part"} & set(terms), terms


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    ("make_args", "message"),
    [
        (lambda tmp, url: [tmp / "missing.html"], "missing.html: no such file or folder"),
        (lambda tmp, url: [f"http://127.0.0.1:{closed_port()}/"], "cannot fetch"),
        (lambda tmp, url: [f"{url}/no-such-page.html"], "HTTP 404"),
        (lambda tmp, url: [f"{url}/files/menu.pdf"], "not an HTML or text page"),
        (lambda tmp, url: ["ftp://127.0.0.1/page.html"], "not an http(s) URL"),
        (lambda tmp, url: ["http://127.0.0.1:99999/"], "not a valid URL (Port out of range"),
        (lambda tmp, url: ["http://[::1/"], "not a valid URL (Invalid IPv6 URL)"),
        (lambda tmp, url: [tmp / "empty.html"], "empty.html: no text"),
        (lambda tmp, url: [tmp / "photo.jpg"], "photo.jpg: not an HTML or text file (image/jpeg)"),
        (lambda tmp, url: [tmp / "menu.pdf"], "not an HTML or text file (application/pdf)"),
        (lambda tmp, url: [tmp / "saved.html"], "saved.html: not an HTML or text file (binary"),
        (lambda tmp, url: [tmp / "nopages"], "no .html, .htm, .txt files"),
        (lambda tmp, url: [tmp / "blank"], "none of its 1 files has any text"),
        (lambda tmp, url: ["~nosuchuser/a.html"], "cannot read: Could not determine home"),
        (lambda tmp, url: [tmp / f"{'a' * 300}.html"], "cannot read: File name too long"),
        (
            lambda tmp, url: [f"{url}/sports/index.html", "--background", tmp / "gone"],
            "gone: no such file",
        ),
        (lambda tmp, url: [f"{url}/sports/index.html", "--top", "0"], "--top must be at least 1"),
        # before, tracebacks: the settings were read unchecked, the fetch's errors half caught
        (
            lambda tmp, url: [tmp / "page.html", "-s", "DOWNLOAD_MAXSIZE=1e6"],
            "DOWNLOAD_MAXSIZE='1e6': expected a whole number",
        ),
        (
            lambda tmp, url: [tmp / "page.html", "-s", "TOPIC_TITLE_WEIGHT=-1"],
            "TOPIC_TITLE_WEIGHT='-1': expected a number >= 0",
        ),
        (
            lambda tmp, url: [f"{url}/sports/index.html", "-s", "TOPIC_CONTACT=张三@例子.中国"],
            "TOPIC_CONTACT='张三@例子.中国': expected printable ASCII",
        ),
        (lambda tmp, url: ["http://a..b/"], "http://a..b/: cannot fetch: encoding with 'idna'"),
        (lambda tmp, url: [], "give at least one SOURCE"),
        (  # before: the same line, without why
            lambda tmp, url: ["--background", tmp / "nopages", f"{url}/sports/index.html"],
            "give at least one SOURCE: a URL, an HTML file or a folder before --background",
        ),
    ],
)
def test_bad_sources_give_one_clear_message_and_status_2(site_url, tmp_path, make_args, message):
    (tmp_path / "empty.html").write_text("<html><body><script>x()</script></body></html>")
    (tmp_path / "page.html").write_text("<html><body><p>football match goal</p></body></html>")
    (tmp_path / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00football" * 50)
    (tmp_path / "menu.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n" * 50)
    (tmp_path / "saved.html").write_bytes(b"\x1f\x8b\x08\x00\x00\x00football match goal" * 50)
    (tmp_path / "nopages").mkdir()
    (tmp_path / "nopages" / "notes.md").write_text("football")
    (tmp_path / "blank").mkdir()
    (tmp_path / "blank" / "a.txt").write_text("  ,,, 42 ")
    result = scrapy_keywords(*make_args(tmp_path, site_url))
    assert result.returncode == 2, result.stderr[-2000:]
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_a_redirect_loop_is_one_line():
    """Before, urllib's three-line message: "...would lead to an infinite loop.\nThe last
    30x error message was:\nFound"."""

    class Loop(Handler):
        def do_GET(self) -> None:
            self.send(b"", status=302, Location="/b" if self.path == "/a" else "/a")

    with serving(Loop) as url:
        result = scrapy_keywords(f"{url}/a")
    assert result.returncode == 2
    assert result.stderr == (
        f"topicspider: error: {url}/a: a redirect loop, or too many redirects\n"
    )


def test_a_site_that_sets_a_cookie_and_redirects_back_is_fetched():
    """As a crawl fetches it (Scrapy keeps cookies): before, 'a redirect loop'."""

    class CookieGate(Handler):
        def do_GET(self) -> None:
            if "visited=1" not in (self.headers["Cookie"] or ""):
                self.send(b"", status=302, Location=self.path, **{"Set-Cookie": "visited=1"})
            else:
                self.send("<title>足球</title><p>足球比赛的战术与球员</p>".encode())

    with serving(CookieGate) as url:
        result = scrapy_keywords(f"{url}/a.html")
    assert result.returncode == 0, result.stderr
    assert "足球" in terms_of(result.stdout)


@pytest.mark.parametrize(
    ("coding", "compress"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda data: zlib.compress(data, wbits=-zlib.MAX_WBITS)),  # raw, as IIS
    ],
)
def test_a_page_compressed_unasked_is_read_as_a_crawl_reads_it(coding, compress):
    """Before, its compressed bytes were counted as words: '6pàf 3', 'dìf 3'."""

    class Compressed(Handler):
        def do_GET(self) -> None:
            page = "<title>足球</title><p>足球比赛的战术与球员</p>".encode()
            self.send(compress(page), **{"Content-Encoding": coding})

    with serving(Compressed) as url:
        result = scrapy_keywords(f"{url}/a.html")
    assert result.returncode == 0, result.stderr
    assert terms_of(result.stdout)[0] == "足球", result.stdout


def test_a_binary_file_served_as_html_is_refused_as_a_crawl_skips_it():
    """Before, a PDF served as ``text/html`` gave 'stream 3, filter 2.7, flatedecode 2.7'."""

    class Mislabelled(Handler):
        def do_GET(self) -> None:
            pdf = b"%PDF-1.4\n1 0 obj\n<< /Filter /FlateDecode /Length 90 >>\nstream\n"
            self.send(pdf + bytes(range(256)) * 8 + b"\nendstream\nendobj\n")

    with serving(Mislabelled) as url:
        result = scrapy_keywords(f"{url}/manual.html")
    assert result.returncode == 2
    assert result.stderr == (
        f"topicspider: error: {url}/manual.html: not an HTML or text page (binary data)\n"
    )


def test_a_page_in_an_unknown_content_encoding_is_one_line():
    class Brotli(Handler):
        def do_GET(self) -> None:
            self.send(b"\x1b\x03\x00\xf8\xa5", **{"Content-Encoding": "br"})

    with serving(Brotli) as url:
        result = scrapy_keywords(f"{url}/a.html")
    assert result.returncode == 2
    assert result.stderr == (
        f"topicspider: error: {url}/a.html: cannot fetch: Content-Encoding 'br' is not supported\n"
    )


def test_a_server_that_never_answers_times_out():
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/page.html"
        result = scrapy_keywords(url, "-s", "DOWNLOAD_TIMEOUT=1")
    assert result.returncode == 2
    assert f"{url}: cannot fetch: timed out" in result.stderr


@pytest.mark.parametrize(
    ("settings", "user_agent"),
    [
        (
            ["-s", "TOPIC_CONTACT=ops@example.org"],
            "topicspider/0.1.0 (focused crawler; +ops@example.org)",
        ),
        (["-s", "USER_AGENT=mybot/2"], "mybot/2"),
    ],
)
def test_pages_are_fetched_with_the_crawl_s_user_agent(settings, user_agent):
    seen: list[str] = []

    class Page(Handler):
        def do_GET(self) -> None:
            seen.append(self.headers["User-Agent"])
            body = "<html><title>足球</title><body><p>足球比赛的战术与球员</p></body></html>"
            self.send(body.encode(), "text/html; charset=utf-8")

    with serving(Page) as url:
        result = scrapy_keywords(f"{url}/a.html", *settings)
    assert result.returncode == 0, result.stderr
    assert seen == [user_agent]


def match_reports(folder: Path) -> None:
    """A list of match reports (its own table of contents, 45 links) and a match report."""
    folder.mkdir()
    links = "".join(
        f'<li><a href="/reports/{n}.html">Derby goalkeeper heroics in round {n}</a></li>'
        for n in range(45)
    )
    (folder / "index.html").write_text(
        f"<title>Reports</title><h1>All match reports</h1><ul>{links}</ul><p>The season.</p>"
    )
    (folder / "match.html").write_text(
        "<title>Match report</title><p>The league match ended with a late goal.</p>"
    )


def test_a_page_given_twice_is_counted_once(tmp_path):
    """A page in a folder and named again, or fetched from a URL too: counted twice, its
    words weighed twice, and its own list of reports looked like a sidebar two pages share."""
    samples = tmp_path / "samples"
    match_reports(samples)
    index = (samples / "index.html").read_bytes()

    class Index(Handler):
        def do_GET(self) -> None:
            self.send(index)

    once = scrapy_keywords(samples, "--top", "8")
    with serving(Index) as url:
        twice = scrapy_keywords(samples, samples / "index.html", f"{url}/reports/", "--top", "8")
    assert once.returncode == twice.returncode == 0, once.stderr + twice.stderr
    assert "over 2 sample pages" in twice.stdout
    assert "2 given twice, counted once" in twice.stdout
    assert terms_of(twice.stdout) == terms_of(once.stdout)
    assert {"derby", "goalkeeper"} <= set(terms_of(twice.stdout))


def test_the_samples_are_left_out_of_the_background(tmp_path):
    """``--background`` the whole site, samples included: the samples' words are no longer
    rarer than the background's. The samples as their own background: no keyword at all."""
    site = tmp_path / "site"
    samples, other = site / "football", site / "cooking"
    samples.mkdir(parents=True)
    other.mkdir()
    for n, text in enumerate(["The league match ended.", "A late goal won the league match."]):
        (samples / f"{n}.html").write_text(f"<title>Report {n}</title><p>{text} Weather.</p>")
    for n, text in enumerate(["Bake the bread; the weather ended.", "Stir the sauce."]):
        (other / f"{n}.html").write_text(f"<title>Recipe {n}</title><p>{text}</p>")
    apart = scrapy_keywords(samples, "--background", other)
    whole = scrapy_keywords(samples, "--background", site)
    assert apart.returncode == whole.returncode == 0, apart.stderr + whole.stderr
    assert "idf from 2 background pages" in whole.stdout
    assert "2 also samples or given twice, left out" in whole.stdout
    assert weighted(whole.stdout) == weighted(apart.stdout)
    assert {"league", "match"} <= set(terms_of(whole.stdout)[:3])

    itself = scrapy_keywords(samples, "--background", samples)
    assert itself.returncode == 2
    assert "every --background page is also a sample" in itself.stderr
    assert itself.stdout == ""


def test_a_keyword_file_written_among_the_samples_is_no_sample(site, tmp_path):
    samples = tmp_path / "football"
    samples.mkdir()
    for path in sorted(site.on_topic):
        if path.startswith("/en/"):
            (samples / Path(path).name).write_bytes((site.root / path.lstrip("/")).read_bytes())
    out = samples / "football.txt"
    first = scrapy_keywords(samples, "--top", "10", "-o", out)
    assert first.returncode == 0, first.stderr
    written = out.read_text("utf-8")
    again = scrapy_keywords(samples, "--top", "10", "-o", samples / "football-2.txt")
    assert again.returncode == 0, again.stderr
    assert (samples / "football-2.txt").read_text("utf-8") == written.replace(
        str(out), str(samples / "football-2.txt")
    )
    assert not {"terms", "idf", "samples"} & set(terms_of(written))


def test_the_output_is_replaced_whole_or_not_at_all(site, tmp_path):
    """A write that fails half-way (here: a file size limit of 1 KiB) leaves the keyword
    file there was, and nothing else."""
    out = tmp_path / "football.txt"
    out.write_text("# by hand\n足球 3\n", "utf-8")

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    sports = site.root / "sports"
    result = scrapy_keywords(sports, "--top", "200", "-o", out, preexec_fn=limit_file_size)
    assert result.returncode == 2
    assert result.stderr == f"topicspider: error: {out}: cannot write: File too large\n"
    assert out.read_text("utf-8") == "# by hand\n足球 3\n"
    assert list(tmp_path.iterdir()) == [out]


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("plain.txt/football.txt", "Not a directory"),
        ("plain.txt/keywords/a.txt", "Not a directory"),
        (".", "Is a directory"),
    ],
)
def test_an_output_that_cannot_be_written_stops_the_command_before_it_fetches(
    tmp_path, output, reason
):
    (tmp_path / "plain.txt").write_text("a regular file")
    fetched: list[str] = []

    class Page(Handler):
        def do_GET(self) -> None:
            fetched.append(self.path)
            self.send("<title>足球</title><p>足球比赛的战术</p>".encode())

    with serving(Page) as url:
        result = scrapy_keywords(f"{url}/a.html", "-o", tmp_path / output)
    assert result.returncode == 2
    assert result.stderr == f"topicspider: error: {tmp_path / output}: cannot write: {reason}\n"
    assert fetched == []
    assert (tmp_path / "plain.txt").read_text() == "a regular file"


class BrokenAnswers(Handler):
    """Answers that are no HTTP, or broken HTTP: what a wrong port or a crashing server gives."""

    def do_GET(self) -> None:
        page = b"<p>football league match</p>"
        raw = {
            "/ssh": b"SSH-2.0-OpenSSH_9.6\r\n",
            "/chunks": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" + page,
            "/short": b"HTTP/1.0 200 OK\r\nContent-Length: 1000\r\n\r\n" + page,
            "/headers": b"HTTP/1.0 200 OK\r\n" + b"X-A: b\r\n" * 120 + b"\r\n" + page,
        }
        if self.path in raw:
            self.wfile.write(raw[self.path])
        elif self.path == "/ftp":
            self.send(b"", status=302, Location="ftp://127.0.0.1:1/page.html")
        else:
            self.send(b"", status=302, Location="http://127.0.0.1 x/")


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/ssh", "cannot fetch: BadStatusLine('SSH-2.0-OpenSSH_9.6\\r\\n')"),
        ("/chunks", "cannot fetch: IncompleteRead("),
        ("/short", "cannot fetch: cut short after 28 bytes"),
        ("/headers", "cannot fetch: HTTPException('got more than 100 headers')"),
        ("/ftp", "HTTP 302 Found, to ftp://127.0.0.1:1/page.html"),
        ("/space", "cannot fetch: InvalidURL("),
    ],
)
def test_broken_answers_give_one_clear_message_and_status_2(path, message):
    with serving(BrokenAnswers) as url:
        result = scrapy_keywords(url + path)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.startswith(f"topicspider: error: {url}{path}: {message}")
    assert result.stderr.count("\n") == 1
    assert result.stdout == ""


def test_a_server_that_trickles_its_answer_times_out():
    """DOWNLOAD_TIMEOUT bounds the whole download, as in a crawl, not each read."""

    class Trickle(Handler):
        def do_GET(self) -> None:
            body = b"<p>football league match goal coach</p>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for byte in body:
                try:
                    self.wfile.write(bytes([byte]))
                except OSError:
                    return
                time.sleep(0.25)

    with serving(Trickle) as url:
        started = time.monotonic()
        result = scrapy_keywords(f"{url}/slow.html", "-s", "DOWNLOAD_TIMEOUT=1")
        elapsed = time.monotonic() - started
    assert result.returncode == 2, result.stdout
    assert f"{url}/slow.html: cannot fetch: timed out after 1 s" in result.stderr
    assert elapsed < 8  # the body alone takes 10 s


def test_download_maxsize_0_means_no_limit():
    """As in Scrapy: ``DOWNLOAD_MAXSIZE=0`` turns the limit off."""

    class Page(Handler):
        def do_GET(self) -> None:
            self.send("<title>足球</title><p>足球比赛的战术与球员</p>".encode())

    with serving(Page) as url:
        unlimited = scrapy_keywords(f"{url}/a.html", "-s", "DOWNLOAD_MAXSIZE=0")
        small = scrapy_keywords(f"{url}/a.html", "-s", "DOWNLOAD_MAXSIZE=10")
    assert unlimited.returncode == 0, unlimited.stderr
    assert "足球" in terms_of(unlimited.stdout)
    assert small.returncode == 2
    assert "larger than DOWNLOAD_MAXSIZE (10 bytes)" in small.stderr


PORTAL_HEADER = (
    '<div><a href="/">首页</a> | <a href="/news">新闻</a> | <a href="/sport">体育</a></div>'
)
PORTAL_FOOTER = (
    '<div><a href="p">上一页</a> <a href="n">下一页</a> <a href="#">返回顶部</a></div>'
    "<p>关于我们 | 联系我们 | 版权所有 &copy; 2003-2024 华夏门户网 京ICP证030173号"
    " 京公网安备11000002000016号 客服电话 4008-123-456</p>"
)
GAZETTE_FOOTER = (
    "<footer>Copyright © 2024 The Daily Gazette Ltd. All rights reserved. Privacy policy |"
    " Cookie settings | Terms of use | Contact us | Advertise with us</footer>"
)
STORIES = [
    (
        "中超联赛第十轮",
        "上海申花主场二比一战胜北京国安，前锋梅开二度，主教练赛后表示球队防守仍需加强。",
    ),
    (
        "世界杯预选赛",
        "国家队在小组赛中客场战平对手，主教练对球员的拼搏表示满意，积分仍列小组第二。",
    ),
    ("英超联赛", "曼城主场三比零大胜对手，中场球员传射建功，球队在联赛积分榜上继续领跑。"),
    ("亚冠联赛", "泰山队在亚冠小组赛中主场获胜，新援首次登场就打进制胜球，球迷欢呼不已。"),
    ("足协杯", "足协杯八强赛中两队九十分钟内战成平手，点球大战中客队门将扑出两球晋级。"),
]
MATCHES = [
    "The goalkeeper saved a penalty in the second half as United beat City in the derby.",
    "The striker scored twice and the coach praised the defence after the league match.",
    "A late goal in stoppage time sent the fans home happy after the cup tie at Anfield.",
]


def test_without_background_the_site_s_name_header_and_footer_give_no_keyword(tmp_path):
    """Pages of one site share a header, a footer and the site's name in each title. Before,
    without background pages, the portal's name was the best keyword (门户网 3, 华夏 1.6)
    and the footer's words came after the topic's few (一页, 公网, 版权所有, 客服, 返回);
    of the newspaper's top 20, 16 were its name and its footer's."""
    chinese, english = tmp_path / "portal", tmp_path / "gazette"
    chinese.mkdir()
    english.mkdir()
    for n, (title, story) in enumerate(STORIES):
        page = (
            f'<html><head><meta charset="gbk"><title>{title}_华夏门户网</title></head>'
            f"<body>{PORTAL_HEADER}<h1>{title}</h1><p>{story}</p>{PORTAL_FOOTER}</body></html>"
        )
        (chinese / f"{n}.html").write_bytes(page.encode("gbk"))
    for n, story in enumerate(MATCHES):
        page = (
            f"<html><head><title>Match report {n} | The Daily Gazette</title></head>"
            f"<body><h1>Match report {n}</h1><p>{story}</p>{GAZETTE_FOOTER}</body></html>"
        )
        (english / f"{n}.html").write_text(page, "utf-8")

    terms = terms_of(scrapy_keywords(chinese, "--top", "20").stdout)
    assert {"联赛", "主教练", "球员", "小组赛", "主场"} <= set(terms), terms
    boilerplate = {"华夏", "门户网", "一页", "返回", "顶部", "版权所有", "公网", "客服", "电话"}
    assert not set(terms) & boilerplate, terms
    terms = terms_of(scrapy_keywords(english, "--top", "20").stdout)
    assert {"goalkeeper", "penalty", "coach", "league"} <= set(terms), terms
    boilerplate = {"daily", "gazette", "copyright", "privacy", "cookie", "advertise", "rights"}
    assert not set(terms) & boilerplate, terms


def test_a_sample_is_read_as_far_as_the_crawl_reads_a_page(tmp_path):
    """``TOPIC_MAX_TEXT_CHARS``: before, checked and not used (always 20,000)."""
    (tmp_path / "sample.html").write_text(
        "<title>足球</title><p>" + "足球比赛" * 20 + "</p><p>" + "篮球联赛" * 20 + "</p>", "utf-8"
    )
    whole = terms_of(scrapy_keywords(tmp_path / "sample.html").stdout)
    cut = terms_of(
        scrapy_keywords(tmp_path / "sample.html", "-s", "TOPIC_MAX_TEXT_CHARS=80").stdout
    )
    assert "篮球联赛" in whole
    assert "足球比赛" in cut
    assert "篮球联赛" not in cut


def test_ctrl_c_while_a_page_is_read_is_one_line_and_leaves_the_output_as_it_was(tmp_path):
    """Before, a 55-line ``KeyboardInterrupt`` traceback; and started with SIGINT ignored (a
    shell without job control starts `nohup … &` so), the command waited out its timeout."""
    output = tmp_path / "football.txt"
    output.write_text("足球 3\n", "utf-8")
    with socket.socket() as silent:  # takes the connection, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        command = subprocess.Popen(
            [sys.executable, "-m", "scrapy", "keywords", "-o", str(output),
             f"http://127.0.0.1:{silent.getsockname()[1]}/page.html"],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE,
            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        )  # fmt: skip
        silent.settimeout(60)
        connection, _ = silent.accept()  # the command waits for the page
        command.send_signal(signal.SIGINT)
        _, stderr = command.communicate(timeout=60)
        connection.close()
    assert (command.returncode, stderr) == (130, "topicspider: stopped: no keyword file written\n")
    assert output.read_text("utf-8") == "足球 3\n"


def test_a_program_that_runs_the_command_keeps_its_own_ctrl_c_handler():
    """The command takes Ctrl-C while it runs, and gives it back; from a thread, where no
    handler can be set, it leaves it alone (before: ``ValueError``; review of the change)."""

    def own(signum, frame):
        """The program's handler."""

    before = signal.signal(signal.SIGINT, own)
    try:
        with _interruptible():
            assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert signal.getsignal(signal.SIGINT) is own
        errors: list[BaseException] = []

        def in_a_thread() -> None:
            try:
                with _interruptible():
                    pass
            except BaseException as error:  # reported by the assert below
                errors.append(error)

        thread = threading.Thread(target=in_a_thread)
        thread.start()
        thread.join()
        assert errors == []
        assert signal.getsignal(signal.SIGINT) is own
    finally:
        signal.signal(signal.SIGINT, before)
