"""TOPIC_DUPEFILTER picks the dupefilter; the Bloom one honours the request fingerprinter,
survives a pause in JOBDIR, and filters a real crawl as the exact one does. A JOBDIR that
keeps its seen URLs with one is refused to the other."""

from __future__ import annotations

import logging

import pytest
from scrapy import Request
from scrapy.dupefilters import RFPDupeFilter
from scrapy.utils.test import get_crawler

from tests.test_crash import our_errors
from tests.test_spider import (
    ONE_AT_A_TIME,
    crawl_command,
    paths,
    read_jsonl,
    scrapy,
    scrapy_side_by_side,
)
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


@pytest.mark.parametrize("name", ["exact", "bloom"])
def test_knows_answers_without_adding(tmp_path, name):
    """What the scheduler asks before it queues a request, and writes it down as seen after."""
    df = dupefilter(TOPIC_DUPEFILTER=name, JOBDIR=str(tmp_path))
    page = Request("http://127.0.0.1/page")
    assert not df.knows(page)
    assert not df.knows(page)
    assert not df.request_seen(page)
    assert df.knows(page)
    df.close("finished")


def test_a_jobdir_that_keeps_its_urls_with_the_other_dupefilter_is_refused(tmp_path):
    """The other filter would know none of the URLs fetched: the resumed crawl would fetch
    every page again. Refused before it writes its own file."""
    exact = dupefilter(JOBDIR=str(tmp_path / "exact"))
    exact.request_seen(Request("http://127.0.0.1/a"))
    exact.close("shutdown")
    with pytest.raises(
        ConfigError, match="keeps its seen URLs with TOPIC_DUPEFILTER=exact; this crawl has"
    ):
        dupefilter(JOBDIR=str(tmp_path / "exact"), TOPIC_DUPEFILTER="bloom")
    assert not (tmp_path / "exact" / "requests.bloom").exists()

    bloom = dupefilter(JOBDIR=str(tmp_path / "bloom"), TOPIC_DUPEFILTER="bloom")
    bloom.request_seen(Request("http://127.0.0.1/a"))
    bloom.close("shutdown")
    with pytest.raises(ConfigError, match="Resume it with TOPIC_DUPEFILTER=bloom"):
        dupefilter(JOBDIR=str(tmp_path / "bloom"))

    dupefilter(JOBDIR=str(tmp_path / "unused")).close("finished")  # saw nothing: either will do
    dupefilter(JOBDIR=str(tmp_path / "unused"), TOPIC_DUPEFILTER="bloom").close("finished")


def test_a_resumed_bloom_filter_of_another_size_says_so_and_warns_at_its_own_capacity(
    tmp_path, caplog
):
    """The file keeps its size (documented): a crawl resumed with a larger capacity is told,
    and is warned once the filter passes the capacity it really has."""
    settings = {"TOPIC_DUPEFILTER": "bloom", "TOPIC_BLOOM_CAPACITY": 100, "JOBDIR": str(tmp_path)}
    dupefilter(**settings).close("shutdown")
    with caplog.at_level(logging.WARNING):
        resumed = dupefilter(**{**settings, "TOPIC_BLOOM_CAPACITY": 10_000_000})
        for i in range(150):
            resumed.request_seen(Request(f"http://127.0.0.1/{i}"))
    messages = [record.getMessage() for record in caplog.records]
    assert any(
        "requests.bloom keeps its size: 1438 bits, 10 hashes, for about 100 URLs;"
        " TOPIC_BLOOM_CAPACITY=10000000" in message
        for message in messages
    ), messages
    assert [m for m in messages if "URLs it was sized for" in m] == [
        "The Bloom filter holds more than the 100 URLs it was sized for (TOPIC_BLOOM_CAPACITY);"
        " its false-positive rate grows past the one it was sized for"
    ]
    resumed.close("finished")


def test_a_paused_crawl_resumed_with_the_other_dupefilter_stops_in_one_line(
    site, site_url, tmp_path
):
    jobdir = tmp_path / "job"
    command = crawl_command(site_url, site, tmp_path, f"JOBDIR={jobdir}")
    first = scrapy(*command, "-s", "CLOSESPIDER_PAGECOUNT=6")
    assert first.returncode == 0, first.stderr[-2000:]
    fetched = read_jsonl(tmp_path / "fetch.jsonl")

    bloom = scrapy(*command, "-s", "TOPIC_DUPEFILTER=bloom")
    assert our_errors(bloom.stderr) == [
        line for line in bloom.stderr.splitlines() if "keeps its seen URLs" in line
    ]
    assert (
        f"JOBDIR {jobdir} keeps its seen URLs with TOPIC_DUPEFILTER=exact; this crawl has"
        " TOPIC_DUPEFILTER=bloom" in bloom.stderr
    )
    assert "'finish_reason': 'jobdir_error'" in bloom.stderr
    assert "Traceback" not in bloom.stderr
    assert read_jsonl(tmp_path / "fetch.jsonl") == fetched, "pages were fetched again"


def test_bloom_warns_once_past_its_capacity(caplog):
    df = dupefilter(TOPIC_DUPEFILTER="bloom", TOPIC_BLOOM_CAPACITY=10)
    for i in range(30):
        df.request_seen(Request(f"http://127.0.0.1/{i}"))
    warnings = [r for r in caplog.records if "TOPIC_BLOOM_CAPACITY" in r.getMessage()]
    assert len(warnings) == 1


def test_a_bloom_crawl_fetches_each_page_once_and_the_same_pages(site, site_url, tmp_path):
    exact, bloom = scrapy_side_by_side(
        crawl_command(site_url, site, tmp_path / "exact", *ONE_AT_A_TIME),
        crawl_command(site_url, site, tmp_path / "bloom", *ONE_AT_A_TIME, "TOPIC_DUPEFILTER=bloom"),
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
