"""MySQLPipeline against a real MariaDB started by the tests: what is stored, and that nothing
is lost when the database is away at the start, in the middle or at the end of a crawl."""

from __future__ import annotations

import doctest
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from urllib.parse import quote
from urllib.request import urlopen

import pymysql
import pytest
from pymysql.cursors import RE_INSERT_VALUES
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse
from scrapy.settings import Settings
from scrapy.utils.response import get_base_url
from scrapy.utils.test import get_crawler

from demo.crawl import topic_args
from demo.mariadb import MariaDB, free_port
from tests.httpserver import Handler, serving
from topicspider import settings as defaults
from topicspider.charset import decode
from topicspider.exceptions import ConfigError
from topicspider.mysql import schema
from topicspider.mysql.spool import Spool, read
from topicspider.mysql.url import MySQLUrl
from topicspider.pipelines.mysql import MySQLPipeline, check_settings
from topicspider.text import RegionMemory, extract_page

ROOT = Path(__file__).resolve().parents[1]


def test_doctests():
    assert doctest.testmod(schema).failed == 0


# --- helpers -----------------------------------------------------------------------------


def query(mysql_url: str, sql: str, *args) -> list[dict]:
    with (
        closing(
            pymysql.connect(**MySQLUrl.parse(mysql_url).connect_kwargs(), connect_timeout=5)
        ) as connection,
        connection.cursor(pymysql.cursors.DictCursor) as cursor,
    ):
        cursor.execute(sql, args)
        return list(cursor.fetchall())


def pages_by_url(mysql_url: str) -> dict[str, dict]:
    return {row["url"]: row for row in query(mysql_url, "SELECT * FROM pages")}


def read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def stats_from(log: str) -> dict[str, int]:
    """The ``mysql/*`` and ``topic/*`` counters of Scrapy's final stats dump."""
    found = {}
    for line in log.splitlines():
        line = line.strip(" {},")
        if line.startswith(("'mysql/", "'topic/", "'finish_reason'")):
            key, _, value = line.partition(": ")
            found[key.strip("'")] = value.strip("'")
    return {key: int(value) if value.isdigit() else value for key, value in found.items()}


def assert_no_secret(mysql_url: str, *outputs: str) -> None:
    """Neither the password of ``mysql_url`` nor its quoted form is in ``outputs``."""
    password = MySQLUrl.parse(mysql_url).password
    for output in outputs:
        for secret in (password, quote(password, safe="")):
            assert secret not in output


def assert_rows_equal_index(mysql_url: str, pages_dir: Path) -> list[dict]:
    index = read_jsonl(pages_dir / "index.jsonl")
    rows = pages_by_url(mysql_url)
    assert index
    assert sorted(rows) == sorted(line["url"] for line in index)
    for line in index:
        row = rows[line["url"]]
        for field in ("title", "relevance", "depth", "charset", "path", "parent_url"):
            assert row[field] == line[field], field
        assert row["fetched_at"].isoformat() + "+00:00" == line["fetched_at"]
    return index


# --- one process, items made up: what is stored and how ----------------------------------

STORE = """
import json, sys
from scrapy import Spider
from scrapy.core.engine import ExecutionEngine
from scrapy.crawler import CrawlerProcess
from scrapy.utils.project import get_project_settings
from topicspider.items import PageItem
from topicspider.signals import links_discovered

# A start() of items only: once it is done, nothing asks the engine whether the spider is idle
# until its heartbeat, every 5 s (not public API, pinned by the Scrapy version range like the
# scheduler's nextcall). Asked every 0.1 s, a run takes 1 s instead of 6.
ExecutionEngine._SLOT_HEARTBEAT_INTERVAL = 0.1

with open(sys.argv[1], encoding="utf-8") as file:
    plan = json.load(file)

class Store(Spider):
    name = "store"

    async def start(self):
        for step in plan["steps"]:
            if "links" in step:
                self.crawler.signals.send_catch_log(links_discovered, **step)
            else:
                yield PageItem(**{**step, "body": step["body"].encode("utf-8")})

settings = get_project_settings()
settings.setdict(plan["settings"], priority="cmdline")
process = CrawlerProcess(settings)
crawler = process.create_crawler(Store)
process.crawl(crawler, **plan["arguments"])
process.start()
print(json.dumps(crawler.stats.get_stats(), default=str))
"""


def page(path: str, **fields) -> dict:
    return {
        "url": f"http://127.0.0.1:8000/{path}",
        "title": "足球比赛",
        "text": "中国队今天赢了。",
        "body": "<p>x</p>",
        "charset": "utf-8",
        "relevance": 0.5,
        "depth": 1,
        "parent_url": "http://127.0.0.1:8000/",
        "fetched_at": "2024-05-01T12:00:00+00:00",
        **fields,
    }


def links(page_url: str, *anchors: str) -> dict:
    return {
        "page_url": page_url,
        "links": [
            {"url": f"{page_url}#{n}", "anchor": anchor, "score": 0.25 * n, "followed": n % 2 == 0}
            for n, anchor in enumerate(anchors)
        ],
    }


