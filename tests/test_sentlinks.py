"""SentLinks: a link found again is sent to the scheduler only if that could change something."""

from __future__ import annotations

from topicspider.sentlinks import SentLinks

URL = "http://127.0.0.1/a.html"


def test_a_link_found_again_goes_only_with_a_higher_score_or_a_lower_depth():
    sent = SentLinks(10)
    assert sent.fresh(URL, 0.5, 3)
    assert not sent.fresh(URL, 0.5, 3)
    assert not sent.fresh(URL, 0.2, 4)
    assert sent.fresh(URL, 0.7, 3)  # the queue may raise the page's score
    assert not sent.fresh(URL, 0.6, 3)
    assert sent.fresh(URL, 0.1, 2)  # DEPTH_LIMIT may have dropped the deeper one
    assert not sent.fresh(URL, 0.7, 2)


def test_past_its_size_the_oldest_links_are_forgotten_and_sent_again():
    sent = SentLinks(20)
    for i in range(20):
        sent.fresh(f"http://127.0.0.1/{i}", 0.5, 1)
    sent.fresh("http://127.0.0.1/new", 0.5, 1)
    assert len(sent) == 19
    assert sent.fresh("http://127.0.0.1/0", 0.5, 1)  # forgotten: sent again
    assert not sent.fresh("http://127.0.0.1/19", 0.5, 1)


def test_size_zero_sends_every_link():
    sent = SentLinks(0)
    assert sent.fresh(URL, 0.5, 1)
    assert sent.fresh(URL, 0.5, 1)
    assert len(sent) == 0
