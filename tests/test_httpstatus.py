import pytest

from topicspider.httpstatus import status_message


@pytest.mark.parametrize(
    ("status", "said"),
    [
        (429, "429 Too Many Requests"),  # Scrapy: "429 Unknown Status"
        (451, "451 Unavailable For Legal Reasons"),
        (404, "404 Not Found"),
        (503, "503 Service Unavailable"),
        (520, "520 Unknown Status"),  # no standard name: as Scrapy says it
    ],
)
def test_a_status_is_said_by_its_name(status, said):
    assert status_message(status) == said
