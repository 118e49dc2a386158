import io
import json
import os
import subprocess
import sys

from topicspider.frames import frame, read_frame
from topicspider.pagestore import PageStore, tidy_index

RECORD = {"url": "https://example.cn/a.html", "title": "足球", "relevance": 0.5, "depth": 1}


def test_the_page_writer_imports_neither_scrapy_nor_twisted():
    """It starts with every crawl: importing Scrapy would cost it ten times the CPU time."""
    check = (
        "import sys, topicspider.pagestore; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'scrapy', 'twisted'}))"
    )
    output = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert output.stdout.strip() == "[]", output.stderr


def test_the_page_writer_process_writes_pages_and_answers_with_their_paths(tmp_path):
    (tmp_path / "blocked.example").write_text("a file where a folder must go")
    requests = [
        (1, ("https://example.cn/新闻/a.html", "足球".encode("gbk"), RECORD)),
        (2, ("https://example.cn/新闻/a.html", b"again", {**RECORD, "title": "again"})),
        (3, ("https://blocked.example/a.html", b"x", {**RECORD, "url": "blocked"})),
        (4, ("https://example.cn/later.html", b"x", RECORD)),
    ]
    writer = subprocess.run(
        [sys.executable, "-m", "topicspider.pagestore"],
        input=b"".join(b"".join(frame(m)) for m in [str(tmp_path), *requests]),
        capture_output=True,
        check=True,
    )
    replies, stream = [], io.BytesIO(writer.stdout)
    while (reply := read_frame(stream)) is not None:
        replies.append(reply)

    assert replies[:2] == [(1, "example.cn/新闻/a.html", None), (2, "example.cn/新闻/a.html", None)]
    (blocked, _, error), (later, _, refusal) = replies[2:]
    assert (blocked, later) == (3, 4)
    assert "blocked.example" in error
    assert "earlier failure" in refusal
    assert (tmp_path / "example.cn" / "新闻" / "a.html").read_bytes() == b"again"
    assert not (tmp_path / "example.cn" / "later.html").exists()
    lines = [
        json.loads(line) for line in (tmp_path / "index.jsonl").read_text("utf-8").splitlines()
    ]
    assert [line["path"] for line in lines] == ["example.cn/新闻/a.html"] * 2
    assert lines[-1]["title"] == "again"  # the line of the bytes on disk comes last


def test_a_temporary_file_left_by_a_killed_writer_is_written_over(tmp_path):
    """Process ids come round again: a new writer may pick the name of a dead one's file."""
    store = PageStore(tmp_path)
    (tmp_path / "example.cn").mkdir()
    leftover = tmp_path / "example.cn" / f"~tmp-{os.getpid()}-0.part"
    leftover.write_bytes(b"half a page")
    assert store.write("https://example.cn/a.html", b"whole", RECORD) == "example.cn/a.html"
    store.close()
    assert (tmp_path / "example.cn" / "a.html").read_bytes() == b"whole"
    assert sorted(p.name for p in (tmp_path / "example.cn").iterdir()) == ["a.html"]


# The page file fits under the size limit the writer is given; one more index line does not.
INDEX_TOO_LARGE = """
import resource, signal, sys
from topicspider.pagestore import PageStore
folder, limit, url = sys.argv[1], int(sys.argv[2]), sys.argv[3]
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
try:
    PageStore(folder).write(url, b"<p>new</p>", {"url": url, "charset": "utf-8"})
except OSError as error:
    print(error)
"""


def test_a_page_whose_index_line_cannot_be_written_leaves_the_folder_as_it_was(tmp_path):
    """Before, a page written again had replaced its earlier bytes, which the index's last
    line still described (their charset), and a new page stayed on disk, listed nowhere."""
    store = PageStore(tmp_path)
    stored = "https://example.cn/a.html"
    store.write(stored, "<p>足球</p>".encode("gbk"), {**RECORD, "charset": "gb18030"})
    for n in range(5):  # an index larger than a page
        store.write(f"https://example.cn/{n}.html", b"x", RECORD)
    store.close()
    index = tmp_path / "index.jsonl"
    before = index.read_bytes()
    for url in (stored, "https://example.cn/new.html"):
        writer = subprocess.run(
            [sys.executable, "-c", INDEX_TOO_LARGE, str(tmp_path), str(len(before)), url],
            capture_output=True,
            text=True,
            check=True,
        )
        # The error names the file: before, only "[Errno 27] File too large".
        assert writer.stdout.strip() == f"[Errno 27] File too large: '{index}'", writer.stderr
    assert index.read_bytes() == before
    assert (tmp_path / "example.cn" / "a.html").read_bytes() == "<p>足球</p>".encode("gbk")
    assert sorted(path.name for path in (tmp_path / "example.cn").iterdir()) == [
        "0.html",
        "1.html",
        "2.html",
        "3.html",
        "4.html",
        "a.html",
    ]


def test_tidy_index_lists_each_url_once_where_it_was_first(tmp_path):
    index = tmp_path / "index.jsonl"
    lines = [
        '{"url": "a", "charset": "gb18030"}',
        "not json, kept as it was",
        '{"note": "a line a user added"}',
        '["json, but no page"]',
        '{"url": 7}',
        '{"url": "b"}',
        '{"url": "a", "charset": "utf-8"}',
    ]
    index.write_text("\n".join(lines) + '\n{"url": "torn', "utf-8")
    (tmp_path / "~tmp-index.jsonl.part").write_text("half an index a killed crawl left")
    assert tidy_index(index) == {"a", "b"}
    # Before, the lines without a URL made every later crawl into the folder fail.
    assert index.read_text("utf-8").splitlines() == [lines[6], *lines[1:6]]
    assert [p.name for p in tmp_path.iterdir()] == ["index.jsonl"]


def test_tidy_index_leaves_a_tidy_index_alone(tmp_path):
    index = tmp_path / "index.jsonl"
    assert tidy_index(index) == set()
    index.write_text('{"url": "a"}\n{"url": "b"}\n', "utf-8")
    before = index.stat()
    assert tidy_index(index) == {"a", "b"}
    assert (index.stat().st_ino, index.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
