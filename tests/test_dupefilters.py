"""TOPIC_DUPEFILTER picks the dupefilter; the Bloom one honours the request fingerprinter,
survives a pause in JOBDIR, and filters a real crawl as the exact one does."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.dupefilters import RFPDupeFilter
from scrapy.utils.test import get_crawler

from tests.test_spider import ONE_AT_A_TIME, crawl_command, paths, read_jsonl, scrapy
from topicspider import settings as project_settings
from topicspider.dupefilters import BloomDupeFilter, TopicDupeFilter
from topicspider.exceptions import ConfigError

PROJECT = {
    name: getattr(project_settings, name) for name in dir(project_settings) if name.isupper()
}


def dupefilter(**settings):
    return TopicDupeFilter.from_crawler(get_crawler(settings_dict={**PROJECT, **settings}))


def test_the_setting_chooses_exact_or_bloom():
    assert isinstance(dupefilter(), RFPDupeFilter)
    bloom = dupefilter(TOPIC_DUPEFILTER="bloom", TOPIC_BLOOM_CAPACITY=1000)
    assert isinstance(bloom, BloomDupeFilter)
    assert bloom.bloom.bits.size == 14_378  # 1000 URLs at 0.1%: 1.8 bytes each
    with pytest.raises(ConfigError, match="TOPIC_DUPEFILTER='fuzzy'"):
        dupefilter(TOPIC_DUPEFILTER="fuzzy")


class QueryBlindFingerprinter:
    """Treats URLs that differ only in their query as one page."""

    def fingerprint(self, request: Request) -> bytes:
        return request.url.split("?")[0].encode()


def test_bloom_honours_the_request_fingerprinter():
    df = dupefilter(
        TOPIC_DUPEFILTER="bloom",
        REQUEST_FINGERPRINTER_CLASS=f"{__name__}.QueryBlindFingerprinter",
    )
    assert not df.request_seen(Request("http://127.0.0.1/a?x=1"))
    assert df.request_seen(Request("http://127.0.0.1/a?x=2"))
    assert not df.request_seen(Request("http://127.0.0.1/b"))


def test_bloom_is_saved_in_jobdir_and_resumed(tmp_path):
    settings = {"TOPIC_DUPEFILTER": "bloom", "TOPIC_BLOOM_CAPACITY": 5000, "JOBDIR": str(tmp_path)}
    first = dupefilter(**settings)
    for i in range(100):
        assert not first.request_seen(Request(f"http://127.0.0.1/{i}"))
    first.close("shutdown")
    assert (tmp_path / "requests.bloom").exists()

    # A changed capacity does not resize a saved filter.
    second = dupefilter(**{**settings, "TOPIC_BLOOM_CAPACITY": 10})
    assert second.bloom.bits.size == first.bloom.bits.size
    assert second.bloom.count == 100
    assert all(second.request_seen(Request(f"http://127.0.0.1/{i}")) for i in range(100))
    assert not second.request_seen(Request("http://127.0.0.1/new"))


def test_bloom_warns_once_past_its_capacity(caplog):
    df = dupefilter(TOPIC_DUPEFILTER="bloom", TOPIC_BLOOM_CAPACITY=10)
    for i in range(30):
        df.request_seen(Request(f"http://127.0.0.1/{i}"))
    warnings = [r for r in caplog.records if "TOPIC_BLOOM_CAPACITY" in r.getMessage()]
    assert len(warnings) == 1


def test_a_bloom_crawl_fetches_each_page_once_and_the_same_pages(site, site_url, tmp_path):
    exact = scrapy(*crawl_command(site_url, site, tmp_path / "exact", *ONE_AT_A_TIME))
    bloom = scrapy(
        *crawl_command(site_url, site, tmp_path / "bloom", *ONE_AT_A_TIME, "TOPIC_DUPEFILTER=bloom")
    )
    assert exact.returncode == 0, exact.stderr[-2000:]
    assert bloom.returncode == 0, bloom.stderr[-2000:]
    fetched = paths(read_jsonl(tmp_path / "bloom" / "fetch.jsonl"))
    assert len(fetched) == len(set(fetched))
    assert fetched == paths(read_jsonl(tmp_path / "exact" / "fetch.jsonl"))
    assert "'dupefilter/bloom/urls'" in bloom.stderr


def test_a_paused_bloom_crawl_resumes_without_fetching_twice(site, site_url, tmp_path):
    jobdir = tmp_path / "job"
    command = crawl_command(site_url, site, tmp_path, f"JOBDIR={jobdir}", "TOPIC_DUPEFILTER=bloom")
    first = scrapy(*command, "-s", "CLOSESPIDER_PAGECOUNT=6")
    assert first.returncode == 0, first.stderr[-2000:]
    assert (jobdir / "requests.bloom").exists()
    fetched_first = paths(read_jsonl(tmp_path / "fetch.jsonl"))

    second = scrapy(*command)
    assert second.returncode == 0, second.stderr[-2000:]
    assert "Resumed the Bloom filter" in second.stderr
    fetched = paths(read_jsonl(tmp_path / "fetch.jsonl"))
    assert len(fetched) > len(fetched_first) + 10
    assert len(fetched) == len(set(fetched)), "a page was fetched twice"
