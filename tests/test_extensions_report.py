"""``TOPIC_REPORT``: a real crawl of the fixture site writes a plot, Markdown and JSON."""

from __future__ import annotations

import doctest
import importlib
import json
import os
import re
import signal
import struct
import subprocess
import sys
import threading
import tracemalloc
from html import escape
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from scrapy import Spider
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from demo.crawl import SCRAPY, topic_args
from tests.httpserver import Handler, serving
from tests.test_settingtypes import PROJECT
from tests.test_spider import (
    ONE_AT_A_TIME,
    crawl_command,
    crawl_seed,
    read_jsonl,
    scrapy,
    start_scrapy,
)
from tests.test_workers import wait_for
from topicspider.extensions import report as report_module
from topicspider.extensions.report import MAX_POINTS, MILESTONES, TOP_PAGES, Report
from topicspider.items import PageItem

ROOT = Path(__file__).resolve().parent.parent
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def top_table(markdown: str) -> list[list[str]]:
    """The cells of the top pages' rows as a Markdown reader sees them: split at the pipes
    no backslash escapes, then unescaped."""
    table = markdown.split("| # | relevance |")[1].split("\n\n")[0].splitlines()[2:]
    return [
        [re.sub(r"\\(.)", r"\1", cell.strip()) for cell in re.split(r"(?<!\\)\|", row)[1:-1]]
        for row in table
    ]


def stat(log: str, name: str) -> int:
    match = re.search(rf"'{re.escape(name)}': (\d+)", log)
    assert match, f"{name} not in the stats"
    return int(match.group(1))


