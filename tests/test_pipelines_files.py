import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.exceptions import CloseSpider, DropItem, NotConfigured
from scrapy.utils.test import get_crawler

from topicspider.items import PageItem
from topicspider.pagestore import INDEX_FIELDS
from topicspider.pipelines.files import FilesystemPipeline, PagesDirError

ROOT = Path(__file__).resolve().parents[1]
HTML = "<html><head><title>足球比赛</title></head><body>中国队今天赢了。</body></html>"


def make_pipeline(pages_dir, **settings) -> FilesystemPipeline:
    crawler = get_crawler(settings_dict={"TOPIC_PAGES_DIR": str(pages_dir), **settings})
    return FilesystemPipeline.from_crawler(crawler)


def make_page(url: str, body: bytes = b"<p>x</p>", charset: str = "utf-8") -> PageItem:
    return PageItem(
        url=url,
        title="足球比赛",
        text="中国队今天赢了。",
        body=body,
        charset=charset,
        relevance=0.75,
        depth=2,
        parent_url="https://example.cn/",
        fetched_at="2024-05-01T12:00:00+00:00",
    )


def store(pipeline: FilesystemPipeline, item):
    """What Scrapy does with an item: await ``process_item`` in an asyncio loop."""
    return asyncio.run(pipeline.process_item(item))


def close(pipeline: FilesystemPipeline) -> None:
    asyncio.run(pipeline.close_spider())


def read_index(pages_dir: Path) -> list[dict]:
    return [
        json.loads(line) for line in (pages_dir / "index.jsonl").read_text("utf-8").splitlines()
    ]


def test_pages_are_stored_byte_for_byte(tmp_path):
    pages_dir = tmp_path / "pages"
    pipeline = make_pipeline(pages_dir)
    items = [
        make_page("https://example.cn/新闻/足球.html", HTML.encode("gbk"), "gb18030"),
        make_page("https://example.cn/news/", HTML.encode("utf-8"), "utf-8"),
        make_page("https://example.cn/list.html?page=2", b"\xff\x00raw"),
    ]
    pipeline.open_spider()
    for item in items:
        assert store(pipeline, item) is item
    close(pipeline)

    for item in items:
        assert (pages_dir / item.path).read_bytes() == item.body
    assert items[0].path == "example.cn/新闻/足球.html"
    assert items[1].path == "example.cn/news/index.html"
    index = read_index(pages_dir)
    assert [line["path"] for line in index] == [item.path for item in items]
    for line, item in zip(index, items, strict=True):
        assert set(INDEX_FIELDS) <= set(line)
        assert line == {field: getattr(item, field) for field in INDEX_FIELDS}
    assert "足球比赛" in (pages_dir / "index.jsonl").read_text("utf-8")
    assert pipeline.stats.get_value("topic/stored") == 3
    assert not list(pages_dir.rglob("~tmp-*"))


def test_pages_are_replaced_and_the_index_lists_each_url_once(tmp_path):
    pages_dir = tmp_path / "pages"
    for body in (b"first", b"second"):
        pipeline = make_pipeline(pages_dir)
        pipeline.open_spider()
        store(pipeline, make_page("https://example.com/a.html", body))
        store(pipeline, make_page(f"https://example.com/{body.decode()}.html", body))
        close(pipeline)
    assert [row["url"] for row in read_index(pages_dir)] == [
        "https://example.com/a.html",
        "https://example.com/first.html",
        "https://example.com/second.html",
    ]
    assert pipeline.stats.get_value("topic/stored/refreshed") == 1
    assert (pages_dir / "example.com" / "a.html").read_bytes() == b"second"
    assert sorted(p.name for p in (pages_dir / "example.com").iterdir()) == [
        "a.html",
        "first.html",
        "second.html",
    ]


def test_a_page_fetched_again_is_described_by_its_new_line(tmp_path):
    """A site moved from GBK to UTF-8 between two crawls into one folder: the index gives
    the charset (and title, time) of the bytes on disk, and lists the page once."""
    url = "https://example.cn/新闻/足球.html"
    pipeline = make_pipeline(tmp_path)
    pipeline.open_spider()
    store(pipeline, make_page(url, HTML.encode("gbk"), "gb18030"))
    store(pipeline, make_page("https://example.cn/other.html"))
    close(pipeline)

    moved = make_page(url, HTML.replace("足球比赛", "足球新闻").encode("utf-8"), "utf-8")
    moved.title, moved.fetched_at = "足球新闻", "2024-06-01T08:00:00+00:00"
    pipeline = make_pipeline(tmp_path)
    pipeline.open_spider()
    store(pipeline, moved)
    during = [line for line in read_index(tmp_path) if line["url"] == url]
    close(pipeline)

    assert during[-1]["charset"] == "utf-8"
    index = read_index(tmp_path)
    assert [line["url"] for line in index] == [url, "https://example.cn/other.html"]
    assert index[0] == {field: getattr(moved, field) for field in INDEX_FIELDS}
    page = (tmp_path / index[0]["path"]).read_bytes().decode(index[0]["charset"])
    assert index[0]["title"] in page
    assert pipeline.stats.get_value("topic/stored/refreshed") == 1


