"""A full or read-only pages folder: a clear error, a clean stop, no half-written index line.

The folders are real small file systems (tmpfs) the test mounts, as root does on this machine.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.test_spider import crawl_command, scrapy


@pytest.fixture
def small_fs(tmp_path):
    """Mounts a file system of the given size and options at a fresh folder; unmounts after."""
    mounted = []

    def mount(size: str, options: str = "rw"):
        target = tmp_path / f"fs{len(mounted)}"
        target.mkdir()
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},{options}", "tmpfs", str(target)],
            check=True,
        )
        mounted.append(target)
        return target

    yield mount
    for target in mounted:
        subprocess.run(["umount", "-l", str(target)], check=False)


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


def test_read_only_pages_folder_is_named_and_nothing_is_fetched_for_nothing(
    site, site_url, tmp_path, small_fs
):
    pages = small_fs("1m", "ro")
    result = scrapy(*crawl_command(site_url, site, tmp_path), "-s", f"TOPIC_PAGES_DIR={pages}")
    assert str(pages) in result.stderr
    assert "Read-only file system" in result.stderr
    assert "'finish_reason': 'pages_dir_error'" in result.stderr
    assert result.returncode == 1
