"""REDIS_URL in messages: the password masked, whatever the URL's mistakes."""

from __future__ import annotations

import doctest

import pytest

from topicspider.redis import connection
from topicspider.redis.connection import masked_url


def test_doctests():
    assert doctest.testmod(connection).failed == 0


@pytest.mark.parametrize(
    "url",
    [
        "redis://:hunter2-pw@127.0.0.1:6379/0",
        "redis://user:hunter2-pw@127.0.0.1:6379/0",
        "rediss://user:hunter2%2Fpw@[::1]:6379/0",
        "unix://:hunter2-pw@/run/redis.sock?db=1",
        "redis://:hunter2/pw@127.0.0.1/0",
        "redis://:hunter2#pw@127.0.0.1/0",
        "redis://:hunter2@pw@127.0.0.1/0",
        "redis://:x://hunter2-pw@127.0.0.1/0",
        "redis://hunter2-pw@127.0.0.1/0",
        "redis://hunter2/pw:x@127.0.0.1/0",
        ":hunter2-pw@127.0.0.1:6379",
    ],
)
def test_no_part_of_the_password_shows(url):
    shown = masked_url(url)
    assert "hunter2" not in shown
    assert "***@" in shown
    assert shown.endswith(url.rpartition("@")[2])
