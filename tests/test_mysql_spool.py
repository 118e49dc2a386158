"""The spool: every record on disk until the database has it, in order, one user at a time."""

from __future__ import annotations

import os
import threading

import pytest

from topicspider.locks import hold
from topicspider.mysql.spool import Spool, SpoolError, read, segments, spools, waiting


def page(n: int) -> dict:
    return {"table": "pages", "row": {"url": f"http://127.0.0.1/{n}.html", "title": "足球 😀"}}


def link(n: int) -> dict:
    return {"table": "links", "row": {"page_url": "http://127.0.0.1/", "url": f"/{n}"}}


def test_records_go_to_disk_at_once_and_segments_keep_order(tmp_path):
    spool = Spool(tmp_path / "spool")
    assert spool.open() == []
    spool.append([page(1), link(1), link(2)])
    assert spool.pending == 3
    current = sorted((tmp_path / "spool").glob("*.jsonl"))
    assert [read(path) for path in current] == [[page(1), link(1), link(2)]]
    first = spool.seal()
    spool.append([page(2)])
    second = spool.seal()
    assert spool.seal() is None
    assert first.counts == {"pages": 1, "links": 2}
    assert len(first) == 3
    assert first.path.name < second.path.name
    assert read(second.path) == [page(2)]
    spool.close()


def test_a_later_process_gets_what_was_left_oldest_first(tmp_path):
    spool = Spool(tmp_path)
    spool.open()
    for n in range(3):
        spool.append([page(n), link(n)])
        spool.seal()
    spool.append([page(3)])  # not sealed when the process ended
    spool.close()
    (tmp_path / "index.jsonl").write_text("not a segment\n")

    leftovers = Spool(tmp_path).open()
    assert [read(segment.path) for segment in leftovers] == [
        [page(0), link(0)],
        [page(1), link(1)],
        [page(2), link(2)],
        [page(3)],
    ]
    assert [segment.counts["pages"] for segment in leftovers] == [1, 1, 1, 1]


def test_a_second_user_of_the_folder_is_refused(tmp_path):
    first = Spool(tmp_path)
    first.open()
    with pytest.raises(SpoolError, match="in use by another crawl or replay"):
        Spool(tmp_path).open()
    first.close()
    Spool(tmp_path).open()


def test_a_last_line_cut_short_by_a_crash_is_skipped(tmp_path, caplog):
    segment = tmp_path / "1.jsonl"
    segment.write_bytes(b'{"table": "pages", "row": {}}\n{"table": "pa')
    assert read(segment) == [{"table": "pages", "row": {}}]
    assert "incomplete last line" in caplog.text


def test_a_damaged_line_before_the_last_names_its_file_and_line(tmp_path):
    """Before, a bare ``JSONDecodeError``: a traceback from ``scrapy mysql-replay``, and a
    crawl error that named no file."""
    segment = tmp_path / "1.jsonl"
    segment.write_bytes(b'{"table": "pages", "row": {}}\n{"table": "pa\n{"table": "links"}\n')
    with pytest.raises(SpoolError) as error:
        read(segment)
    assert str(error.value).startswith(f"{segment.absolute()}, line 2: not a row (")
    assert str(error.value).endswith(": move the file out of the spool folder to go on without it")


def test_a_damaged_rejected_file_stays_where_it_is(tmp_path):
    """Before, ``requeue_rejected`` made it a segment first, which then stopped every crawl
    and replay of the folder."""
    spool = Spool(tmp_path)
    spool.open()
    spool.rejected.write_bytes(b'{"table": "pages", "row": {}, "err\n{"table": "pages"}\n')
    with pytest.raises(SpoolError, match=r"rejected\.jsonl, line 1: not a row"):
        spool.requeue_rejected()
    spool.rejected.write_bytes(b'{"table": "pages", "row": {}}\n[1, 2]\n')
    with pytest.raises(SpoolError, match=r"rejected\.jsonl, row 2: not a row"):
        spool.requeue_rejected()
    spool.close()
    assert Spool(tmp_path).open() == []
    assert spool.rejected.exists()


