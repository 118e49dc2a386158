"""MYSQL_URL: parsed into connection arguments, shown only with its password masked."""

from __future__ import annotations

import doctest

import pytest

from topicspider.exceptions import ConfigError
from topicspider.mysql import url as url_module
from topicspider.mysql.url import MySQLUrl


def test_doctests():
    assert doctest.testmod(url_module).failed == 0


def test_parses_host_port_user_password_and_database():
    url = MySQLUrl.parse("mysql://spider:pa%2Fss%40word@db.example:3307/crawl")
    assert url.connect_kwargs() == {
        "host": "db.example",
        "port": 3307,
        "user": "spider",
        "password": "pa/ss@word",
        "database": "crawl",
        "charset": "utf8mb4",
    }


def test_defaults_to_port_3306_and_accepts_mariadb_scheme():
    url = MySQLUrl.parse("mariadb://spider@127.0.0.1/crawl")
    assert (url.port, url.password) == (3306, "")
    assert str(url) == "mysql://spider@127.0.0.1:3306/crawl"


@pytest.mark.parametrize(
    "raw",
    ["mysql://spider:hunter2-pw@127.0.0.1/crawl", "mysql://spider:hunter2-pw@[::1]:3306/crawl"],
)
def test_str_and_repr_mask_the_password(raw):
    url = MySQLUrl.parse(raw)
    assert url.password == "hunter2-pw"
    for shown in (str(url), repr(url), f"{url}", "%s" % url):  # noqa: UP031
        assert "hunter2-pw" not in shown
    assert str(url).startswith("mysql://spider:***@")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("mysql://spider:hunter2-pw@127.0.0.1:port/crawl", "not a valid URL"),
        ("mysql://spider:hunter2/pw@127.0.0.1/crawl", "not a valid URL"),
        ("postgres://spider:hunter2-pw@127.0.0.1/crawl", "expected mysql://"),
        ("spider:hunter2-pw@127.0.0.1/crawl", "expected mysql://"),
        ("mysql://:hunter2-pw@127.0.0.1/crawl", "expected mysql://"),
        ("mysql://spider:hunter2-pw@127.0.0.1/", "names no database"),
        ("mysql://spider:hunter2-pw@127.0.0.1/a/b", "names no database"),
        # The host left out: before, the whole URL was shown, password and all.
        ("mysql://spider:hunter2-pw/crawl", "not a valid URL"),
        ("mysql://spider:4711/crawl", "expected mysql://"),
        ("mysql://spider:hunter2-pw", "not a valid URL"),
    ],
)
def test_errors_say_what_is_wrong_without_the_password(raw, message):
    with pytest.raises(ConfigError, match=message) as info:
        MySQLUrl.parse(raw)
    assert "hunter2" not in str(info.value)
    assert "MYSQL_URL" in str(info.value)