def store(
    tmp_path: Path, mysql_url: str, *steps: dict, job: str | None = None, **settings
) -> tuple[dict, str]:
    """Run the steps through the project's pipelines; ``job``: as scrapyd's job of that id."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "steps": steps,
                "arguments": {"_job": job} if job else {},
                "settings": {
                    "MYSQL_URL": mysql_url,
                    "MYSQL_SPOOL_DIR": str(tmp_path / "spool"),
                    "TOPIC_PAGES_DIR": str(tmp_path / "pages"),
                    "TOPIC_PROGRESS_INTERVAL": 0,
                    "LOG_LEVEL": "INFO",
                    **settings,
                },
            }
        ),
        "utf-8",
    )
    result = subprocess.run(
        [sys.executable, "-c", STORE, str(plan)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert_no_secret(mysql_url, result.stdout, result.stderr)
    return json.loads(result.stdout.splitlines()[-1]), result.stderr


HOSTILE = [
    "'; DROP TABLE pages; --",
    'Robert"); DELETE FROM links; -- \\',
    "it's 100% \\' %s %(url)s ` `pages`",
    "goal ⚽ 😀 𠀀 (4-byte UTF-8)",
    "nul \x00 and tab \t and newline \n",
]


def test_hostile_strings_are_stored_as_data_never_run(tmp_path, mysql_url):
    steps = [page(f"{n}.html", title=text, text=text * 3) for n, text in enumerate(HOSTILE)]
    steps.append(page("quote'\"`.html", parent_url="http://127.0.0.1:8000/'; DROP TABLE links;--"))
    steps.append(links("http://127.0.0.1:8000/0.html", *HOSTILE))
    stats, _ = store(tmp_path, mysql_url, *steps)

    assert stats["mysql/stored"] == len(HOSTILE) + 1
    assert {
        row["Tables_in_" + mysql_url.rsplit("/", 1)[1]] for row in query(mysql_url, "SHOW TABLES")
    } == {"pages", "links"}
    rows = pages_by_url(mysql_url)
    for step in steps[:-1]:
        row = rows[step["url"]]
        assert (row["title"], row["text"], row["parent_url"]) == (
            step["title"],
            step["text"],
            step["parent_url"],
        )
    anchors = [row["anchor"] for row in query(mysql_url, "SELECT anchor FROM links ORDER BY score")]
    assert anchors == HOSTILE


def test_lone_surrogates_are_replaced_and_pairs_joined(tmp_path, mysql_url):
    steps = [
        page("s.html", title="lone \ud800 high", text="lone \udfff low, pair \ud83d\ude00"),
        links("http://127.0.0.1:8000/s.html", "anchor \udc00"),
    ]
    store(tmp_path, mysql_url, *steps)
    [row] = query(mysql_url, "SELECT title, text FROM pages")
    assert row == {"title": "lone \ufffd high", "text": "lone \ufffd low, pair 😀"}
    assert query(mysql_url, "SELECT anchor FROM links") == [{"anchor": "anchor \ufffd"}]


def test_gbk_and_utf8_chinese_round_trip_exactly(tmp_path, mysql_url):
    chinese = "中国队在世界杯预选赛中以二比一战胜对手，球迷欢呼。「足球」《体育》—…"
    gbk_text = chinese.encode("gbk").decode("gb18030")
    rare = "𠀀𪚥 䶮 ﹏"  # outside GBK: four-byte GB18030, four-byte UTF-8
    steps = [
        page("gbk.html", title=gbk_text[:6], text=gbk_text, charset="gb18030"),
        page("utf8.html", title=chinese[:6], text=chinese + rare),
        page("rare.html", title=rare, text=rare.encode("gb18030").decode("gb18030")),
    ]
    store(tmp_path, mysql_url, *steps)
    for step in steps:
        [row] = query(
            mysql_url,
            "SELECT title, text, HEX(text) AS hex, CHARSET(text) AS cs FROM pages WHERE url = %s",
            step["url"],
        )
        assert (row["title"], row["text"]) == (step["title"], step["text"])
        assert row["hex"] == step["text"].encode("utf-8").hex().upper()
        assert row["cs"] == "utf8mb4"


def test_recrawling_a_url_updates_its_row_never_duplicates_it(tmp_path, mysql_url):
    first = [
        page("a.html", title="old a"),
        page("b.html", title="old b"),
        page("a.html", title="newer a"),  # the same URL in one batch
        links("http://127.0.0.1:8000/a.html", "one", "two"),
    ]
    store(tmp_path / "1", mysql_url, *first, MYSQL_CRAWL_ID="first")
    second = [
        page("a.html", title="new a", relevance=0.9, depth=4, fetched_at="2024-06-01T08:00:00Z"),
        links("http://127.0.0.1:8000/a.html", "one again", "two again"),
        # in a later batch, fetched later (an older row is never written over a newer one)
        page("a.html", title="newest a", relevance=0.8, fetched_at="2024-06-01T09:00:00Z"),
    ]
    stats, _ = store(
        tmp_path / "2", mysql_url, *second, MYSQL_CRAWL_ID="second", MYSQL_BATCH_SIZE=1
    )

    assert stats["mysql/stored"] == 2
    rows = pages_by_url(mysql_url)
    assert len(rows) == 2
    assert [row["url"] for row in query(mysql_url, "SELECT url FROM pages ORDER BY id")] == [
        "http://127.0.0.1:8000/a.html",
        "http://127.0.0.1:8000/b.html",
    ]
    a = rows["http://127.0.0.1:8000/a.html"]
    assert (a["title"], a["relevance"], a["crawl_id"]) == ("newest a", 0.8, "second")
    assert rows["http://127.0.0.1:8000/b.html"]["crawl_id"] == "first"
    link_rows = query(mysql_url, "SELECT anchor, crawl_id FROM links ORDER BY score")
    assert link_rows == [
        {"anchor": "one again", "crawl_id": "second"},
        {"anchor": "two again", "crawl_id": "second"},
    ]


def test_urls_longer_than_their_column_that_differ_only_at_the_end_are_two_rows(
    tmp_path, mysql_url
):
    # Chinese, percent-encoded: 4,500 and 70,000 bytes; TEXT holds 65,535.
    stems = [f"http://127.0.0.1:8000/{quote('足球新闻' * n)}" for n in (125, 1945)]
    urls = [f"{stem}{end}.html" for stem in stems for end in ("a", "b")]
    steps = [page("", url=url, title=url[-6:]) for url in urls]
    steps.append({"page_url": urls[2], "links": [{"url": urls[2]}, {"url": urls[3]}]})
    stats, _ = store(tmp_path, mysql_url, *steps)

    assert stats["mysql/stored"] == 4
    for url in urls:
        [row] = query(
            mysql_url, "SELECT url, title FROM pages WHERE url_hash = UNHEX(SHA1(%s))", url
        )
        assert row == {"url": utf8_prefix(url, schema.TEXT_BYTES), "title": url[-6:]}
    assert len(query(mysql_url, "SELECT * FROM links")) == 2
    joined = query(mysql_url, "SELECT p.title FROM links l JOIN pages p ON p.url_hash = l.url_hash")
    assert sorted(row["title"] for row in joined) == ["a.html", "b.html"]


def test_rows_an_earlier_crawl_left_in_the_spool_are_written_first(tmp_path, mysql_url):
    spool = Spool(tmp_path / "spool")
    spool.open()
    item = page("left.html", title="left behind")
    spool.append([schema.page_record({**item, "path": None}, "earlier")])
    spool.close()
    stats, log = store(tmp_path, mysql_url, page("new.html"))
    assert sorted(pages_by_url(mysql_url)) == [
        "http://127.0.0.1:8000/left.html",
        "http://127.0.0.1:8000/new.html",
    ]
    assert stats["mysql/spooled"] == stats["mysql/replayed"] == 1
    assert "an earlier crawl left" in log
    assert list((tmp_path / "spool").glob("*.jsonl")) == []


def utf8_prefix(text: str, max_bytes: int) -> str:
    return text.encode("utf-8")[:max_bytes].decode("utf-8", "ignore")


def test_a_value_longer_than_its_column_is_cut_between_characters(tmp_path, mysql_url):
    title = "足球新闻" * 6000  # 72,000 bytes of UTF-8: an unclosed <title>
    anchor = "😀" * 20000  # 80,000 bytes: an unclosed <a>
    url = "http://127.0.0.1:8000/long.html"
    steps = [
        page("long.html", title=title, charset="utf-8" * 20),
        links(url, "short", anchor),
        page("after.html"),
    ]
    stats, _ = store(tmp_path, mysql_url, *steps, MYSQL_CRAWL_ID="c" * 255)

    rows = pages_by_url(mysql_url)
    assert sorted(rows) == ["http://127.0.0.1:8000/after.html", url]
    assert rows[url]["title"] == utf8_prefix(title, schema.TEXT_BYTES)
    assert len(rows[url]["title"].encode()) == 65_535  # 3-byte characters: 21,845 of them
    assert rows[url]["charset"] == ("utf-8" * 20)[:64]
    anchors = query(mysql_url, "SELECT anchor FROM links ORDER BY score")
    assert [row["anchor"] for row in anchors] == ["short", utf8_prefix(anchor, 65_535)]
    assert len(anchors[1]["anchor"].encode()) == 65_532  # a 4-byte emoji does not fit in 3
    assert stats["mysql/stored"] == 2
    assert stats["mysql/links"] == 2
    assert "mysql/errors" not in stats
    assert "mysql/rejected" not in stats
    assert list((tmp_path / "spool").glob("*.jsonl")) == []


def test_a_row_the_database_refuses_is_set_aside_and_the_rest_is_written(tmp_path, mysql_url):
    # A pages table someone made with a narrower title than ours: strict mode refuses more.
    narrow = schema.CREATE_TABLES[0].replace("title TEXT NOT NULL", "title VARCHAR(16) NOT NULL")
    query(mysql_url, narrow)
    steps = [
        page("a.html", title="short a"),
        page("refused.html", title="a title far too long for sixteen characters"),
        links("http://127.0.0.1:8000/refused.html", "one", "two"),
        page("b.html", title="short b"),
        *(page(f"later{n}.html", title=f"later {n}") for n in range(5)),
    ]
    stats, log = store(tmp_path, mysql_url, *steps, MYSQL_BATCH_SIZE=3, MYSQL_RETRY_DELAY=0.1)

    assert sorted(pages_by_url(mysql_url)) == sorted(
        step["url"] for step in steps if "url" in step and "refused" not in step["url"]
    )
    assert len(query(mysql_url, "SELECT * FROM links")) == 2
    assert stats["mysql/stored"] == 7
    assert stats["mysql/rejected"] == 1
    assert "mysql/errors" not in stats
    assert "mysql/unwritten" not in stats
    errors = [line for line in log.splitlines() if " ERROR: " in line]
    assert len(errors) == 1, log[-3000:]
    assert "refused the page http://127.0.0.1:8000/refused.html: (1406, " in errors[0]
    assert "Data too long for column 'title'" in errors[0]
    assert str(tmp_path / "spool" / "rejected.jsonl") in errors[0]
    assert list((tmp_path / "spool").glob("[0-9]*.jsonl")) == []
    [rejected] = read_jsonl(tmp_path / "spool" / "rejected.jsonl")
    assert rejected["row"]["url"] == "http://127.0.0.1:8000/refused.html"
    assert rejected["error"].startswith("(1406, ")


def as_root(mariadb: MariaDB, sql: str, *args) -> tuple:
    with closing(mariadb.admin()) as connection, connection.cursor() as cursor:
        cursor.execute(sql, args)
        return cursor.fetchall()


@pytest.fixture
def max_allowed_packet(mariadb):
    """Sets the session MariaDB's ``max_allowed_packet`` for the connections opened after;
    puts the server's own value back at the end of the test."""
    [[default]] = as_root(mariadb, "SELECT @@global.max_allowed_packet")
    yield lambda size: as_root(mariadb, "SET GLOBAL max_allowed_packet = %s", size)
    as_root(mariadb, "SET GLOBAL max_allowed_packet = %s", default)


