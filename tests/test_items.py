"""A crawl's stored pages as a Scrapy feed (``-O pages.jsonl``)."""

from __future__ import annotations

import base64
import json

from tests.test_spider import crawl_command, scrapy


def test_a_feed_lists_the_stored_pages_and_gives_their_bytes_when_asked(site, site_url, tmp_path):
    feeds = {
        str(tmp_path / "pages.jsonl"): {"format": "jsonlines"},
        str(tmp_path / "bodies.jsonl"): {"format": "jsonlines", "fields": ["url", "body"]},
    }
    result = scrapy(*crawl_command(site_url, site, tmp_path, f"FEEDS={json.dumps(feeds)}"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr

    index = read_lines(tmp_path / "pages" / "index.jsonl")
    pages = read_lines(tmp_path / "pages.jsonl")
    assert len(pages) >= 10
    assert [page["url"] for page in pages] == [line["url"] for line in index]
    for page in pages:
        assert "body" not in page
        assert page["text"]
        assert page["relevance"] > 0
        assert (tmp_path / "pages" / page["path"]).is_file()
    gbk = [page for page in pages if page["charset"] == "gb18030"]
    assert gbk
    assert "足球" in gbk[0]["text"]  # decoded, not the page's GBK bytes

    paths = {page["url"]: tmp_path / "pages" / page["path"] for page in pages}
    for line in read_lines(tmp_path / "bodies.jsonl"):
        assert base64.b64decode(line["body"]) == paths[line["url"]].read_bytes()


def read_lines(path):
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]
