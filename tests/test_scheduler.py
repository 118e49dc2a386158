"""The local frontier's scheduler: what it hands out."""

from __future__ import annotations

import pytest
from scrapy import Request, Spider
from scrapy.utils.test import get_crawler

from tests.test_settingtypes import PROJECT
from topicspider.scheduler import TopicScheduler
from topicspider.urlpatterns import PatternStats, template


class Learning(Spider):
    """A spider with what the topic spider learns of URL templates."""

    name = "learning"

    def __init__(self) -> None:
        super().__init__()
        self.patterns = PatternStats()

    def parse(self, response):
        pass


@pytest.mark.parametrize("jobdir", [False, True])
def test_requests_of_a_template_found_barren_since_they_were_queued_never_leave_it(
    jobdir, tmp_path
):
    """Before, each went through the engine to a downloader middleware that dropped it, at
    0.5 ms of CPU: the last 42,600 of a long crawl took 30 s."""
    crawler = get_crawler(Learning, {**PROJECT, "JOBDIR": str(tmp_path) if jobdir else None})
    crawler.spider = spider = Learning()
    scheduler = TopicScheduler.from_crawler(crawler)
    scheduler.open(spider)
    for n in range(100):
        scheduler.enqueue_request(
            Request(f"http://127.0.0.1/dead/{n}.html", meta={"topic_score": 0.9})
        )
    scheduler.enqueue_request(Request("http://127.0.0.1/live/a.html", meta={"topic_score": 0.1}))
    for _ in range(spider.patterns.noise_after):
        spider.patterns.record(template("http://127.0.0.1/dead/999.html"), False)
    served = [request.url for request in iter(scheduler.next_request, None)]
    scheduler.close("finished")
    assert served == ["http://127.0.0.1/live/a.html"]
    assert crawler.stats.get_value("topic/noise_url") == 100


def test_with_noise_urls_kept_every_request_leaves_it(tmp_path):
    crawler = get_crawler(Learning, {**PROJECT, "TOPIC_DROP_NOISE_URLS": False})
    crawler.spider = spider = Learning()
    scheduler = TopicScheduler.from_crawler(crawler)
    scheduler.open(spider)
    scheduler.enqueue_request(Request("http://127.0.0.1/dead/1.html", meta={"topic_score": 0.9}))
    for _ in range(spider.patterns.noise_after):
        spider.patterns.record(template("http://127.0.0.1/dead/999.html"), False)
    assert scheduler.next_request().url == "http://127.0.0.1/dead/1.html"
    scheduler.close("finished")