def test_a_page_a_killed_crawl_listed_twice_is_listed_once_by_the_next(tmp_path):
    """Killed before it could tidy the index, a crawl leaves a page stored again listed
    twice (the last line is the one that describes the file)."""
    first, second = "https://example.cn/a.html", "https://example.cn/b.html"
    lines = [
        {"url": first, "charset": "gb18030"},
        {"url": second, "charset": "utf-8"},
        {"url": first, "charset": "utf-8"},
    ]
    (tmp_path / "index.jsonl").write_bytes(
        "".join(json.dumps(line) + "\n" for line in lines).encode() + b'{"url": "https:'
    )
    pipeline = make_pipeline(tmp_path)
    pipeline.open_spider()
    store(pipeline, make_page("https://example.cn/c.html"))
    close(pipeline)
    index = read_index(tmp_path)
    assert [line["url"] for line in index] == [first, second, "https://example.cn/c.html"]
    assert index[0]["charset"] == "utf-8"
    assert pipeline.stats.get_value("topic/stored") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["example.cn", "index.jsonl"]


def test_dict_items_work_too(tmp_path):
    pipeline = make_pipeline(tmp_path)
    pipeline.open_spider()
    item = store(pipeline, {"url": "https://example.com/", "body": b"x"})
    close(pipeline)
    assert item["path"] == "example.com/index.html"
    assert read_index(tmp_path)[0]["title"] is None


def test_empty_setting_turns_the_pipeline_off():
    with pytest.raises(NotConfigured):
        make_pipeline("")