@pytest.mark.parametrize("limit", [64 * 1024, 1024 * 1024])
def test_a_row_bigger_than_max_allowed_packet_is_set_aside_and_the_rest_is_written(
    tmp_path, mysql_url, max_allowed_packet, limit
):
    max_allowed_packet(limit)
    quarter = "足" * (limit // 12)  # a quarter of the packet: a batch of four does not fit in one
    steps = [
        *(page(f"fits{n}.html", text=f"{quarter}{n}") for n in range(4)),
        page("huge.html", text="a" * 2 * limit),  # fits in MEDIUMTEXT, never in one packet
        links("http://127.0.0.1:8000/fits0.html", "one", "two"),
        *(page(f"later{n}.html") for n in range(3)),
    ]
    stats, log = store(
        tmp_path,
        mysql_url,
        *steps,
        MYSQL_BATCH_SIZE=5,
        MYSQL_RETRY_DELAY=0.1,
        MYSQL_CLOSE_TIMEOUT=2,
    )

    rows = pages_by_url(mysql_url)
    assert sorted(rows) == sorted(
        step["url"] for step in steps if "url" in step and "huge" not in step["url"]
    )
    for n in range(4):
        assert rows[f"http://127.0.0.1:8000/fits{n}.html"]["text"] == f"{quarter}{n}"
    assert len(query(mysql_url, "SELECT * FROM links")) == 2
    assert stats["mysql/stored"] == 7
    assert stats["mysql/links"] == 2
    assert stats["mysql/rejected"] == 1
    assert "mysql/errors" not in stats
    assert "mysql/unwritten" not in stats
    errors = [line for line in log.splitlines() if " ERROR: " in line]
    assert len(errors) == 1, log[-3000:]
    assert "refused the page http://127.0.0.1:8000/huge.html: (1153, " in errors[0]
    assert f"the server's max_allowed_packet is {limit}" in errors[0]
    assert str(tmp_path / "spool" / "rejected.jsonl") in errors[0]
    assert list((tmp_path / "spool").glob("[0-9]*.jsonl")) == []
    [rejected] = read_jsonl(tmp_path / "spool" / "rejected.jsonl")
    assert rejected["row"]["text"] == "a" * 2 * limit
    assert rejected["error"].startswith("(1153, ")


def test_a_row_that_just_fits_max_allowed_packet_is_written_a_byte_more_is_not(
    mysql_url, max_allowed_packet
):
    max_allowed_packet(64 * 1024)
    pages = schema.TABLES[schema.PAGES]
    connection = pymysql.connect(**MySQLUrl.parse(mysql_url).connect_kwargs(), connect_timeout=5)
    with closing(connection), connection.cursor() as cursor:

        def upsert_bytes(record: dict) -> int:
            sql = cursor.mogrify(pages.upsert, pages.parameters(record["row"]))
            return len(sql.encode("utf-8"))

        records = []
        for name, extra in (("fits", 0), ("over", 1)):
            empty = record(f"{name}.html", text="")
            # The packet, a command byte and the statement, must be shorter than the limit.
            text = "a" * (64 * 1024 - 2 - upsert_bytes(empty) + extra)
            records.append(record(f"{name}.html", text=text))
        assert [upsert_bytes(r) + 1 for r in records] == [64 * 1024 - 1, 64 * 1024]

        schema.create_tables(cursor)
        written = schema.write(cursor, records)
        connection.commit()
    assert written.counts == {schema.PAGES: 1}
    [refused] = written.refused
    assert str(refused) == "the page http://127.0.0.1:8000/over.html"
    assert refused.error.startswith("(1153, ")
    assert list(pages_by_url(mysql_url)) == ["http://127.0.0.1:8000/fits.html"]

    # Sent anyway, the server drops the connection: the limit is the server's, to the byte.
    connection = pymysql.connect(**MySQLUrl.parse(mysql_url).connect_kwargs(), connect_timeout=5)
    with (
        closing(connection),
        connection.cursor() as cursor,
        pytest.raises(pymysql.err.OperationalError) as dropped,
    ):
        cursor.execute(pages.upsert, pages.parameters(records[1]["row"]))
    assert dropped.value.args[0] in (1153, 2006, 2013)


def test_upserts_go_as_multi_row_statements():
    for table in schema.TABLES.values():
        assert RE_INSERT_VALUES.match(table.upsert), "executemany would send one row at a time"


PROJECT = {name: value for name, value in vars(defaults).items() if name.isupper()}


def test_without_mysql_url_the_pipeline_is_off():
    """Whatever the other ``MYSQL_*`` settings (a project of Scrapy's settings alone has
    none); ``scrapy crawl`` checks them as it starts."""
    with pytest.raises(NotConfigured):
        MySQLPipeline.from_crawler(get_crawler(settings_dict={"MYSQL_URL": ""}))


def test_the_default_mysql_settings_pass():
    check_settings(Settings(PROJECT))
    check_settings(Settings({**PROJECT, "MYSQL_URL": "mysql://u:p@127.0.0.1/db"}))
    check_settings(Settings({**PROJECT, "MYSQL_CLOSE_TIMEOUT": "0", "MYSQL_BATCH_SIZE": "1"}))


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("MYSQL_TIMEOUT", "0", "MYSQL_TIMEOUT=0: expected 0 < it <= 31536000 (seconds)"),
        ("MYSQL_TIMEOUT", "nan", "MYSQL_TIMEOUT='nan': expected a finite number"),
        ("MYSQL_TIMEOUT", "1e12", "MYSQL_TIMEOUT=1e+12: expected 0 < it <= 31536000"),
        ("MYSQL_CONNECT_TIMEOUT", "0", "MYSQL_CONNECT_TIMEOUT=0: expected 0 < it"),
        ("MYSQL_FLUSH_INTERVAL", "-1", "MYSQL_FLUSH_INTERVAL=-1: expected 0 < it"),
        ("MYSQL_FLUSH_INTERVAL", "0", "MYSQL_FLUSH_INTERVAL=0: expected 0 < it"),
        ("MYSQL_RETRY_DELAY", "0", "MYSQL_RETRY_DELAY=0: expected 0 < it"),
        ("MYSQL_RETRY_MAX_DELAY", "0.5", "MYSQL_RETRY_MAX_DELAY=0.5: expected MYSQL_RETRY_DELAY"),
        ("MYSQL_CLOSE_TIMEOUT", "-1", "MYSQL_CLOSE_TIMEOUT=-1: expected 0 <= it"),
        ("MYSQL_BATCH_SIZE", "0", "MYSQL_BATCH_SIZE=0: expected at least 1"),
        ("MYSQL_BATCH_SIZE", "many", "MYSQL_BATCH_SIZE='many': expected a whole number"),
        ("MYSQL_TIMEOUT", "30s", "MYSQL_TIMEOUT='30s': expected a finite number"),
        ("MYSQL_SPOOL_DIR", "", "MYSQL_SPOOL_DIR is empty"),
        ("MYSQL_CRAWL_ID", "x" * 256, "MYSQL_CRAWL_ID='xxxxxxxxxxxxxxxxxxxx'…: expected at most"),
        # GBK bytes under a UTF-8 locale: before, every row failed to spool, and none was said
        (
            "MYSQL_CRAWL_ID",
            "足球".encode("gbk").decode("utf-8", "surrogateescape"),
            "MYSQL_CRAWL_ID='足球': not UTF-8 text",
        ),
        ("MYSQL_URL", "mysql://u:Sekr3t@127.0.0.1/", "MYSQL_URL 'mysql://***@127.0.0.1/' names"),
    ],
)
def test_a_mysql_setting_out_of_range_is_named(name, value, message):
    with pytest.raises(ConfigError) as error:
        check_settings(Settings({**PROJECT, name: value}))
    assert str(error.value).startswith(message)


def test_building_the_pipeline_does_not_connect(tmp_path):
    closed_port = free_port()
    settings = {
        **{name: value for name, value in PROJECT.items() if name.startswith("MYSQL_")},
        "MYSQL_URL": f"mysql://u:p@127.0.0.1:{closed_port}/db",
        "MYSQL_SPOOL_DIR": str(tmp_path / "spool"),
    }
    pipeline = MySQLPipeline.from_crawler(get_crawler(settings_dict=settings))
    assert pipeline.pool is None
    assert not (tmp_path / "spool").exists()


# --- `scrapy crawl topic` on the fixture site ---------------------------------------------


