"""``scrapy keywords`` on the fixture site: files, folders and URLs served on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.httpserver import Handler, serving
from topicspider.keywords import parse_keyword_file

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


def scrapy_keywords(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "keywords", *map(str, args)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def terms_of(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    return [line.rsplit(" ", 1)[0] for line in lines]


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

    # The file is a keyword file like any other: it loads, with the weights it shows.
    vector = parse_keyword_file(out)
    assert list(vector.weights) == terms
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


def test_terms_are_written_as_the_samples_spell_them(tmp_path):
    samples, other = tmp_path / "samples", tmp_path / "other"
    samples.mkdir()
    other.mkdir()
    (samples / "a.html").write_text(
        "<title>Browser caches</title><p>Cookies and caches: a browser keeps cookies for "
        "each server. 代理服务器缓存网页。</p>",
        "utf-8",
    )
    (samples / "b.html").write_text(
        "<title>HTTP cookies</title><p>A server sets cookies; caches keep pages. "
        "服务器设置缓存。</p>",
        "utf-8",
    )
    (other / "c.html").write_text("<p>Recipes for the oven. 菜谱和烹饪。</p>", "utf-8")
    result = scrapy_keywords(samples, "--top", "12", "--background", other)
    assert result.returncode == 0, result.stderr[-2000:]
    terms = terms_of(result.stdout)
    assert {"cookies", "caches", "服务器", "代理服务器"} <= set(terms), terms
    assert not {"cooky", "cach", "务器", "服务"} & set(terms), terms  # 服务 is never a word here
    out = tmp_path / "web.txt"
    out.write_text(result.stdout, "utf-8")
    assert {"cooky", "cach", "服务器"} <= set(parse_keyword_file(out).weights)


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
    samples, other = tmp_path / "samples", tmp_path / "other"
    samples.mkdir()
    other.mkdir()
    football = ["The league match ended with a late goal.", "The coach praised the club's goal."]
    for n, text in enumerate(football):
        page = f"<title>Match report</title><body>{sidebar('vocal')}<p>{text}</p></body>"
        (samples / f"{n}.html").write_text(page, "utf-8")
    for n, text in enumerate(["Stir the sauce over a low flame.", "Bake the bread for an hour."]):
        page = f"<title>Recipe</title><body>{sidebar('kitchen')}<p>{text}</p></body>"
        (other / f"{n}.html").write_text(page, "utf-8")
    result = scrapy_keywords(samples, "--top", "8", "--background", other)
    assert result.returncode == 0, result.stderr[-2000:]
    terms = terms_of(result.stdout)
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
        (lambda tmp, url: [tmp / "nopages"], "no .html, .htm, .txt files"),
        (lambda tmp, url: [tmp / "blank"], "none of its 1 files has any text"),
        (
            lambda tmp, url: [f"{url}/sports/index.html", "--background", tmp / "gone"],
            "gone: no such file",
        ),
        (lambda tmp, url: [f"{url}/sports/index.html", "--top", "0"], "--top must be at least 1"),
        (lambda tmp, url: [], "give at least one SOURCE"),
    ],
)
def test_bad_sources_give_one_clear_message_and_status_2(site_url, tmp_path, make_args, message):
    (tmp_path / "empty.html").write_text("<html><body><script>x()</script></body></html>")
    (tmp_path / "nopages").mkdir()
    (tmp_path / "nopages" / "notes.md").write_text("football")
    (tmp_path / "blank").mkdir()
    (tmp_path / "blank" / "a.txt").write_text("  ,,, 42 ")
    result = scrapy_keywords(*make_args(tmp_path, site_url))
    assert result.returncode == 2, result.stderr[-2000:]
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


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
