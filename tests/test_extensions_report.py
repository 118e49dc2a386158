"""``TOPIC_REPORT``: a real crawl of the fixture site writes a plot, Markdown and JSON."""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from scrapy import Spider
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from demo.crawl import SCRAPY, topic_args
from topicspider.extensions.report import TOP_PAGES, Report

ROOT = Path(__file__).resolve().parent.parent
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


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
    assert report["top_pages"][0]["title"].replace("|", "\\|") in markdown  # a table cell
    assert "## Pages by depth" in markdown
    assert (folder / "harvest.png").stat().st_size > 10_000
    assert png_size(folder / "harvest.png") == (900, 800)
    assert f"Crawl report written to {folder}" in log


def test_off_without_the_setting():
    with pytest.raises(NotConfigured):
        Report.from_crawler(get_crawler(settings_dict={"TOPIC_REPORT": ""}))


def test_a_crawl_that_fetched_nothing_still_gets_a_report(tmp_path):
    report = Report(tmp_path / "report", threshold=0.15)
    report.spider_closed(Spider(name="topic"), "finished")
    figures = json.loads((tmp_path / "report" / "report.json").read_text("utf-8"))
    assert figures["fetched"] == figures["accepted"] == 0
    assert figures["top_pages"] == []
    assert png_size(tmp_path / "report" / "harvest.png") == (900, 800)


def test_the_report_gives_the_threshold_the_last_verdict_used(tmp_path):
    report = Report(tmp_path / "report", threshold=0.12)
    for relevance, threshold in ((0.3, 0.05), (0.07, 0.061), (0.01, 0.061)):
        report.page_scored("http://a/", relevance, relevance >= threshold, 1, threshold=threshold)
    report.spider_closed(Spider(name="topic"), "finished")
    figures = json.loads((tmp_path / "report" / "report.json").read_text("utf-8"))
    assert figures["threshold"] == 0.061
    assert figures["accepted"] == 2
    assert "(threshold 0.061 at the end)" in (tmp_path / "report" / "report.md").read_text("utf-8")