def scrapy(
    *args: str, env: dict | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def crawl_command(site, site_url: str, out: Path, *settings: str) -> list[str]:
    command = [
        "crawl",
        "topic",
        "-a",
        f"seeds={site_url}{site.seed_path}",
        "-a",
        "keywords=sports",
        "-s",
        f"TOPIC_PAGES_DIR={out / 'pages'}",
        "-s",
        f"TOPIC_FETCH_LOG={out / 'fetch.jsonl'}",
        "-s",
        f"MYSQL_SPOOL_DIR={out / 'spool'}",
        "-s",
        "TOPIC_PROGRESS_INTERVAL=0",
        "-s",
        "LOG_LEVEL=DEBUG",
    ]
    for setting in settings:
        command += ["-s", setting]
    return command


def extracted(site, site_url: str, path: str) -> tuple[str, str]:
    """Title and text of a served page, as the spider extracts them: after the seed, which
    shows it the footer every page has (left out of the text of the pages after it)."""
    memory = RegionMemory()
    for served in (site.seed_path, path):
        body = urlopen(f"{site_url}{served}").read()  # noqa: S310 - local fixture server
        content_type = site.headers.get(served, {}).get("Content-Type", "text/html")
        charset, _ = decode(body, content_type)
        response = HtmlResponse(f"{site_url}{served}", body=body, encoding=charset)
        page = extract_page(response.selector.root, get_base_url(response), memory=memory)
    return page.title, page.body


def test_crawl_rows_equal_the_filesystem_index(site, site_url, tmp_path, mysql_url):
    result = scrapy(
        *crawl_command(site, site_url, tmp_path), env={"TOPICSPIDER_MYSQL_URL": mysql_url}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert_no_secret(mysql_url, result.stdout, result.stderr)
    assert str(MySQLUrl.parse(mysql_url)) in result.stderr

    index = assert_rows_equal_index(mysql_url, tmp_path / "pages")
    stats = stats_from(result.stderr)
    assert stats["mysql/stored"] == stats["topic/stored"] == len(index)
    assert "mysql/spooled" not in stats
    assert "mysql/errors" not in stats
    assert list((tmp_path / "spool").glob("*.jsonl")) == []

    rows = pages_by_url(mysql_url)
    gbk = [path for path in site.gbk_pages if f"{site_url}{path}" in rows]
    assert gbk, "no GBK page was stored"
    for path in gbk:
        row = rows[f"{site_url}{path}"]
        assert row["charset"] == "gb18030"
        assert row["title"] == site.titles[path]
        assert (row["title"], row["text"]) == extracted(site, site_url, path)

    # The frontier history: every stored page was found through a link recorded in `links`.
    edges = {
        (row["page_url"], row["url"]) for row in query(mysql_url, "SELECT page_url, url FROM links")
    }
    assert stats["mysql/links"] == len(edges)
    for line in index:
        if line["parent_url"]:
            assert (line["parent_url"], line["url"]) in edges
    fetched = {line["url"] for line in read_jsonl(tmp_path / "fetch.jsonl")}
    assert {page_url for page_url, _ in edges} <= fetched


def test_unreachable_database_at_start_stops_the_crawl_with_one_error(
    site, site_url, tmp_path, mysql_password
):
    closed = f"mysql://topicspider:{quote(mysql_password, safe='')}@127.0.0.1:{free_port()}/crawl"
    result = scrapy(*crawl_command(site, site_url, tmp_path, f"MYSQL_URL={closed}"))
    assert_no_secret(closed, result.stdout, result.stderr)
    errors = [line for line in result.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1, result.stderr[-3000:]
    assert "Cannot use the MySQL database mysql://topicspider:***@127.0.0.1:" in errors[0]
    assert "Connection refused" in errors[0]
    assert "the crawl does not start" in errors[0]
    assert "Traceback" not in result.stderr
    assert stats_from(result.stderr)["finish_reason"] == "mysql_unavailable"
    assert result.returncode == 1
    assert "downloader/request_count" not in result.stderr
    assert read_jsonl(tmp_path / "fetch.jsonl") == []


def test_a_wrong_password_is_reported_without_any_password(site, site_url, tmp_path, mariadb):
    wrong = f"mysql://topicspider:Wr0ng-Secret-99@127.0.0.1:{mariadb.port}/crawl"
    result = scrapy(*crawl_command(site, site_url, tmp_path, f"MYSQL_URL={wrong}"))
    assert_no_secret(wrong, result.stdout, result.stderr)
    assert_no_secret(mariadb.url(), result.stdout, result.stderr)
    assert "Access denied for user 'topicspider'" in result.stderr
    assert stats_from(result.stderr)["finish_reason"] == "mysql_unavailable"


def older_tables(mysql_url: str) -> None:
    """``pages`` and ``links`` as an older version made them: columns missing, a row in."""
    query(mysql_url, schema.CREATE_TABLES[0].replace("    parent_url TEXT NULL,\n", ""))
    query(mysql_url, schema.CREATE_TABLES[1].replace("    anchor TEXT NOT NULL,\n", ""))
    old = record("old.html")["row"]
    connection = pymysql.connect(**MySQLUrl.parse(mysql_url).connect_kwargs(), connect_timeout=5)
    with closing(connection), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO pages (url_hash, url, title, relevance, depth, `charset`, `text`, "
            "fetched_at, crawl_id) VALUES (UNHEX(SHA1(%s)), %s, 'old', 0.5, 1, 'utf-8', '', "
            "%s, 'old')",
            (old["url"], old["url"], old["fetched_at"]),
        )
        connection.commit()


def test_a_table_an_older_version_made_stops_the_crawl_with_the_fix_in_one_line(
    site, site_url, tmp_path, mysql_url
):
    older_tables(mysql_url)
    result = scrapy(*crawl_command(site, site_url, tmp_path / "1", f"MYSQL_URL={mysql_url}"))
    assert result.returncode == 1
    assert_no_secret(mysql_url, result.stdout, result.stderr)
    errors = [line for line in result.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1, result.stderr[-3000:]
    assert "Cannot use the MySQL database mysql://topicspider:***@127.0.0.1:" in errors[0]
    assert "pages has no column parent_url, links has no column anchor" in errors[0]
    assert errors[0].endswith("or use a new database; the crawl does not start")
    assert "Traceback" not in result.stderr
    assert stats_from(result.stderr)["finish_reason"] == "mysql_unavailable"
    assert read_jsonl(tmp_path / "1" / "fetch.jsonl") == []

    # What the line says to run makes the tables usable, the rows in them kept.
    for statement in re.findall(r'"((?:ALTER TABLE|UPDATE) [^"]+)"', errors[0]):
        query(mysql_url, statement)
    result = scrapy(*crawl_command(site, site_url, tmp_path / "2", f"MYSQL_URL={mysql_url}"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "mysql/errors" not in stats_from(result.stderr)
    rows = pages_by_url(mysql_url)
    assert rows.pop("http://127.0.0.1:8000/old.html")["title"] == "old"
    assert sorted(rows) == sorted(
        line["url"] for line in read_jsonl(tmp_path / "2" / "pages" / "index.jsonl")
    )


def writer_account(
    mariadb: MariaDB, mysql_url: str, password: str, grants: str = "SELECT, INSERT, UPDATE"
) -> str:
    """The URL of an account with ``grants`` on ``mysql_url``'s database: by default, one
    that may read and write, not create."""
    database = mysql_url.rsplit("/", 1)[1]
    user = f"{''.join(grant[0] for grant in grants.split(', ')).lower()}_{database[-12:]}"
    with closing(mariadb.admin()) as connection, connection.cursor() as cursor:
        cursor.execute("CREATE USER %s@'127.0.0.1' IDENTIFIED BY %s", (user, password))
        cursor.execute(f"GRANT {grants} ON `{database}`.* TO %s@'127.0.0.1'", (user,))
    return mysql_url.replace(f"{mariadb.user}:", f"{user}:", 1)


@pytest.mark.parametrize(
    ("grants", "denied"), [("SELECT", "INSERT, UPDATE"), ("SELECT, INSERT", "UPDATE")]
)
def test_an_account_that_may_not_write_stops_the_crawl_in_one_line(
    site, site_url, tmp_path, mysql_url, mariadb, mysql_password, grants, denied
):
    """Before, such an account crawled to the end with exit status 0 and stored no row:
    every write was refused, and retried as if the database were away."""
    for statement in schema.CREATE_TABLES:
        query(mysql_url, statement)
    account = writer_account(mariadb, mysql_url, mysql_password, grants)
    result = scrapy(
        *crawl_command(site, site_url, tmp_path), env={"TOPICSPIDER_MYSQL_URL": account}
    )
    assert result.returncode == 1
    [error] = [line for line in result.stderr.splitlines() if "ERROR" in line]
    assert f"{denied} command denied to user" in error
    assert error.endswith(
        "grant the account SELECT, INSERT and UPDATE on the database; the crawl does not start"
    )
    assert stats_from(result.stderr)["finish_reason"] == "mysql_unavailable"
    assert read_jsonl(tmp_path / "fetch.jsonl") == []
    assert_no_secret(account, result.stdout, result.stderr)


def test_an_account_without_create_writes_into_tables_that_exist(
    site, site_url, tmp_path, mysql_url, mariadb, mysql_password
):
    """Before, ``CREATE TABLE IF NOT EXISTS`` was refused such an account (1142) even for
    tables that exist, and the crawl did not start."""
    writer = writer_account(mariadb, mysql_url, mysql_password)
    result = scrapy(
        *crawl_command(site, site_url, tmp_path / "1"), env={"TOPICSPIDER_MYSQL_URL": writer}
    )
    assert result.returncode == 1
    [error] = [line for line in result.stderr.splitlines() if "ERROR" in line]
    assert error.endswith(
        "this account may not create the missing tables pages and links: grant it CREATE on"
        " the database, or run one crawl as an account that may (once they exist the crawl"
        " needs SELECT, INSERT and UPDATE); the crawl does not start"
    )
    assert_no_secret(writer, result.stdout, result.stderr)

    for statement in schema.CREATE_TABLES:
        query(mysql_url, statement)
    result = scrapy(
        *crawl_command(site, site_url, tmp_path / "2"), env={"TOPICSPIDER_MYSQL_URL": writer}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    index = assert_rows_equal_index(writer, tmp_path / "2" / "pages")
    assert stats_from(result.stderr)["mysql/stored"] == len(index) > 0

    replayed = scrapy(
        "mysql-replay",
        "-s",
        f"MYSQL_SPOOL_DIR={tmp_path / '2' / 'spool'}",
        env={"TOPICSPIDER_MYSQL_URL": writer},
    )
    assert replayed.returncode == 0, replayed.stderr


def test_a_table_without_its_unique_key_is_no_table_to_write_into(tmp_path, mysql_url):
    """Without ``url_hash``'s unique key every write adds a row. Before, the line said to
    add the column only, and the crawl then wrote each page as often as it stored it."""
    query(mysql_url, schema.CREATE_TABLES[1])
    no_hash = (
        schema.CREATE_TABLES[0]
        .replace("    url_hash BINARY(20) NOT NULL COMMENT 'UNHEX(SHA1(url))',\n", "")
        .replace("    UNIQUE KEY url_hash (url_hash),\n", "")
    )
    query(mysql_url, no_hash)
    query(
        mysql_url,
        "INSERT INTO pages (url, title, relevance, depth, `charset`, `text`, fetched_at,"
        " crawl_id) VALUES (%s, 'old', 0.5, 1, 'utf-8', '', '2024-01-01 00:00:00', 'old')",
        "http://127.0.0.1:8000/x.html",
    )
    old_spool(tmp_path / "spool", [record("x.html")], [record("y.html")], [record("y.html")])
    settings = ["-s", f"MYSQL_SPOOL_DIR={tmp_path / 'spool'}"]
    replayed = scrapy("mysql-replay", *settings, env={"TOPICSPIDER_MYSQL_URL": mysql_url})
    assert replayed.returncode == 1
    [line] = replayed.stderr.splitlines()
    assert "pages has no column url_hash, pages has no unique key url_hash: run" in line
    for statement in re.findall(r'"((?:ALTER TABLE|UPDATE) [^"]+)"', line):
        query(mysql_url, statement)
    replayed = scrapy("mysql-replay", *settings, env={"TOPICSPIDER_MYSQL_URL": mysql_url})
    assert replayed.returncode == 0, replayed.stderr
    urls = [row["url"] for row in query(mysql_url, "SELECT url FROM pages ORDER BY url")]
    assert urls == ["http://127.0.0.1:8000/x.html", "http://127.0.0.1:8000/y.html"]


def test_a_column_the_crawl_does_not_fill_is_said_before_any_row_is_refused(tmp_path, mysql_url):
    """Before, the crawl started and MySQL refused every page (1364), each set aside."""
    query(mysql_url, schema.CREATE_TABLES[1])
    query(
        mysql_url,
        schema.CREATE_TABLES[0].replace(
            "    crawl_id VARCHAR", "    site_id INT NOT NULL,\n    crawl_id VARCHAR"
        ),
    )
    old_spool(tmp_path / "spool", [record("x.html")])
    settings = ["-s", f"MYSQL_SPOOL_DIR={tmp_path / 'spool'}"]
    replayed = scrapy("mysql-replay", *settings, env={"TOPICSPIDER_MYSQL_URL": mysql_url})
    assert replayed.returncode == 1
    [line] = replayed.stderr.splitlines()
    assert "pages has site_id NOT NULL without a default, which the crawl does not fill" in line
    assert "give pages.site_id a default or let it be NULL" in line
    assert len(list((tmp_path / "spool").glob("*.jsonl"))) == 1


def test_a_replayed_spool_leaves_a_newer_row_as_it_is(tmp_path, mysql_url):
    """A job killed while the database was away left its rows; a later crawl stored the
    same page. Before, the replay its log asks for wrote the older row over the newer."""
    query(mysql_url, schema.CREATE_TABLES[0])
    query(mysql_url, schema.CREATE_TABLES[1])
    newer = record("x.html", title="newer", fetched_at="2024-06-07 00:00:00")
    old_spool(tmp_path / "newer", [newer])
    old_spool(tmp_path / "older", [record("x.html", title="older"), record("y.html")])
    for folder in ("newer", "older"):
        settings = ["-s", f"MYSQL_SPOOL_DIR={tmp_path / folder}"]
        replayed = scrapy("mysql-replay", *settings, env={"TOPICSPIDER_MYSQL_URL": mysql_url})
        assert replayed.returncode == 0, replayed.stderr
    rows = pages_by_url(mysql_url)
    assert rows["http://127.0.0.1:8000/x.html"]["title"] == "newer"
    assert str(rows["http://127.0.0.1:8000/x.html"]["fetched_at"]) == "2024-06-07 00:00:00"
    assert rows["http://127.0.0.1:8000/y.html"]["title"] == "足球比赛"


def test_a_malformed_url_is_one_line_without_the_password(site_url):
    malformed = "mysql://topicspider:Sekr3t-99@127.0.0.1:port/crawl"
    result = scrapy(
        "crawl",
        "topic",
        "-a",
        f"seeds={site_url}/",
        "-a",
        "keywords=sports",
        "-s",
        f"MYSQL_URL={malformed}",
    )
    assert result.returncode == 2
    assert "topicspider: error: MYSQL_URL 'mysql://***@" in result.stderr
    assert "Sekr3t-99" not in result.stdout + result.stderr
    assert "Spider opened" not in result.stderr


@pytest.mark.parametrize(
    "setting", ["MYSQL_TIMEOUT=0", "MYSQL_CONNECT_TIMEOUT=0", "MYSQL_FLUSH_INTERVAL=-1"]
)
def test_an_out_of_range_setting_stops_the_crawl_in_one_line(
    site, site_url, tmp_path, mysql_url, setting
):
    result = scrapy(*crawl_command(site, site_url, tmp_path, f"MYSQL_URL={mysql_url}", setting))
    assert result.returncode == 2
    name, value = setting.split("=")
    errors = [line for line in result.stderr.splitlines() if "error" in line.lower()]
    assert errors == [f"topicspider: error: {name}={value}: expected 0 < it <= 31536000 (seconds)"]
    assert "Traceback" not in result.stderr
    assert "Spider opened" not in result.stderr
    assert not (tmp_path / "spool").exists()


class UnclosedTags(Handler):
    """A site whose home page links to a page with an unclosed ``<title>`` (a 72 kB title)
    and has an unclosed ``<a>`` (a 72 kB anchor)."""

    ARTICLE = "足球比赛今天举行，球迷非常激动，足球队赢得比赛。" * 10
    BIG = "足球比赛新闻报道" * 3000

    def do_GET(self) -> None:
        page = self.path.lstrip("/") or "index.html"
        head = '<html><head><meta charset="utf-8">'
        if page == "index.html":
            items = "".join(f'<li><a href="good{n}.html">足球比赛 {n}</a></li>' for n in range(4))
            body = (
                f"<title>足球比赛</title></head><body><p>{self.ARTICLE}</p>"
                f'<ul><li><a href="bad.html">足球比赛 新闻</a></li>{items}</ul>'
                f'<div><a href="more.html">更多 <p>{self.BIG}</p></div></body></html>'
            )
        elif page == "bad.html":
            body = f"<title>足球比赛 <body><p>{self.BIG}</p></body></html>"
        elif page.startswith(("good", "more")):
            # Each its own text, or the crawl stores only the first of near-duplicates.
            text = "".join(f"第{n}场{page}足球比赛" for n in range(40))
            body = f"<title>足球比赛 {page}</title></head><body><p>{text}</p></body></html>"
        else:
            self.send(b"", status=404)
            return
        self.send((head + body).encode("utf-8"), "text/html; charset=utf-8")


def test_a_page_with_an_unclosed_title_is_stored_and_so_are_the_pages_after_it(tmp_path, mysql_url):
    with serving(UnclosedTags) as base:
        result = scrapy(
            "crawl",
            "topic",
            "-a",
            f"seeds={base}/",
            "-a",
            "keywords=足球:3,比赛:2",
            "-s",
            f"TOPIC_PAGES_DIR={tmp_path / 'pages'}",
            "-s",
            f"MYSQL_SPOOL_DIR={tmp_path / 'spool'}",
            "-s",
            f"MYSQL_URL={mysql_url}",
            "-s",
            "TOPIC_THRESHOLD_MODE=fixed",
            "-s",
            "TOPIC_THRESHOLD=0.05",
            "-s",
            "MYSQL_FLUSH_INTERVAL=0.2",
            "-s",
            "MYSQL_CLOSE_TIMEOUT=2",
            "-s",
            "TOPIC_PROGRESS_INTERVAL=0",
        )
    assert result.returncode == 0, result.stderr[-3000:]
    index = read_jsonl(tmp_path / "pages" / "index.jsonl")
    rows = pages_by_url(mysql_url)
    assert sorted(rows) == sorted(line["url"] for line in index)
    assert len(rows) == 7
    title = next(line["title"] for line in index if line["url"] == f"{base}/bad.html")
    assert len(title.encode()) > 70_000
    assert rows[f"{base}/bad.html"]["title"] == utf8_prefix(title, 65_535)
    [anchor] = query(mysql_url, "SELECT anchor FROM links WHERE url = %s", f"{base}/more.html")
    assert anchor["anchor"].startswith("更多 足球比赛新闻报道")
    assert 65_530 < len(anchor["anchor"].encode()) <= 65_535
    stats = stats_from(result.stderr)
    assert stats["mysql/stored"] == stats["topic/stored"] == 7
    assert "mysql/errors" not in stats
    assert "mysql/rejected" not in stats
    assert list((tmp_path / "spool").glob("*.jsonl")) == []


# --- the database goes away ------------------------------------------------------------


def wait_for(condition, timeout: float = 60, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def wait_for_more_fetches(out: Path, more: int, what: str) -> None:
    """Wait until the crawl logging to ``out/fetch.jsonl`` has fetched ``more`` pages since now."""
    fetched = len(read_jsonl(out / "fetch.jsonl"))
    wait_for(lambda: len(read_jsonl(out / "fetch.jsonl")) >= fetched + more, what=what)


def stored_count(mysql_url: str) -> int:
    try:
        return query(mysql_url, "SELECT COUNT(*) AS n FROM pages")[0]["n"]
    except pymysql.Error:
        return 0


def start_slow_crawl(
    site, site_url, out: Path, mysql_url: str, *settings: str, job: str | None = None
) -> subprocess.Popen:
    """A crawl that lasts several seconds, logging to ``out/crawl.log``; ``job``: as
    scrapyd runs the job of that id."""
    command = crawl_command(
        site,
        site_url,
        out,
        f"MYSQL_URL={mysql_url}",
        "DOWNLOAD_DELAY=0.15",
        "CONCURRENT_REQUESTS_PER_DOMAIN=1",
        "MYSQL_FLUSH_INTERVAL=0.2",
        *settings,
    )
    if job:
        command += ["-a", f"_job={job}"]
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "crawl.log", "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "scrapy", *command],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=log,
            stderr=subprocess.STDOUT,
        )


@contextmanager
def writing_crawl(
    site, site_url, out: Path, mysql_url: str, *settings: str, job: str | None = None
) -> Iterator[subprocess.Popen]:
    """:func:`start_slow_crawl`, once its first rows are in MySQL; killed on the way out
    if it still runs."""
    crawl = start_slow_crawl(site, site_url, out, mysql_url, *settings, job=job)
    try:
        wait_for(lambda: stored_count(mysql_url) >= 2, what="the first rows")
        yield crawl
    finally:
        crawl.kill()


def test_database_lost_mid_crawl_every_page_arrives(site, site_url, tmp_path, lost_mariadb):
    lost_mariadb.start()
    mysql_url = lost_mariadb.create_database("outage")
    with writing_crawl(
        site, site_url, tmp_path, mysql_url, "MYSQL_RETRY_DELAY=0.2", "MYSQL_RETRY_MAX_DELAY=1"
    ) as crawl:
        lost_mariadb.stop()
        # The crawl goes on without the database.
        wait_for_more_fetches(tmp_path, 6, what="the crawl to go on")
        lost_mariadb.start()
        assert crawl.wait(timeout=120) == 0
    log = (tmp_path / "crawl.log").read_text("utf-8")
    assert_no_secret(mysql_url, log)
    assert "Traceback" not in log

    index = assert_rows_equal_index(mysql_url, tmp_path / "pages")
    stats = stats_from(log)
    assert stats["mysql/stored"] == len(index)
    assert stats["mysql/errors"] >= 1
    assert stats["mysql/spooled"] >= 1
    assert stats["mysql/replayed"] == stats["mysql/spooled"]
    assert "mysql/unwritten" not in stats
    assert log.count("The crawl goes on; rows wait in") == 1
    assert "is back" in log
    assert list((tmp_path / "spool").glob("*.jsonl")) == []


def test_a_hanging_database_does_not_hold_up_the_crawl(site, site_url, tmp_path, lost_mariadb):
    lost_mariadb.start()
    mysql_url = lost_mariadb.create_database("hanging")
    with writing_crawl(site, site_url, tmp_path, mysql_url) as crawl:
        os.kill(lost_mariadb.pid, signal.SIGSTOP)  # writes now wait, without an error
        try:
            wait_for_more_fetches(tmp_path, 8, what="pages fetched while the database hangs")
        finally:
            os.kill(lost_mariadb.pid, signal.SIGCONT)
        assert crawl.wait(timeout=120) == 0
    log = (tmp_path / "crawl.log").read_text("utf-8")
    assert_rows_equal_index(mysql_url, tmp_path / "pages")
    assert "mysql/errors" not in stats_from(log)


def test_a_second_ctrl_c_stops_the_crawl_at_once_while_the_database_hangs(
    site, site_url, tmp_path, lost_mariadb
):
    """Before, the process waited for adbapi's thread, stuck on the hanging server up to
    ``MYSQL_TIMEOUT`` (here 60 s). No row is lost: those not committed stay in the spool."""
    lost_mariadb.start()
    mysql_url = lost_mariadb.create_database("hung")
    with writing_crawl(site, site_url, tmp_path, mysql_url, "MYSQL_TIMEOUT=60") as crawl:
        os.kill(lost_mariadb.pid, signal.SIGSTOP)  # writes now wait, without an error
        try:
            wait_for_more_fetches(tmp_path, 4, what="pages fetched while the database hangs")
            crawl.send_signal(signal.SIGINT)
            time.sleep(1)
            crawl.send_signal(signal.SIGINT)
            assert crawl.wait(timeout=20) == 0
        finally:
            os.kill(lost_mariadb.pid, signal.SIGCONT)
    log = (tmp_path / "crawl.log").read_text("utf-8")
    assert "forcing unclean shutdown" in log
    replayed = mysql_replay(tmp_path / "spool", mysql_url)
    assert replayed.returncode == 0, replayed.stderr
    assert_rows_equal_index(mysql_url, tmp_path / "pages")


def test_what_the_database_never_took_is_replayed_by_command(
    site, site_url, tmp_path, lost_mariadb
):
    lost_mariadb.start()
    mysql_url = lost_mariadb.create_database("replay")
    with writing_crawl(site, site_url, tmp_path, mysql_url, "MYSQL_CLOSE_TIMEOUT=1") as crawl:
        lost_mariadb.stop()
        assert crawl.wait(timeout=120) == 0
    log = (tmp_path / "crawl.log").read_text("utf-8")
    assert_no_secret(mysql_url, log)
    stats = stats_from(log)
    index = read_jsonl(tmp_path / "pages" / "index.jsonl")
    assert 0 < stats["mysql/unwritten"] == len(index) - stats.get("mysql/stored", 0)
    assert "mysql-replay" in log
    assert list((tmp_path / "spool").glob("*.jsonl"))

    lost_mariadb.start()
    settings = ["-s", f"MYSQL_SPOOL_DIR={tmp_path / 'spool'}"]
    replayed = scrapy("mysql-replay", *settings, env={"TOPICSPIDER_MYSQL_URL": mysql_url})
    assert replayed.returncode == 0, replayed.stderr
    assert f"Replayed {stats['mysql/unwritten']} pages and " in replayed.stdout
    assert_no_secret(mysql_url, replayed.stdout, replayed.stderr)
    assert_rows_equal_index(mysql_url, tmp_path / "pages")
    assert list((tmp_path / "spool").glob("*.jsonl")) == []


def test_a_database_that_fails_only_as_the_crawl_closes_is_said_so(
    site, site_url, tmp_path, lost_mariadb
):
    lost_mariadb.start()
    mysql_url = lost_mariadb.create_database("closing")
    crawl = start_slow_crawl(
        site,
        site_url,
        tmp_path,
        mysql_url,
        "MYSQL_CLOSE_TIMEOUT=1",
        "MYSQL_FLUSH_INTERVAL=3600",  # the first write is the one at the close
        "MYSQL_BATCH_SIZE=100000",
    )
    try:
        wait_for_more_fetches(tmp_path, 2, what="the first pages")
        lost_mariadb.stop()
        assert crawl.wait(timeout=120) == 0
    finally:
        crawl.kill()
    log = (tmp_path / "crawl.log").read_text("utf-8")
    assert "The crawl goes on" not in log
    assert log.count("failed as the crawl closes: ") == 1
    assert f"MYSQL_CLOSE_TIMEOUT (1s) stay in {tmp_path / 'spool'}" in log
    index = read_jsonl(tmp_path / "pages" / "index.jsonl")
    assert stats_from(log)["mysql/unwritten"] == len(index) > 0


def test_insert_taken_away_and_given_back_mid_crawl_every_page_arrives(
    site, site_url, tmp_path, lost_mariadb, mysql_password
):
    """Before, the connection that was refused stayed in the pool, and MariaDB applies a
    database's grants to a session only at its next ``USE``: refused until the crawl ended."""
    lost_mariadb.start()
    mysql_url = lost_mariadb.create_database("regrant")
    user = "regrant"
    with closing(lost_mariadb.admin()) as connection, connection.cursor() as cursor:
        cursor.execute("CREATE USER %s@'127.0.0.1' IDENTIFIED BY %s", (user, mysql_password))
        cursor.execute("GRANT ALL ON `regrant`.* TO %s@'127.0.0.1'", (user,))
    writer = mysql_url.replace(f"{lost_mariadb.user}:", f"{user}:", 1)
    with writing_crawl(
        site, site_url, tmp_path, writer, "MYSQL_RETRY_DELAY=0.2", "MYSQL_RETRY_MAX_DELAY=1"
    ) as crawl:
        with closing(lost_mariadb.admin()) as connection, connection.cursor() as cursor:
            cursor.execute("REVOKE INSERT ON `regrant`.* FROM %s@'127.0.0.1'", (user,))
            cursor.execute("SELECT id FROM information_schema.PROCESSLIST WHERE USER = %s", (user,))
            for (session,) in cursor.fetchall():  # so that the next write is refused
                cursor.execute(f"KILL {session}")
        wait_for(
            lambda: "INSERT command denied" in (tmp_path / "crawl.log").read_text("utf-8"),
            what="a write refused",
        )
        with closing(lost_mariadb.admin()) as connection, connection.cursor() as cursor:
            cursor.execute("GRANT INSERT ON `regrant`.* TO %s@'127.0.0.1'", (user,))
        assert crawl.wait(timeout=120) == 0
    log = (tmp_path / "crawl.log").read_text("utf-8")
    assert_rows_equal_index(mysql_url, tmp_path / "pages")
    assert "is back" in log
    assert "mysql/unwritten" not in stats_from(log)


def test_a_database_dropped_and_made_again_mid_crawl_gets_its_tables_again(
    site, site_url, tmp_path, lost_mariadb
):
    """Before, the tables were made only as the spider opened, and every write after was
    refused (1146, no such table) until the crawl ended."""
    lost_mariadb.start()
    mysql_url = lost_mariadb.create_database("remade")
    with writing_crawl(
        site, site_url, tmp_path, mysql_url, "MYSQL_RETRY_DELAY=0.2", "MYSQL_RETRY_MAX_DELAY=1"
    ) as crawl:
        with closing(lost_mariadb.admin()) as connection, connection.cursor() as cursor:
            cursor.execute("DROP DATABASE remade")
        lost_mariadb.create_database("remade")
        fetched = len(read_jsonl(tmp_path / "fetch.jsonl"))
        assert crawl.wait(timeout=120) == 0
    log = (tmp_path / "crawl.log").read_text("utf-8")
    assert "mysql/unwritten" not in stats_from(log)
    stored = {line["url"] for line in read_jsonl(tmp_path / "pages" / "index.jsonl")}
    fetched_since = {row["url"] for row in read_jsonl(tmp_path / "fetch.jsonl")[fetched:]}
    assert stored & fetched_since, "no page was stored after the database was made again"
    assert stored & fetched_since <= set(pages_by_url(mysql_url))


def test_a_database_back_while_the_crawl_closes_takes_the_rows(
    site, site_url, tmp_path, lost_mariadb
):
    """Before, the write was retried at the delay the outage had grown to (30 s), past the
    close's wait, and the rows were left in the spool."""
    lost_mariadb.start()
    mysql_url = lost_mariadb.create_database("closeback")
    with writing_crawl(
        site, site_url, tmp_path, mysql_url, "MYSQL_RETRY_DELAY=0.2", "MYSQL_RETRY_MAX_DELAY=60"
    ) as crawl:
        lost_mariadb.stop()
        log = tmp_path / "crawl.log"
        wait_for(lambda: "Closing spider" in log.read_text("utf-8"), what="the crawl to close")
        lost_mariadb.start()
        assert crawl.wait(timeout=120) == 0
    log = (tmp_path / "crawl.log").read_text("utf-8")
    assert_rows_equal_index(mysql_url, tmp_path / "pages")
    assert "mysql/unwritten" not in stats_from(log)


def test_replay_without_a_database_keeps_the_spool(tmp_path, mysql_password):
    spool = Spool(tmp_path / "spool")
    spool.open()
    spool.append([schema.page_record({**page("x.html"), "path": None}, "c")])
    spool.close()
    closed = f"mysql://topicspider:{quote(mysql_password, safe='')}@127.0.0.1:{free_port()}/crawl"
    result = scrapy(
        "mysql-replay", "-s", f"MYSQL_SPOOL_DIR={tmp_path / 'spool'}", "-s", f"MYSQL_URL={closed}"
    )
    assert result.returncode == 1
    assert "topicspider: error: MySQL at mysql://topicspider:***@127.0.0.1:" in result.stderr
    assert_no_secret(closed, result.stdout, result.stderr)
    assert len(list((tmp_path / "spool").glob("*.jsonl"))) == 1


def mysql_replay(spool: Path, mysql_url: str, *options: str) -> subprocess.CompletedProcess:
    """``scrapy mysql-replay`` of the spool ``spool`` into ``mysql_url``."""
    return scrapy(
        "mysql-replay",
        *options,
        "-s",
        f"MYSQL_SPOOL_DIR={spool}",
        env={"TOPICSPIDER_MYSQL_URL": mysql_url},
    )


def old_spool(folder: Path, *segments: list[dict]) -> None:
    """A spool as an earlier version or crawl left it: records as they are, uncut."""
    spool = Spool(folder)
    spool.open()
    for records in segments:
        spool.append(records)
        spool.seal()
    spool.close()


def record(path: str, **fields) -> dict:
    return {
        "table": "pages",
        "row": {**schema.page_record({**page(path), "path": None}, "c")["row"], **fields},
    }


def test_replay_sets_a_refused_row_aside_and_writes_the_rest(tmp_path, mysql_url):
    long_title = "足球新闻" * 6000
    old_spool(
        tmp_path / "spool",
        [
            record("first.html"),
            record("long.html", title=long_title),  # as spooled before values were cut
            record("refused.html", depth=-1),  # INT UNSIGNED: out of range
            record("third.html"),
        ],
        [record("later.html")],
    )
    settings = ["-s", f"MYSQL_SPOOL_DIR={tmp_path / 'spool'}"]
    replayed = scrapy("mysql-replay", *settings, env={"TOPICSPIDER_MYSQL_URL": mysql_url})

    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout.startswith("Replayed 4 pages and 0 links from ")
    assert replayed.stdout.rstrip().endswith(
        f"; 1 refused, kept in {tmp_path / 'spool' / 'rejected.jsonl'}"
    )
    [line] = replayed.stderr.splitlines()
    assert line.startswith("topicspider: MySQL at mysql://topicspider:***@127.0.0.1:")
    assert "refused the page http://127.0.0.1:8000/refused.html: (1264, " in line
    assert line.endswith(f"the row is kept in {tmp_path / 'spool' / 'rejected.jsonl'}")
    rows = pages_by_url(mysql_url)
    assert sorted(rows) == [
        f"http://127.0.0.1:8000/{name}.html" for name in ("first", "later", "long", "third")
    ]
    assert rows["http://127.0.0.1:8000/long.html"]["title"] == utf8_prefix(long_title, 65_535)
    assert list((tmp_path / "spool").glob("[0-9]*.jsonl")) == []
    [rejected] = read_jsonl(tmp_path / "spool" / "rejected.jsonl")
    assert rejected["row"]["depth"] == -1

    again = scrapy("mysql-replay", *settings, env={"TOPICSPIDER_MYSQL_URL": mysql_url})
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("Replayed 0 pages and 0 links")


def test_replay_writes_the_rejected_rows_once_the_table_takes_them(tmp_path, mysql_url):
    """Before, nothing wrote them: the docs said to fix the table (or raise
    ``max_allowed_packet``), and ``mysql-replay`` then replayed 0 pages."""
    for statement in schema.CREATE_TABLES:
        query(mysql_url, statement)
    query(mysql_url, "ALTER TABLE pages MODIFY title VARCHAR(3)")
    old_spool(tmp_path / "spool", [record("short.html", title="足球"), record("long.html")])
    spool = tmp_path / "spool"
    replayed = mysql_replay(spool, mysql_url)
    assert replayed.returncode == 0, replayed.stderr
    assert sorted(pages_by_url(mysql_url)) == ["http://127.0.0.1:8000/short.html"]
    [rejected] = read_jsonl(spool / "rejected.jsonl")
    assert "Data too long for column 'title'" in rejected["error"]

    assert mysql_replay(spool, mysql_url).stdout.startswith("Replayed 0 pages")
    still = mysql_replay(spool, mysql_url, "--rejected")
    assert still.returncode == 0, still.stderr
    assert still.stdout.startswith("Replayed 0 pages and 0 links")
    assert len(read_jsonl(tmp_path / "spool" / "rejected.jsonl")) == 1

    query(mysql_url, "ALTER TABLE pages MODIFY title TEXT")
    written = mysql_replay(spool, mysql_url, "--rejected")
    assert written.returncode == 0, written.stderr
    assert written.stdout.startswith("Replayed 1 pages and 0 links")
    assert sorted(pages_by_url(mysql_url)) == [
        "http://127.0.0.1:8000/long.html",
        "http://127.0.0.1:8000/short.html",
    ]
    assert list((tmp_path / "spool").glob("*.jsonl")) == []


def test_replay_sets_a_row_bigger_than_max_allowed_packet_aside(
    tmp_path, mysql_url, max_allowed_packet
):
    max_allowed_packet(1024 * 1024)
    old_spool(
        tmp_path / "spool",
        [
            record("first.html"),
            record("huge.html", text="a" * 2 * 1024 * 1024),
            record("third.html"),
        ],
        [record("later.html")],
    )
    settings = ["-s", f"MYSQL_SPOOL_DIR={tmp_path / 'spool'}"]
    replayed = scrapy("mysql-replay", *settings, env={"TOPICSPIDER_MYSQL_URL": mysql_url})

    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout.startswith("Replayed 3 pages and 0 links from ")
    assert "; 1 refused, kept in " in replayed.stdout
    [line] = replayed.stderr.splitlines()
    assert "refused the page http://127.0.0.1:8000/huge.html: (1153, " in line
    assert "the server's max_allowed_packet is 1048576" in line
    assert sorted(pages_by_url(mysql_url)) == [
        f"http://127.0.0.1:8000/{name}.html" for name in ("first", "later", "third")
    ]
    assert list((tmp_path / "spool").glob("[0-9]*.jsonl")) == []
    [rejected] = read_jsonl(tmp_path / "spool" / "rejected.jsonl")
    assert rejected["row"]["url"] == "http://127.0.0.1:8000/huge.html"


def test_replay_into_a_table_an_older_version_made_says_what_to_do(tmp_path, mysql_url):
    older_tables(mysql_url)
    old_spool(tmp_path / "spool", [record("x.html")])
    settings = ["-s", f"MYSQL_SPOOL_DIR={tmp_path / 'spool'}"]
    replayed = scrapy("mysql-replay", *settings, env={"TOPICSPIDER_MYSQL_URL": mysql_url})

    assert replayed.returncode == 1
    [line] = replayed.stderr.splitlines()
    assert line.startswith("topicspider: error: MySQL at mysql://topicspider:***@127.0.0.1:")
    assert 'pages has no column parent_url, links has no column anchor: run "ALTER TABLE' in line
    assert line.endswith(f"replayed 0 pages, the rest stays in {tmp_path / 'spool'}")
    assert len(list((tmp_path / "spool").glob("*.jsonl"))) == 1


def test_replay_without_a_database_is_bad_input(tmp_path):
    """Status 2, as every setting it cannot use: it was 1, a failure once started."""
    old_spool(tmp_path / "spool", [record("x.html")])
    result = scrapy(
        "mysql-replay",
        "-s",
        f"MYSQL_SPOOL_DIR={tmp_path / 'spool'}",
        env={"TOPICSPIDER_MYSQL_URL": ""},
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "topicspider: error: MYSQL_URL is not set (nor TOPICSPIDER_MYSQL_URL)"
    ]


def test_replay_from_a_spool_folder_that_is_not_there_is_bad_input(tmp_path, mysql_url):
    """Before: ``Replayed 0 pages and 0 links``, exit 0, for a mistyped folder."""
    missing = tmp_path / "no-such-spool"
    result = scrapy(
        "mysql-replay", "-s", f"MYSQL_SPOOL_DIR={missing}", env={"TOPICSPIDER_MYSQL_URL": mysql_url}
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"topicspider: error: MYSQL_SPOOL_DIR='{missing}': no such folder"
    ]
    assert not missing.exists()


def test_a_damaged_spool_file_is_named_by_replay_and_by_the_crawl(
    site, site_url, tmp_path, mysql_url
):
    """Before, ``mysql-replay`` ended in a traceback, and the crawl said ``Unterminated
    string starting at: line 1 column 40`` and nothing else."""
    old_spool(tmp_path / "spool", [record("a.html"), record("b.html"), record("c.html")])
    [segment] = (tmp_path / "spool").glob("*.jsonl")
    lines = segment.read_bytes().splitlines(keepends=True)
    segment.write_bytes(b"".join([lines[0], lines[1][:30] + b"\n", lines[2]]))
    named = f"{segment.absolute()}, line 2: not a row ("
    way_out = "move the file out of the spool folder to go on without it"

    replayed = mysql_replay(tmp_path / "spool", mysql_url)
    assert replayed.returncode == 1
    [line] = replayed.stderr.splitlines()
    assert line.startswith(f"topicspider: error: {named}")
    assert line.endswith(way_out)

    crawled = scrapy(
        *crawl_command(site, site_url, tmp_path), env={"TOPICSPIDER_MYSQL_URL": mysql_url}
    )
    assert crawled.returncode == 1
    [error] = [line for line in crawled.stderr.splitlines() if "ERROR" in line]
    assert named in error
    assert f"{way_out} (MYSQL_SPOOL_DIR); the crawl does not start" in error
    assert "Traceback" not in replayed.stderr + crawled.stderr


def test_replay_refuses_an_out_of_range_setting_in_one_line(tmp_path, mysql_url):
    old_spool(tmp_path / "spool", [record("x.html")])
    result = scrapy(
        "mysql-replay",
        "-s",
        f"MYSQL_SPOOL_DIR={tmp_path / 'spool'}",
        "-s",
        "MYSQL_TIMEOUT=0",
        env={"TOPICSPIDER_MYSQL_URL": mysql_url},
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "topicspider: error: MYSQL_TIMEOUT=0: expected 0 < it <= 31536000 (seconds)"
    ]
    assert len(list((tmp_path / "spool").glob("*.jsonl"))) == 1


# --- scrapyd jobs: a spool folder each ----------------------------------------------------


def pages_of(mysql_url: str, crawl_id: str) -> int:
    sql = "SELECT COUNT(*) AS n FROM pages WHERE crawl_id = %s"
    try:
        [row] = query(mysql_url, sql, crawl_id)
    except pymysql.Error:  # no table yet
        return 0
    return row["n"]


def test_two_scrapyd_jobs_at_once_store_every_page(site, site_url, tmp_path, mysql_url):
    # As under scrapyd: one working directory, so one TOPIC_PAGES_DIR and MYSQL_SPOOL_DIR.
    shared = (f"TOPIC_PAGES_DIR={tmp_path / 'pages'}", f"MYSQL_SPOOL_DIR={tmp_path / 'spool'}")
    first = start_slow_crawl(site, site_url, tmp_path / "1", mysql_url, *shared, job="job-1")
    second = None
    try:
        wait_for(lambda: pages_of(mysql_url, "job-1") >= 2, what="the first job's rows")
        second = start_slow_crawl(site, site_url, tmp_path / "2", mysql_url, *shared, job="job-2")
        wait_for(
            lambda: second.poll() is not None or pages_of(mysql_url, "job-2") >= 1,
            what="the second job's rows",
        )
        assert first.poll() is None, "the first job ended before the second one stored a row"
        assert second.wait(timeout=120) == 0, (tmp_path / "2" / "crawl.log").read_text()[-3000:]
        assert first.wait(timeout=120) == 0, (tmp_path / "1" / "crawl.log").read_text()[-3000:]
    finally:
        first.kill()
        if second is not None:
            second.kill()

    indexed = set()
    for out, job in ((tmp_path / "1", "job-1"), (tmp_path / "2", "job-2")):
        log = (out / "crawl.log").read_text("utf-8")
        stats = stats_from(log)
        assert stats["mysql/stored"] == stats["topic/stored"] > 0
        assert "mysql/unwritten" not in stats
        assert " ERROR: " not in log
        indexed |= {line["url"] for line in read_jsonl(tmp_path / "pages" / job / "index.jsonl")}
    assert set(pages_by_url(mysql_url)) == indexed
    assert list((tmp_path / "spool").iterdir()) == []  # each job's folder gone with the job


def test_a_job_writes_its_own_leftovers_first_and_names_the_others(tmp_path, mysql_url):
    spool = tmp_path / "spool"
    old_spool(spool / "job-1", [record("left-by-job-1.html")])
    old_spool(spool / "job-2", [record("left-by-job-2.html")])
    old_spool(spool, [record("left-by-a-crawl.html")])
    stats, log = store(tmp_path, mysql_url, page("new.html"), job="job-1")

    assert sorted(pages_by_url(mysql_url)) == [
        "http://127.0.0.1:8000/left-by-job-1.html",
        "http://127.0.0.1:8000/new.html",
    ]
    assert stats["mysql/replayed"] == 1
    [line] = [line for line in log.splitlines() if "other crawls left" in line]
    assert line.endswith(
        f"INFO: Rows other crawls left wait in {spool}, {spool / 'job-2'}: "
        f"`scrapy mysql-replay -s MYSQL_SPOOL_DIR={spool}` writes them"
    )
    assert not (spool / "job-1").exists()
    assert len(list(spool.glob("[0-9]*.jsonl"))) == len(list(spool.glob("job-2/[0-9]*.jsonl"))) == 1
    assert read_jsonl(tmp_path / "pages" / "job-1" / "index.jsonl")


def test_what_a_killed_job_left_is_replayed_and_a_running_jobs_folder_skipped(
    site, site_url, tmp_path, lost_mariadb
):
    lost_mariadb.start()
    mysql_url = lost_mariadb.create_database("killed")
    spool = tmp_path / "spool"
    old_spool(spool, [record("left-before.html")])  # by a crawl that was not a scrapyd job
    with writing_crawl(site, site_url, tmp_path, mysql_url, job="killed") as crawl:
        lost_mariadb.stop()
        wait_for_more_fetches(tmp_path, 4, what="pages spooled while the database is away")
        crawl.send_signal(signal.SIGKILL)
        crawl.wait(timeout=30)
    left = [
        spooled["row"]["url"]
        for path in sorted(spool.glob("killed/[0-9]*.jsonl"))
        for spooled in read(path)
        if spooled["table"] == schema.PAGES
    ]
    assert left, "the killed job left no page in its spool"

    lost_mariadb.start()
    stored = set(pages_by_url(mysql_url))
    running = Spool(spool / "running")  # held, as by a job still crawling
    running.open()
    running.append([record("running.html")])
    try:
        replayed = scrapy(
            "mysql-replay",
            "-s",
            f"MYSQL_SPOOL_DIR={spool}",
            env={"TOPICSPIDER_MYSQL_URL": mysql_url},
        )
    finally:
        running.close()

    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout.startswith(f"Replayed {len(left) + 1} pages and ")
    assert f" from {spool} (job folders killed) into mysql://topicspider:***@" in replayed.stdout
    assert replayed.stderr.splitlines() == [
        f"topicspider: skipped {spool / 'running'}: a running crawl or replay holds it, "
        "and writes its rows"
    ]
    rows = set(pages_by_url(mysql_url))
    assert rows == stored | set(left) | {"http://127.0.0.1:8000/left-before.html"}
    index = read_jsonl(tmp_path / "pages" / "killed" / "index.jsonl")
    assert rows - {"http://127.0.0.1:8000/left-before.html"} <= {line["url"] for line in index}
    assert not (spool / "killed").exists()
    assert list(spool.glob("[0-9]*.jsonl")) == []
    assert len(list(spool.glob("running/[0-9]*.jsonl"))) == 1


def test_replay_writes_every_folders_rows_in_the_order_they_were_made(tmp_path, mysql_url):
    spool = tmp_path / "spool"
    old_spool(spool / "job-b", [record("a.html", title="first")])
    old_spool(spool / "job-a", [record("a.html", title="second")])
    old_spool(spool, [record("a.html", title="third")])
    settings = ["-s", f"MYSQL_SPOOL_DIR={spool}"]
    replayed = scrapy("mysql-replay", *settings, env={"TOPICSPIDER_MYSQL_URL": mysql_url})

    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout.startswith(f"Replayed 3 pages and 0 links from {spool} (job folders ")
    [row] = query(mysql_url, "SELECT title FROM pages")
    assert row["title"] == "third"
    assert [path.name for path in spool.iterdir()] == [".lock"]  # the job folders are gone


def test_a_job_id_that_cannot_name_a_spool_folder_stops_the_crawl_in_one_line(tmp_path, mysql_url):
    result = scrapy(
        *topic_args(
            "http://127.0.0.1:9/",
            "sports",
            "TOPIC_PAGES_PER_JOB=False",  # so only the spool needs a folder of the job's
            f"TOPIC_PAGES_DIR={tmp_path / 'pages'}",
            f"MYSQL_SPOOL_DIR={tmp_path / 'spool'}",
        ),
        "-a",
        "_job=..",
        env={"TOPICSPIDER_MYSQL_URL": mysql_url},
    )
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "topicspider: error: scrapyd job id '..' cannot be a folder name (MYSQL_SPOOL_DIR)"
    )
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "spool").exists()


# --- the spool's disk fills up -------------------------------------------------------------


def test_a_full_spool_disk_stops_the_crawl_and_names_the_pages_not_in_mysql(
    site, site_url, tmp_path, mysql_url, small_fs
):
    """Then the crawl, resumed once there is room, fetches them again. Before, its seen-set
    held them and they never reached MySQL."""
    spool = small_fs("64k")
    command = crawl_command(
        site,
        site_url,
        tmp_path,
        f"MYSQL_SPOOL_DIR={spool}",
        "MYSQL_FLUSH_INTERVAL=3600",  # one segment, growing until the disk is full
        "MYSQL_BATCH_SIZE=100000",
        f"JOBDIR={tmp_path / 'job'}",
    )
    result = scrapy(*command, env={"TOPICSPIDER_MYSQL_URL": mysql_url})
    assert "'finish_reason': 'mysql_spool_error'" in result.stderr, result.stderr[-3000:]
    assert result.returncode == 1
    assert f"Cannot write to the MySQL spool {spool} (MYSQL_SPOOL_DIR): " in result.stderr
    assert "No space left on device" in result.stderr
    assert "incomplete last line" not in result.stderr
    assert "Traceback" not in result.stderr

    indexed = {line["url"] for line in read_jsonl(tmp_path / "pages" / "index.jsonl")}
    stored = set(pages_by_url(mysql_url))
    assert stored < indexed
    listed = re.search(
        rf"ERROR: (\d+) accepted pages are not in MySQL, the spool {spool} having failed: "
        r"([^;\n]*)",
        result.stderr,
    )
    assert listed, result.stderr[-3000:]
    assert sorted(listed[2].split()) == sorted(indexed - stored)
    assert int(listed[1]) == stats_from(result.stderr)["mysql/not_spooled"] == len(indexed - stored)
    assert "the crawl fetches them again when it resumes from its JOBDIR" in result.stderr

    subprocess.run(["mount", "-o", "remount,size=10m", str(spool)], check=True)
    resumed = scrapy(*command, env={"TOPICSPIDER_MYSQL_URL": mysql_url})
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert indexed <= set(pages_by_url(mysql_url))


def test_a_full_spool_disk_names_the_pages_whose_links_are_not_in_mysql(
    site, site_url, tmp_path, mysql_url, small_fs
):
    """A page not stored is fetched again by nothing, so its links are named at the end.
    Before, they were lost without a word."""
    spool = small_fs("16k")
    command = crawl_command(
        site,
        site_url,
        tmp_path,
        f"MYSQL_SPOOL_DIR={spool}",
        "MYSQL_FLUSH_INTERVAL=3600",
        "MYSQL_BATCH_SIZE=100000",
        "TOPIC_THRESHOLD_MODE=fixed",
        "TOPIC_THRESHOLD=1",  # no page stored: the spool holds links alone
    )
    result = scrapy(*command, env={"TOPICSPIDER_MYSQL_URL": mysql_url})
    assert "'finish_reason': 'mysql_spool_error'" in result.stderr, result.stderr[-3000:]
    listed = re.search(
        rf"ERROR: The links of (\d+) fetched pages are not in MySQL, the spool {spool} having "
        r"failed: ([^\n]*)",
        result.stderr,
    )
    assert listed, result.stderr[-3000:]
    named = listed[2].split()
    assert int(listed[1]) == len(named) == stats_from(result.stderr)["mysql/links_not_spooled"]
    fetched = {line["url"] for line in read_jsonl(tmp_path / "fetch.jsonl")}
    assert set(named) <= fetched
    written = {row["page_url"] for row in query(mysql_url, "SELECT page_url FROM links")}
    assert not written & set(named)


# --- a crawl paused and resumed with JOBDIR ------------------------------------------------


def test_a_crawl_paused_and_resumed_with_jobdir_keeps_its_crawl_id(
    site, site_url, tmp_path, mysql_url
):
    command = crawl_command(
        site,
        site_url,
        tmp_path,
        f"JOBDIR={tmp_path / 'job'}",
        "DOWNLOAD_DELAY=0.15",
        "CONCURRENT_REQUESTS_PER_DOMAIN=1",
        "MYSQL_FLUSH_INTERVAL=0.2",
    )
    env = {"TOPICSPIDER_MYSQL_URL": mysql_url}
    paused = subprocess.Popen(
        [sys.executable, "-m", "scrapy", *command],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: stored_count(mysql_url) >= 2, what="the first rows")
        paused.send_signal(signal.SIGINT)  # Ctrl-C
        _, log = paused.communicate(timeout=120)
    finally:
        paused.kill()
    assert "'finish_reason': 'shutdown'" in log, log[-3000:]
    [crawl_id] = re.findall(r"Storing pages in MySQL at .*, crawl id '(.*)'", log)
    stored_first = stored_count(mysql_url)

    resumed = scrapy(*command, env=env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert stored_count(mysql_url) > stored_first
    assert_rows_equal_index(mysql_url, tmp_path / "pages")
    for table in ("pages", "links"):
        rows = query(mysql_url, f"SELECT DISTINCT crawl_id FROM {table}")
        assert rows == [{"crawl_id": crawl_id}], table
    assert f"crawl id '{crawl_id}'" in resumed.stderr