def test_unusable_folder_is_named_on_open(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    pages_dir = tmp_path / "file" / "pages"
    pipeline = make_pipeline(pages_dir)
    with pytest.raises(PagesDirError, match=re.escape(str(pages_dir))) as info:
        pipeline.open_spider()
    assert isinstance(info.value, CloseSpider)
    assert info.value.reason == "pages_dir_error"
    close(pipeline)


def test_write_error_stops_storing(tmp_path):
    pipeline = make_pipeline(tmp_path)
    pipeline.open_spider()
    store(pipeline, make_page("https://example.com/ok.html"))
    (tmp_path / "blocked.example").write_text("a file where a folder must go")
    with pytest.raises(DropItem, match=re.escape(f"Cannot write to the pages folder {tmp_path}")):
        store(pipeline, make_page("https://blocked.example/a.html"))
    with pytest.raises(DropItem, match=re.escape(str(tmp_path))):
        store(pipeline, make_page("https://example.com/later.html"))
    close(pipeline)
    assert [line["path"] for line in read_index(tmp_path)] == ["example.com/ok.html"]
    assert pipeline.stats.get_value("topic/stored") == 1


class HalfWrites:
    """An index file on a disk that fills up in the middle of a line."""

    def __init__(self, file):
        self.file = file

    def write(self, data: bytes) -> int:
        return self.file.write(data[: len(data) // 2])

    def __getattr__(self, name):
        return getattr(self.file, name)


def test_a_short_write_leaves_no_half_line(tmp_path):
    pipeline = make_pipeline(tmp_path)
    pipeline.open_spider()
    store(pipeline, make_page("https://example.com/1.html"))
    pipeline._store._index = HalfWrites(pipeline._store._index)
    with pytest.raises(DropItem, match="Short write"):
        store(pipeline, make_page("https://example.com/2.html"))
    close(pipeline)
    assert (tmp_path / "index.jsonl").read_bytes().endswith(b"}\n")
    assert [line["path"] for line in read_index(tmp_path)] == ["example.com/1.html"]


CRAWL = """
import json, sys
from scrapy import Request, Spider
from scrapy.crawler import CrawlerProcess
from topicspider.items import PageItem

class Pages(Spider):
    # Items from a response, as the topic spider yields them.
    name = "pages"

    async def start(self):
        yield Request("data:,pages")

    async def parse(self, response):
        for url in sys.argv[2:]:
            if url == "kill-writer":
                await kill_writer()
                continue
            yield PageItem(url, "t", "", b"<p>x</p>", "utf-8", 0.5, 0, None, "2024-01-01")

async def kill_writer():
    import asyncio, os, signal
    from tests.processes import children_of
    await asyncio.sleep(0.5)  # the pages before are written
    for writer in children_of(os.getpid(), "topicspider.pagestore"):
        os.kill(writer, signal.SIGKILL)
    await asyncio.sleep(0.5)  # and the crawl has seen it go

process = CrawlerProcess(settings={
    "TOPIC_PAGES_DIR": sys.argv[1],
    "ITEM_PIPELINES": {"topicspider.pipelines.files.FilesystemPipeline": 300},
})
crawler = process.create_crawler(Pages)
process.crawl(crawler)
process.start()
print(json.dumps(crawler.stats.get_stats(), default=str))
"""


def crawl(pages_dir: Path, *urls: str) -> tuple[dict, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", CRAWL, str(pages_dir), *urls],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    return json.loads(result.stdout.splitlines()[-1]), result.stderr


def test_crawl_closes_when_the_folder_fails(tmp_path):
    (tmp_path / "blocked.example").write_text("a file where a folder must go")
    urls = ["https://example.com/1", "https://blocked.example/", "https://example.com/2"]
    stats, log = crawl(tmp_path, *urls)
    assert stats["finish_reason"] == "pages_dir_error"
    assert stats["topic/stored"] == 1
    assert [line["url"] for line in read_index(tmp_path)] == urls[:1]
    assert f"Cannot write to the pages folder {tmp_path}" in log


def test_a_crawl_whose_page_writer_dies_closes_and_keeps_the_pages_written(tmp_path):
    before = [f"https://example.com/{i}.html" for i in range(3)]
    after = [f"https://example.com/later/{i}.html" for i in range(3)]
    stats, log = crawl(tmp_path, *before, "kill-writer", *after)
    assert stats["finish_reason"] == "pages_dir_error"
    assert "the page writer exited" in log
    assert stats["topic/stored"] == 3
    assert [line["url"] for line in read_index(tmp_path)] == before
    for line in read_index(tmp_path):
        assert (tmp_path / line["path"]).read_bytes() == b"<p>x</p>"
    assert not (tmp_path / "example.com" / "later").exists()


def test_crawl_does_not_start_without_a_folder(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    stats, log = crawl(tmp_path / "file" / "pages", "https://example.com/1")
    assert stats["finish_reason"] == "pages_dir_error"
    assert "topic/stored" not in stats
    assert f"Cannot write to the pages folder {tmp_path / 'file' / 'pages'}" in log


def test_a_torn_last_line_is_cut_before_appending(tmp_path):
    (tmp_path / "index.jsonl").write_bytes(
        b'{"url": "https://example.com/a.html"}\n{"url": "https://ex'
    )
    pipeline = make_pipeline(tmp_path)
    pipeline.open_spider()
    store(pipeline, make_page("https://example.com/b.html"))
    close(pipeline)
    assert [row["url"] for row in read_index(tmp_path)] == [
        "https://example.com/a.html",
        "https://example.com/b.html",
    ]


HOLD_FOLDER = """
import fcntl, os, sys
handle = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(handle, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""


def test_a_folder_another_crawl_writes_to_is_refused(tmp_path):
    """Two scrapyd jobs given the same ``jobid`` would each store every page."""
    first = make_pipeline(tmp_path)
    first.open_spider()
    second = make_pipeline(tmp_path)
    with pytest.raises(PagesDirError, match="another crawl is writing to it"):
        second.open_spider()
    close(second)
    store(first, make_page("https://example.com/1.html"))
    close(first)
    third = make_pipeline(tmp_path)
    third.open_spider()  # free again once the first crawl is done
    close(third)
    assert [line["url"] for line in read_index(tmp_path)] == ["https://example.com/1.html"]


def test_a_crawl_into_a_folder_in_use_stops_before_storing_anything(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_FOLDER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        stats, log = crawl(tmp_path, "https://example.com/1")
    finally:
        holder.communicate("")
    assert stats["finish_reason"] == "pages_dir_error"
    assert "topic/stored" not in stats
    assert f"Cannot write to the pages folder {tmp_path} (TOPIC_PAGES_DIR): another crawl" in log
    stats, _ = crawl(tmp_path, "https://example.com/1")
    assert stats["topic/stored"] == 1
