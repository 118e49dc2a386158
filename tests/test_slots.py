"""Download slot policy: one slot per host, or a host's URLs spread by APHash."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from topicspider.exceptions import ConfigError
from topicspider.slots import SlotPolicyMiddleware, aphash
from topicspider.spiders.topic import TopicSpider


def test_aphash_matches_the_reference_implementation():
    # Values of Arash Partow's C implementation (unsigned 32-bit).
    assert aphash(b"abcdefghijklmnopqrstuvwxyz1234567890") == 882643939
    assert aphash(b"http://127.0.0.1:8000/sports/index.html") == 2717706444
    assert aphash(b"") == 0xAAAAAAAA


def middleware(**settings) -> SlotPolicyMiddleware:
    return SlotPolicyMiddleware.from_crawler(get_crawler(TopicSpider, settings))


def test_aphash_policy_spreads_one_host_over_n_slots_stably():
    slots = middleware(TOPIC_SLOT_POLICY="aphash", TOPIC_SLOTS=4)
    requests = [Request(f"http://big.test/page{i}.html") for i in range(200)]
    assigned = [slots.get_processed_request(r, None).meta["download_slot"] for r in requests]
    assert set(assigned) == {f"big.test#{k}" for k in range(4)}
    again = slots.get_processed_request(Request("http://big.test/page7.html"), None)
    assert again.meta["download_slot"] == assigned[7]
    chosen = Request("http://big.test/x", meta={"download_slot": "mine"})
    assert slots.get_processed_request(chosen, None).meta["download_slot"] == "mine"


def test_a_page_written_two_ways_has_one_slot():
    """One fingerprint, one slot: a page linked with its query in another order or with a
    session id is queued once, in the slot it has."""
    slots = middleware(TOPIC_SLOT_POLICY="aphash", TOPIC_SLOTS=64)
    for n in range(50):
        ways = [
            f"http://big.test/p?a={n}&b=2",
            f"http://big.test/p?b=2&a={n}",
            f"http://big.test/p;jsessionid=0AF3B2C4D5E6F7{n:02d}?a={n}&b=2",
        ]
        assert len({slots.slot_of(Request(url)) for url in ways}) == 1, ways


def test_host_policy_leaves_scrapy_alone():
    with pytest.raises(NotConfigured):
        middleware(TOPIC_SLOT_POLICY="host")


def test_unknown_policy_is_bad_input():
    settings = Settings({"TOPIC_STRATEGY": "best_first", "TOPIC_WEIGHTING": "tf"})
    settings.set("TOPIC_SLOT_POLICY", "random")
    with pytest.raises(ConfigError, match="TOPIC_SLOT_POLICY='random'"):
        TopicSpider.check_arguments(settings, seeds="http://127.0.0.1/", keywords="sports")