@pytest.fixture(scope="module")
def crawl(site, site_url, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    result = subprocess.run(
        SCRAPY
        + topic_args(
            f"{site_url}{site.seed_path}",
            "sports",
            f"TOPIC_PAGES_DIR={out / 'pages'}",
            f"TOPIC_FETCH_LOG={out / 'fetch.jsonl'}",
            f"TOPIC_REPORT={out / 'report'}",
            "TOPIC_PROGRESS_INTERVAL=0",
        ),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return out, result.stderr


def test_report_numbers_agree_with_the_crawl_stats(crawl):
    out, log = crawl
    report = json.loads((out / "report" / "report.json").read_text("utf-8"))
    accepted, dropped = stat(log, "topic/accepted"), stat(log, "topic/dropped")
    assert report["accepted"] == accepted > 0
    assert report["dropped"] == dropped > 0
    assert report["fetched"] == accepted + dropped
    assert report["harvest_rate"] == round(accepted / (accepted + dropped), 4)
    assert report["finish_reason"] == "finished"
    assert sum(row["fetched"] for row in report["depths"]) == report["fetched"]
    assert sum(row["accepted"] for row in report["depths"]) == accepted

    fetch_log = [json.loads(line) for line in (out / "fetch.jsonl").read_text("utf-8").splitlines()]
    assert len(fetch_log) == report["fetched"]
    first_ten = sum(row["accepted"] for row in fetch_log[:10]) / 10
    assert report["harvest_at"]["10"] == first_ten


def test_top_pages_are_the_most_relevant_with_their_titles(site, crawl):
    out, _ = crawl
    report = json.loads((out / "report" / "report.json").read_text("utf-8"))
    fetch_log = [json.loads(line) for line in (out / "fetch.jsonl").read_text("utf-8").splitlines()]
    best = sorted(fetch_log, key=lambda row: -row["relevance"])[:TOP_PAGES]
    top = report["top_pages"]
    assert [page["url"] for page in top] == [row["url"] for row in best]
    assert [page["relevance"] for page in top] == sorted(
        (page["relevance"] for page in top), reverse=True
    )
    for page in top:
        path = urlsplit(page["url"]).path
        assert path in site.on_topic
        assert page["accepted"]
        assert page["title"] == site.titles[path]


def test_markdown_and_png_are_written(crawl):
    out, log = crawl
    folder = out / "report"
    markdown = (folder / "report.md").read_text("utf-8")
    report = json.loads((folder / "report.json").read_text("utf-8"))
    assert f"harvest rate **{report['harvest_rate']:.2f}**" in markdown
    assert "![harvest curve](harvest.png)" in markdown
    assert [row[4] for row in top_table(markdown)] == [p["title"] for p in report["top_pages"]]
    assert "## Pages by depth" in markdown
    assert (folder / "harvest.png").stat().st_size > 10_000
    assert png_size(folder / "harvest.png") == (900, 800)
    assert f"Crawl report written to {folder}" in log


def test_off_without_the_setting():
    with pytest.raises(NotConfigured):
        Report.from_crawler(get_crawler(settings_dict={"TOPIC_REPORT": ""}))


def test_a_matplotlib_that_cannot_be_imported_turns_the_report_off_at_the_start(
    tmp_path, monkeypatch
):
    """Before, only a missing matplotlib was found at the start; one installed but broken
    failed as the crawl ended, with a traceback and no report (review of the README)."""
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import raises ImportError
    crawler = get_crawler(settings_dict={"TOPIC_REPORT": str(tmp_path / "report")})
    with pytest.raises(NotConfigured, match=r"^TOPIC_REPORT needs matplotlib, which cannot be"):
        Report.from_crawler(crawler)


def test_a_crawl_that_fetched_nothing_still_gets_a_report(tmp_path):
    report = Report(tmp_path / "report", threshold=0.15)
    report.spider_closed(Spider(name="topic"), "finished")
    figures = json.loads((tmp_path / "report" / "report.json").read_text("utf-8"))
    assert figures["fetched"] == figures["accepted"] == 0
    assert figures["top_pages"] == []
    assert png_size(tmp_path / "report" / "harvest.png") == (900, 800)


@pytest.mark.parametrize(("mode", "threshold"), [("adaptive", 0.05), ("fixed", 0.12)])
def test_a_crawl_that_scored_no_page_reports_the_threshold_it_started_with(
    mode, threshold, tmp_path
):
    """The adaptive threshold starts at ``TOPIC_THRESHOLD_MIN``: before, the report said
    ``TOPIC_THRESHOLD`` (0.12) where the crawl's stat said 0.05, and showed empty tables."""
    settings = {**PROJECT, "TOPIC_REPORT": str(tmp_path / "report"), "TOPIC_THRESHOLD_MODE": mode}
    report = Report.from_crawler(get_crawler(settings_dict=settings))
    report.spider_closed(Spider(name="topic"), "seeds_failed")
    said = (tmp_path / "report" / "report.md").read_text("utf-8")
    assert f"(threshold {threshold:g} at the end)" in said
    assert said.endswith("No page was scored: no curve, no pages to list.\n")


def test_a_report_that_cannot_be_written_whole_leaves_the_last_one_as_it_was(tmp_path):
    """Before, a full disk left a new report.json and report.md beside the last crawl's
    plot, or none, the markdown showing it all the same."""
    first = Report(tmp_path / "report", threshold=0.12)
    first.page_scored("http://127.0.0.1/a.html", 0.4, True, 0)
    first.spider_closed(Spider(name="topic"), "finished")
    written = {path.name: path.read_bytes() for path in (tmp_path / "report").iterdir()}
    (tmp_path / "report" / "harvest.png.part").mkdir()  # the plot cannot be written
    second = Report(tmp_path / "report", threshold=0.12)
    for n in range(5):
        second.page_scored(f"http://127.0.0.1/{n}.html", 0.01, False, 1)
    second.spider_closed(Spider(name="topic"), "finished")
    (tmp_path / "report" / "harvest.png.part").rmdir()
    assert {path.name: path.read_bytes() for path in (tmp_path / "report").iterdir()} == written


def test_the_report_gives_the_threshold_the_last_verdict_used(tmp_path):
    report = Report(tmp_path / "report", threshold=0.12)
    for relevance, threshold in ((0.3, 0.05), (0.07, 0.061), (0.01, 0.061)):
        report.page_scored("http://a/", relevance, relevance >= threshold, 1, threshold=threshold)
    report.spider_closed(Spider(name="topic"), "finished")
    figures = json.loads((tmp_path / "report" / "report.json").read_text("utf-8"))
    assert figures["threshold"] == 0.061
    assert figures["accepted"] == 2
    assert "(threshold 0.061 at the end)" in (tmp_path / "report" / "report.md").read_text("utf-8")


def test_a_page_a_list_named_leaves_the_crawls_threshold_in_the_report(tmp_path):
    """A listed page is judged by TOPIC_LISTED_THRESHOLD: were it the last, the report would
    have given that as the crawl's threshold."""
    report = Report(tmp_path / "report", threshold=0.12)
    report.page_scored("http://a/1", 0.3, True, 1, threshold=0.12)
    report.page_scored("http://a/2", 0.08, True, 2, threshold=0.05, listed=True)
    report.spider_closed(Spider(name="topic"), "finished")
    figures = json.loads((tmp_path / "report" / "report.json").read_text("utf-8"))
    assert (figures["threshold"], figures["accepted"]) == (0.12, 2)


def test_a_top_page_fetched_with_a_session_id_has_its_title(tmp_path):
    """The item, stored without the session id, gives the title: before, the page it was
    scored as kept the id, and the report showed no title."""
    report = Report(tmp_path / "report", threshold=0.12)
    report.page_scored("http://a/news.jsp;jsessionid=0AF3B2C4D5E6F708?id=1", 0.4, True, 0)
    item = PageItem(
        url="http://a/news.jsp?id=1",
        title="足球比赛新闻",
        text="",
        body=b"",
        charset="utf-8",
        relevance=0.4,
        depth=0,
        parent_url=None,
        fetched_at="2026-11-28T00:00:00+00:00",
    )
    report.item_scraped(item)
    report.spider_closed(Spider(name="topic"), "finished")
    figures = json.loads((tmp_path / "report" / "report.json").read_text("utf-8"))
    assert [page["title"] for page in figures["top_pages"]] == ["足球比赛新闻"]


def test_doctests():
    assert doctest.testmod(report_module).failed == 0


ODD_TITLES = {
    "/index.html": "足球 | 比赛 *首页* & 新闻",
    "/a*b*_c_.html": "**足球** 比赛 `直播` <b>粗体</b> [链接](http://evil.invalid/) ~~旧~~ $5 \\",
    "/pipe.html": "足球比赛 a\\|b 2*3*4 _x_ &amp;",
}


class OddTitles(Handler):
    """Pages on topic whose titles and URLs hold characters Markdown reads as markup."""

    def do_GET(self) -> None:
        title = ODD_TITLES.get(self.path)
        if title is None:
            self.send(b"", status=404)
            return
        links = "".join(f'<p>足球比赛 <a href="{path}">足球比赛</a></p>' for path in ODD_TITLES)
        own = " ".join(f"{self.path}{i}" for i in range(80))  # no near-duplicates
        body = (
            f'<html><head><meta charset="utf-8"><title>{escape(title)}</title></head><body>'
            f"<p>{'昨晚的足球比赛非常精彩，主队连进两球锁定胜局。' * 5}</p><p>{own}</p>{links}"
            "</body></html>"
        )
        self.send(body.encode())


def test_titles_and_urls_show_as_written_in_the_markdown_table(tmp_path):
    with serving(OddTitles) as url:
        result = crawl_seed(f"{url}/index.html", tmp_path, f"TOPIC_REPORT={tmp_path / 'report'}")
    assert result.returncode == 0, result.stderr[-2000:]
    markdown = (tmp_path / "report" / "report.md").read_text("utf-8")
    rows = top_table(markdown)
    for line in markdown.split("| # | relevance |")[1].splitlines()[2 : 2 + len(rows)]:
        title_cell = re.split(r"(?<!\\)\|", line)[5]
        assert not re.search(r"(?<!\\)[*_`<>\[\]&~$]", title_cell), title_cell
    assert sorted((row[4], row[5]) for row in rows) == sorted(
        (title, f"<{url}{path}>") for path, title in ODD_TITLES.items()
    )


def test_a_resumed_crawl_reports_the_whole_crawl(site, site_url, tmp_path):
    """Like the fetch log, the report of a crawl paused and resumed with JOBDIR covers both
    runs."""
    command = crawl_command(
        site_url,
        site,
        tmp_path,
        f"JOBDIR={tmp_path / 'job'}",
        f"TOPIC_REPORT={tmp_path / 'report'}",
        *ONE_AT_A_TIME,
    )
    first = scrapy(*command, "-s", "CLOSESPIDER_PAGECOUNT=6")
    assert first.returncode == 0, first.stderr[-2000:]
    paused = len(read_jsonl(tmp_path / "fetch.jsonl"))
    second = scrapy(*command)
    assert second.returncode == 0, second.stderr[-2000:]
    assert "Resuming crawl" in second.stderr

    fetch_log = read_jsonl(tmp_path / "fetch.jsonl")
    assert len(fetch_log) > 10 + paused
    report = json.loads((tmp_path / "report" / "report.json").read_text("utf-8"))
    assert report["finish_reason"] == "finished"
    assert report["fetched"] == len(fetch_log)
    assert report["accepted"] == sum(row["accepted"] for row in fetch_log)
    assert report["harvest_at"]["10"] == sum(row["accepted"] for row in fetch_log[:10]) / 10
    best = sorted(fetch_log, key=lambda row: -row["relevance"])[:TOP_PAGES]
    assert [page["url"] for page in report["top_pages"]] == [row["url"] for row in best]
    for page in report["top_pages"]:
        assert page["title"] == site.titles[urlsplit(page["url"]).path]
    assert (report["runs"], report["crawl_runs"]) == ([1, 2], 2)
    said = (tmp_path / "report" / "report.md").read_text("utf-8")
    assert "The crawl ran 2 times (`JOBDIR`); the report covers them all." in said

    written = (tmp_path / "report" / "report.md").read_bytes()
    refused = scrapy(*command[:5], "keywords=football:3", *command[6:])
    assert refused.returncode == 1
    assert "jobdir_error" in refused.stderr
    # Before, the refused run wrote "Crawl ended (jobdir_error)" over the crawl's report.
    assert (tmp_path / "report" / "report.md").read_bytes() == written


def test_a_resumed_crawl_whose_first_run_had_no_report_says_what_it_covers(
    site, site_url, tmp_path
):
    """Before, it counted the second run's pages as the crawl's, and said nothing of it."""
    command = crawl_command(site_url, site, tmp_path, f"JOBDIR={tmp_path / 'job'}")
    # Each page said in the run that fetched it: none waits for the threshold in JOBDIR.
    first = scrapy(*command, "-s", "CLOSESPIDER_PAGECOUNT=6", "-s", "TOPIC_THRESHOLD_WAIT=False")
    assert first.returncode == 0, first.stderr[-2000:]
    second = scrapy(*command, "-s", f"TOPIC_REPORT={tmp_path / 'report'}")
    assert second.returncode == 0, second.stderr[-2000:]
    report = json.loads((tmp_path / "report" / "report.json").read_text("utf-8"))
    assert (report["runs"], report["crawl_runs"]) == ([2], 2)
    assert report["fetched"] < len(read_jsonl(tmp_path / "fetch.jsonl"))
    assert (
        "The crawl ran 2 times (`JOBDIR`); the report covers run 2 only, those run with"
        " `TOPIC_REPORT` (the fetch log has every page)."
    ) in (tmp_path / "report" / "report.md").read_text("utf-8")


def test_a_long_crawl_does_not_grow_the_report_in_memory(tmp_path):
    report = Report(tmp_path / "report", threshold=0.5)
    pages = 10 * MAX_POINTS
    relevance = [n * 7919 % 1000 / 1000 for n in range(pages)]

    def score(first: int, last: int) -> None:
        for n in range(first, last):
            report.page_scored(f"http://127.0.0.1/{n}.html", relevance[n], relevance[n] >= 0.5, 1)

    importlib.import_module("matplotlib.figure")  # its import is no part of the report
    tracemalloc.start()
    try:
        score(0, 2 * MAX_POINTS)
        before = tracemalloc.get_traced_memory()[0]
        score(2 * MAX_POINTS, pages)
        grown = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.reset_peak()
        report.spider_closed(Spider(name="topic"), "finished")
        written = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert grown < 500_000  # bytes, for 160,000 pages more: not 9 (or more) a page
    assert written < 15_000_000  # at its peak, plot included
    accepted = [value >= 0.5 for value in relevance]
    figures = json.loads((tmp_path / "report" / "report.json").read_text("utf-8"))
    assert figures["fetched"] == pages
    assert figures["accepted"] == sum(accepted)
    assert figures["harvest_at"] == {
        str(n): round(sum(accepted[:n]) / n, 4) for n in MILESTONES if n <= pages
    }
    assert png_size(tmp_path / "report" / "harvest.png") == (900, 800)


def test_a_relative_report_folder_is_logged_where_it_is(tmp_path, monkeypatch, caplog):
    """Under scrapyd the crawl runs in a folder of its own: the log says which."""
    monkeypatch.chdir(tmp_path)
    report = Report(Path("report"), threshold=0.5)
    report.page_scored("http://127.0.0.1/a.html", 0.6, True, 0)
    with caplog.at_level("INFO", logger=report_module.__name__):
        report.spider_closed(Spider(name="topic"), "finished")
    assert f"Crawl report written to {tmp_path / 'report'}" in caplog.text


def stalling_site() -> type[Handler]:
    """Six Chinese football pages, each linking to the others and to /stalled.html, which
    is answered only once ``release`` is set: a crawl of the site does not end by itself."""

    class Stalling(Handler):
        requested = threading.Event()
        release = threading.Event()

        def do_GET(self) -> None:
            if self.path == "/robots.txt":
                self.send(b"", status=404)
                return
            if self.path == "/stalled.html":
                Stalling.requested.set()
                Stalling.release.wait(120)
            links = "".join(f'<a href="/{n}.html">足球比赛{n}</a>' for n in range(6))
            own = " ".join(f"{self.path}{i}" for i in range(80))  # no near-duplicates
            body = (
                f"<html><head><meta charset='gbk'><title>足球比赛 {self.path}</title></head>"
                f"<body><p>{'昨晚的足球比赛非常精彩，主队连进两球锁定胜局。' * 5}</p>"
                f"<p>{own}</p>{links}<a href='/stalled.html'>足球比赛</a></body></html>"
            )
            self.send(body.encode("gbk"), "text/html; charset=gbk")

    return Stalling


def start_crawl(seed: str, out: Path, *settings: str) -> subprocess.Popen:
    """A crawl left running, its log in ``out/log``, its fetch log ``out/f.jsonl``."""
    out.mkdir()
    command = topic_args(
        seed,
        "足球:3,比赛:2",
        f"TOPIC_PAGES_DIR={out / 'pages'}",
        f"TOPIC_FETCH_LOG={out / 'f.jsonl'}",
        "LOG_LEVEL=INFO",
        *settings,
    )
    with open(out / "log", "w") as log:
        return start_scrapy(*command, stderr=log)


def test_a_crawl_stopped_at_once_still_gets_a_report(tmp_path):
    """A second SIGTERM (or Ctrl-C, or scrapyd's cancel.json) stops the crawl without
    closing its spider: the report of what it scored is written all the same."""
    site = stalling_site()
    out = tmp_path / "crawl"
    with serving(site) as url:
        process = start_crawl(f"{url}/0.html", out, f"TOPIC_REPORT={tmp_path / 'report'}")
        try:
            wait_for(lambda: site.requested.is_set() and len(read_jsonl(out / "f.jsonl")) >= 6)
            process.send_signal(signal.SIGTERM)  # waits for /stalled.html ...
            wait_for(lambda: "shutting down gracefully" in (out / "log").read_text())
            process.send_signal(signal.SIGTERM)  # ... and now it does not
            process.wait(timeout=60)
        finally:
            site.release.set()
            if process.poll() is None:
                process.kill()
    log = (out / "log").read_text()
    assert "forcing unclean shutdown" in log
    report = json.loads((tmp_path / "report" / "report.json").read_text("utf-8"))
    assert report["finish_reason"] == "forced_shutdown"
    scored = read_jsonl(out / "f.jsonl")
    assert report["fetched"] == len(scored) >= 6
    assert report["accepted"] == sum(row["accepted"] for row in scored) > 0
    assert "Crawl ended (forced_shutdown)" in (tmp_path / "report" / "report.md").read_text()
    assert png_size(tmp_path / "report" / "harvest.png") == (900, 800)


def test_a_report_folder_that_is_a_file_is_said_at_the_start(tmp_path):
    in_the_way = tmp_path / "report"
    in_the_way.write_text("notes")
    with serving(OddTitles) as url:
        result = crawl_seed(
            f"{url}/index.html", tmp_path, f"TOPIC_REPORT={in_the_way}", "LOG_LEVEL=DEBUG"
        )
    assert result.returncode == 0, result.stderr[-2000:]
    log = result.stderr.splitlines()
    [error] = [n for n, line in enumerate(log) if " ERROR: " in line]
    assert log[error].endswith(
        f"Cannot write the crawl report to {in_the_way} (TOPIC_REPORT): "
        "it is a file, not a folder; going on without it"
    )
    first_page = next(n for n, line in enumerate(log) if "Crawled (200)" in line)
    assert error < first_page
    assert in_the_way.read_text() == "notes"
    assert read_jsonl(tmp_path / "pages" / "index.jsonl"), "the crawl did not go on"


def test_a_report_folder_in_use_by_a_running_crawl_is_left_to_it(tmp_path):
    """Two crawls at once into one report folder: the second says so at its start and
    writes no report, instead of the last to end replacing the other's without a word."""
    site = stalling_site()
    folder = tmp_path / "report"
    first = tmp_path / "first"
    with serving(site) as url:
        process = start_crawl(f"{url}/0.html", first, f"TOPIC_REPORT={folder}")
        try:
            wait_for(lambda: site.requested.is_set())
            with serving(OddTitles) as other:
                second = crawl_seed(f"{other}/index.html", tmp_path, f"TOPIC_REPORT={folder}")
            assert second.returncode == 0, second.stderr[-2000:]
            assert not (folder / "report.json").exists()
            site.release.set()
            assert process.wait(timeout=120) == 0
        finally:
            site.release.set()
            if process.poll() is None:
                process.kill()
    assert (
        f"Cannot write the crawl report to {folder} (TOPIC_REPORT): another running crawl "
        "writes its report there; going on without it" in second.stderr
    )
    report = json.loads((folder / "report.json").read_text("utf-8"))
    assert report["finish_reason"] == "finished"
    assert report["fetched"] == len(read_jsonl(first / "f.jsonl"))
