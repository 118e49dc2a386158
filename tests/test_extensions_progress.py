"""The progress line and the final summary, from the crawl's stats."""

from __future__ import annotations

import logging

from scrapy.utils.test import get_crawler

from topicspider.extensions.progress import Progress


def summary(caplog, stats: dict[str, int]) -> str:
    """The ``Finished`` line of a crawl whose stats are these, and its ``topic/harvest_rate``."""
    crawler = get_crawler(settings_dict={"TOPIC_PROGRESS_INTERVAL": 0})
    crawler.stats.open_spider()
    for name, value in stats.items():
        crawler.stats.set_value(name, value)
    progress = Progress.from_crawler(crawler)
    with caplog.at_level(logging.INFO, logger="topicspider.extensions.progress"):
        progress.spider_closed()
    (line,) = [record.getMessage() for record in caplog.records]
    return f"{line} | {crawler.stats.get_value('topic/harvest_rate')}"


def test_the_summary_gives_fetched_accepted_harvest_rate_and_queue(caplog):
    line = summary(
        caplog,
        {
            "response_received_count": 52,
            "topic/accepted": 20,
            "scheduler/enqueued": 60,
            "scheduler/dequeued": 52,
        },
    )
    assert line.startswith("Finished: fetched 52 pages, accepted 20 (harvest rate 0.38), 8 queued")
    assert "near-duplicates" not in line
    assert line.endswith("| 0.3846")


def test_the_summary_says_how_many_accepted_pages_were_near_duplicates_not_stored(caplog):
    """A near-duplicate of a stored page is on topic, so it counts in "accepted" and the
    harvest rate, but the store has one page fewer: the line says so."""
    stats = {"response_received_count": 52, "topic/accepted": 20, "topic/duplicate": 3}
    line = summary(caplog, stats)
    assert "accepted 20 (harvest rate 0.38), not stored as near-duplicates: 3, 0 queued" in line