def test_an_unusable_folder_is_a_clear_error(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(SpoolError, match="Cannot use the spool folder"):
        Spool(tmp_path / "file" / "spool").open()


def test_refused_records_are_kept_apart_and_never_handed_back(tmp_path):
    spool = Spool(tmp_path)
    spool.open()
    spool.append([page(1)])
    spool.seal()
    spool.reject([{**page(2), "error": "(1406, 'Data too long')"}])
    spool.reject([{**page(3), "error": "(1264, 'Out of range')"}])
    spool.close()
    assert spool.rejected == tmp_path / "rejected.jsonl"
    assert [record["row"]["url"] for record in read(spool.rejected)] == [
        "http://127.0.0.1/2.html",
        "http://127.0.0.1/3.html",
    ]
    assert [read(segment.path) for segment in Spool(tmp_path).open()] == [[page(1)]]


def test_jobs_spool_side_by_side_each_into_its_own_folder(tmp_path):
    first, second, plain = Spool(tmp_path, "job-1"), Spool(tmp_path, "job-2"), Spool(tmp_path)
    for spool in (first, second, plain):
        assert spool.open() == []
    first.append([page(1)])
    second.append([page(2)])
    plain.append([page(3)])
    assert [read(path) for path in segments(tmp_path / "job-1")] == [[page(1)]]
    assert [read(path) for path in segments(tmp_path / "job-2")] == [[page(2)]]
    assert [read(path) for path in segments(tmp_path)] == [[page(3)]]
    with pytest.raises(SpoolError, match="job-1 is in use by another crawl or replay"):
        Spool(tmp_path, "job-1").open()
    for spool in (first, second, plain):
        spool.close()


def test_a_job_folder_is_removed_once_empty_and_kept_while_it_holds_rows(tmp_path):
    done, left = Spool(tmp_path, "done"), Spool(tmp_path, "left")
    for spool in (done, left):
        spool.open()
        spool.append([page(1)])
    done.seal().path.unlink()  # the database took it
    done.close()
    left.close()
    assert not (tmp_path / "done").exists()
    assert [read(path) for path in segments(tmp_path / "left")] == [[page(1)]]
    plain = Spool(tmp_path / "plain")
    plain.open()
    plain.close()
    assert (tmp_path / "plain").is_dir()  # MYSQL_SPOOL_DIR itself stays


def test_a_folder_held_for_an_instant_is_waited_for(tmp_path):
    lock = hold(tmp_path / ".lock", "in use")
    threading.Timer(0.1, os.close, [lock]).start()
    Spool(tmp_path).open()


def spooled(root, job: str | None, *records: dict) -> Spool:
    spool = Spool(root, job)
    spool.open()
    spool.append(records)
    return spool


def test_rows_left_in_other_folders_are_found_not_those_a_crawl_holds(tmp_path):
    spooled(tmp_path, None, page(1)).close()
    spooled(tmp_path, "killed", page(2)).close()
    running = spooled(tmp_path, "running", page(3))
    finished = spooled(tmp_path, "finished", page(4))
    finished.seal().path.unlink()
    finished.close()
    (tmp_path / "notes").mkdir()  # a folder of the user's, not a job's: left alone
    own = spooled(tmp_path, "own", page(5))

    assert waiting(tmp_path, own.folder) == [tmp_path, tmp_path / "killed"]
    assert [spool.folder for spool in spools(tmp_path)] == [
        tmp_path,
        tmp_path / "killed",
        tmp_path / "own",
        tmp_path / "running",
    ]
    assert list((tmp_path / "notes").iterdir()) == []
    with pytest.raises(SpoolError, match="in use"):  # looking took no folder from its crawl
        Spool(tmp_path, "running").open()
    running.close()
    own.close()


def big_page(n: int) -> dict:
    """A record of 10,000-odd bytes: a 4 kB page of a full disk holds part of it."""
    return {"table": "pages", "row": {"url": f"http://127.0.0.1/{n}.html", "text": "足" * 3333}}


def fill(write, records: list[dict]) -> list[dict]:
    """Write ``records`` one call each until the disk is full; the records written."""
    written = []

    def write_them() -> None:
        for record in records:
            write([record])
            written.append(record)

    with pytest.raises(OSError, match="No space left on device"):
        write_them()
    return written


def test_a_full_disk_leaves_whole_records_only(small_fs, caplog):
    spool = Spool(small_fs("64k"))
    spool.open()
    written = fill(spool.append, [big_page(n) for n in range(100)])
    segment = spool.seal()
    assert segment.path.read_bytes().endswith(b"\n")
    assert read(segment.path) == written
    assert segment.counts == {"pages": len(written)}
    segment.path.unlink()

    set_aside = fill(spool.reject, [{**big_page(n), "error": "(1406, '')"} for n in range(100)])
    spool.close()
    assert spool.rejected.read_bytes().endswith(b"\n")
    assert read(spool.rejected) == set_aside
    assert "incomplete last line" not in caplog.text
