"""A full or read-only pages folder: a clear error, a clean stop, no half-written index line.

The folders are real small file systems (tmpfs) the test mounts, as root does on this machine.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
from contextlib import suppress
from pathlib import Path

from tests.test_pipelines_files import close, make_page, make_pipeline, read_index, store
from tests.test_spider import crawl_command, scrapy


def test_disk_full_stops_cleanly_without_half_lines(site, site_url, tmp_path, small_fs):
    pages = small_fs("20k")
    result = scrapy(*crawl_command(site_url, site, tmp_path), "-s", f"TOPIC_PAGES_DIR={pages}")
    assert "'finish_reason': 'pages_dir_error'" in result.stderr, result.stderr[-2000:]
    assert result.returncode == 1
    assert str(pages) in result.stderr
    assert "No space left on device" in result.stderr
    index = (pages / "index.jsonl").read_bytes()
    assert index.endswith(b"\n") or not index
    for line in index.decode("utf-8").splitlines():
        assert (pages / json.loads(line)["path"]).is_file()
    assert "Traceback" not in result.stderr


def test_accepted_pages_the_full_disk_lost_are_listed_to_fetch_again(
    site, site_url, tmp_path, small_fs
):
    pages = small_fs("20k")
    result = scrapy(*crawl_command(site_url, site, tmp_path), "-s", f"TOPIC_PAGES_DIR={pages}")
    stored = {json.loads(line)["url"] for line in (pages / "index.jsonl").open(encoding="utf-8")}
    accepted = {row["url"] for row in fetch_log(tmp_path) if row["accepted"]}
    lost = sorted(accepted - stored)
    assert lost, "the disk was large enough for every page"
    listed = re.search(r"(\d+) accepted pages were not stored, .*: (.*)", result.stderr)
    assert listed, result.stderr[-2000:]
    assert int(listed[1]) == len(lost)
    assert sorted(listed[2].split()) == lost
    assert f"'topic/not_stored': {len(lost)}" in result.stderr
    assert f", not stored for a failed pages folder: {len(lost)}, " in result.stderr


def test_accepted_pages_the_full_disk_lost_are_fetched_again_when_the_crawl_resumes(
    site, site_url, tmp_path, small_fs
):
    """Before, the seen-set in JOBDIR held them, and only a crawl of their own fetched them."""
    pages = small_fs("20k")
    command = crawl_command(
        site_url, site, tmp_path, f"TOPIC_PAGES_DIR={pages}", f"JOBDIR={tmp_path / 'job'}"
    )
    first = scrapy(*command)
    assert "'finish_reason': 'pages_dir_error'" in first.stderr, first.stderr[-2000:]
    assert "the crawl fetches them again when it resumes from its JOBDIR" in first.stderr
    lost = {row["url"] for row in fetch_log(tmp_path) if row["accepted"]} - stored_urls(pages)
    assert lost, "the disk was large enough for every page"
    subprocess.run(["mount", "-o", "remount,size=10m", str(pages)], check=True)
    resumed = scrapy(*command)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert lost <= stored_urls(pages)


def stored_urls(pages: Path) -> set[str]:
    return {json.loads(line)["url"] for line in (pages / "index.jsonl").open(encoding="utf-8")}


def test_the_fetch_log_folder_is_created(site, site_url, tmp_path):
    log = tmp_path / "logs" / "2026" / "fetch.jsonl"
    result = scrapy(*crawl_command(site_url, site, tmp_path), "-s", f"TOPIC_FETCH_LOG={log}")
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(log.read_text("utf-8").splitlines()) > 10


def test_a_full_fetch_log_disk_is_said_once_and_the_pages_are_still_stored(
    site, site_url, tmp_path, small_fs
):
    disk = small_fs("8k")
    (disk / "filler").write_bytes(b"x" * 8192)
    log = disk / "fetch.jsonl"
    result = scrapy(*crawl_command(site_url, site, tmp_path), "-s", f"TOPIC_FETCH_LOG={log}")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr.count(f"Cannot write the fetch log {log}") == 1
    assert "No space left on device" in result.stderr
    assert "Traceback" not in result.stderr
    assert "'finish_reason': 'finished'" in result.stderr
    stored = (tmp_path / "pages" / "index.jsonl").read_text("utf-8").splitlines()
    assert f"'topic/stored': {len(stored)}" in result.stderr
    assert f"'topic/accepted': {len(stored)}" in result.stderr


def fetch_log(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "fetch.jsonl").open(encoding="utf-8")]


def test_read_only_pages_folder_is_named_and_nothing_is_fetched_for_nothing(
    site, site_url, tmp_path, small_fs
):
    pages = small_fs("1m", "ro")
    result = scrapy(*crawl_command(site_url, site, tmp_path), "-s", f"TOPIC_PAGES_DIR={pages}")
    assert str(pages) in result.stderr
    assert "Read-only file system" in result.stderr
    assert "'finish_reason': 'pages_dir_error'" in result.stderr
    assert result.returncode == 1


def test_an_index_a_full_disk_cannot_tidy_still_describes_every_page(small_fs, caplog):
    """A page stored again is listed twice until the crawl ends; with no room left to
    rewrite the index, it stays so, the last line giving the charset of the file."""
    pages = small_fs("64k")
    url = "https://example.cn/a.html"
    for body, charset in (("足球".encode("gbk"), "gb18030"), ("足球".encode(), "utf-8")):
        pipeline = make_pipeline(pages)
        pipeline.open_spider()
        store(pipeline, make_page(url, body, charset))
        if charset == "utf-8":
            fill(pages)
        with caplog.at_level(logging.ERROR):
            close(pipeline)
    assert f"Cannot rewrite {pages / 'index.jsonl'} to list each page once" in caplog.text
    assert "No space left on device" in caplog.text
    assert [line["charset"] for line in read_index(pages)] == ["gb18030", "utf-8"]
    assert sorted(p.name for p in pages.iterdir()) == ["example.cn", "filler", "index.jsonl"]

    (pages / "filler").unlink()
    pipeline = make_pipeline(pages)
    pipeline.open_spider()
    close(pipeline)
    assert [line["charset"] for line in read_index(pages)] == ["utf-8"]


def fill(folder: Path) -> None:
    """Take all the room left on the file system of ``folder``."""
    with suppress(OSError), (folder / "filler").open("wb", buffering=0) as filler:
        while True:
            filler.write(b"x" * 4096)
