"""``JobState``: ``spider.state`` kept between runs, never cut short, and left alone by a
crawl that could not use its ``JOBDIR``."""

from __future__ import annotations

import logging
import pickle
import subprocess
from types import SimpleNamespace

import pytest

from topicspider.extensions.jobstate import RUNS_KEY, JobState
from topicspider.scheduler import JOBDIR_REASON


def test_the_state_is_kept_for_the_next_run(tmp_path):
    state = JobState(str(tmp_path))
    spider = SimpleNamespace()
    state.spider_opened(spider)
    spider.state["pages"] = {"127.0.0.1": 3}
    state.spider_closed(spider, "shutdown")
    resumed = SimpleNamespace()
    JobState(str(tmp_path)).spider_opened(resumed)
    assert resumed.state == {"pages": {"127.0.0.1": 3}, RUNS_KEY: 2}  # the crawl's second run


def test_a_crawl_refused_its_jobdir_leaves_the_state_alone(tmp_path):
    (tmp_path / "spider.state").write_bytes(pickle.dumps({"pages": 40}))
    JobState(str(tmp_path)).spider_closed(SimpleNamespace(state={}), JOBDIR_REASON)
    assert pickle.loads((tmp_path / "spider.state").read_bytes()) == {"pages": 40}


def test_a_full_disk_keeps_the_last_whole_state(small_fs, caplog):
    disk = small_fs("64k")
    (disk / "spider.state").write_bytes(pickle.dumps({"pages": 40}))
    big = SimpleNamespace(state={"seen": bytes(200_000)})
    with caplog.at_level(logging.ERROR):
        JobState(str(disk)).spider_closed(big, "finished")
    assert pickle.loads((disk / "spider.state").read_bytes()) == {"pages": 40}
    [error] = [record.getMessage() for record in caplog.records]
    assert f"Cannot keep the spider's state in {disk / 'spider.state'}" in error
    assert "No space left on device" in error
    assert sorted(path.name for path in disk.iterdir()) == ["spider.state"]
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    caplog.clear()
    with caplog.at_level(logging.ERROR):
        JobState(str(disk)).spider_closed(SimpleNamespace(state={}), "finished")
    assert "Read-only file system" in caplog.records[0].getMessage()


@pytest.mark.parametrize("damage", [b"", b"\x80\x04\x95\x10"])
def test_a_damaged_state_is_said_and_the_crawl_resumes_without_it(tmp_path, caplog, damage):
    (tmp_path / "spider.state").write_bytes(damage)
    spider = SimpleNamespace()
    with caplog.at_level(logging.WARNING):
        JobState(str(tmp_path)).spider_opened(spider)
    assert spider.state == {RUNS_KEY: 1}  # its runs counted again
    [warning] = [record.getMessage() for record in caplog.records]
    assert f"Cannot read the spider's state in {tmp_path / 'spider.state'}" in warning
