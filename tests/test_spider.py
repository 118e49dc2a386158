"""End-to-end: ``scrapy crawl topic`` against the fixture site served on 127.0.0.1."""

from __future__ import annotations

import json
import os
import pickle
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit
from urllib.request import urlopen

import pytest
from scrapy import Request, Spider
from scrapy.utils.test import get_crawler

from demo.crawl import SCRAPY, topic_args
from tests.httpserver import Handler, serving
from tests.test_settingtypes import PROJECT
from topicspider.scheduler import TopicScheduler
from topicspider.spiders.topic import TopicSpider

ROOT = Path(__file__).resolve().parent.parent
#: A `scrapy` subprocess imports the project from its folder, wherever it runs.
SCRAPY_ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def scrapy(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """`scrapy ARGS` run to its end, its output captured."""
    return subprocess.run(
        [*SCRAPY, *args], cwd=cwd, env=SCRAPY_ENV, capture_output=True, text=True, timeout=240
    )


def scrapy_side_by_side(*commands: list[str]) -> list[subprocess.CompletedProcess]:
    """`scrapy ARGS` for each command, all run at once, each to its end: the crawls a test
    compares wait for the site more than they compute."""
    with ThreadPoolExecutor(len(commands)) as pool:
        return list(pool.map(lambda args: scrapy(*args), commands))


def start_scrapy(*args: str, **popen: Any) -> subprocess.Popen:
    """`scrapy ARGS` started in the project folder and left running (``popen``: where its
    output goes)."""
    return subprocess.Popen([*SCRAPY, *args], cwd=ROOT, env=SCRAPY_ENV, **popen)


def crawl_command(site_url: str, site, out: Path, *settings: str, keywords: str = "sports"):
    return topic_args(
        f"{site_url}{site.seed_path}",
        keywords,
        f"TOPIC_PAGES_DIR={out / 'pages'}",
        f"TOPIC_FETCH_LOG={out / 'fetch.jsonl'}",
        "LOG_LEVEL=INFO",
        "TOPIC_PROGRESS_INTERVAL=0",
        *settings,
    )


def crawl_seed(seed: str, out: Path, *settings: str, keywords: str = "足球:3,比赛:2"):
    """`scrapy crawl topic` from one seed; pages in `out/pages`, fetch log `out/f.jsonl`."""
    return scrapy(
        *topic_args(
            seed,
            keywords,
            f"TOPIC_PAGES_DIR={out / 'pages'}",
            f"TOPIC_FETCH_LOG={out / 'f.jsonl'}",
            *settings,
        )
    )


def read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def paths(rows: list[dict]) -> list[str]:
    return [urlsplit(row["url"]).path for row in rows]


@pytest.fixture(scope="module")
def full_crawl(site, site_url, tmp_path_factory):
    out = tmp_path_factory.mktemp("full")
    result = scrapy(*crawl_command(site_url, site, out))
    assert result.returncode == 0, result.stderr[-3000:]
    return out, result.stderr


ONE_AT_A_TIME = ("CONCURRENT_REQUESTS_PER_DOMAIN=1", "TOPIC_PARSE_BACKLOG=0")


def test_crawl_stores_on_topic_pages_with_index(site, full_crawl):
    out, log = full_crawl
    index = read_jsonl(out / "pages" / "index.jsonl")
    stored = set(paths(index))
    assert len(stored & site.on_topic) >= 0.8 * len(site.on_topic)
    assert len(stored - site.on_topic) <= 0.2 * len(stored)
    for row in index:
        for field in (
            "url",
            "title",
            "relevance",
            "depth",
            "charset",
            "path",
            "parent_url",
            "fetched_at",
        ):
            assert field in row
        assert (out / "pages" / row["path"]).is_file()
    assert "'topic/accepted':" in log
    assert "'topic/dropped':" in log
    assert "harvest rate" in log
    assert "Warning" not in log, "a crawl with the defaults logs no warnings"


def test_the_crawl_says_its_topic_as_it_starts(full_crawl):
    _, log = full_crawl
    said = re.search(r"INFO: Topic: 25 terms from (\S+), as pages are matched: (.*)", log)
    assert said, "no topic line"
    assert said[1].endswith("keywords/sports.txt")
    assert said[2].startswith("足球 3, footbal 3, soccer 3")
    assert said[2].endswith(", and 15 more")


def test_final_stats_show_the_threshold_and_link_score_mix_learned(full_crawl):
    out, log = full_crawl
    learned = {
        name: float(value)
        for name, value in re.findall(r"'topic/(threshold|mix/\w+)': ([\d.]+)", log)
    }
    last_verdict = read_jsonl(out / "fetch.jsonl")[-1]["threshold"]
    assert learned["threshold"] == pytest.approx(last_verdict, abs=1e-4)
    mix = {name: weight for name, weight in learned.items() if name.startswith("mix/")}
    assert set(mix) == {"mix/anchor", "mix/parent", "mix/pattern", "mix/importance"}
    assert mix["mix/importance"] == 0, "a term weighted 0 stays off"
    assert sum(mix.values()) == pytest.approx(0.6 + 0.4 + 0.1, abs=1e-3)
    assert mix["mix/anchor"] != 0.6, "the crawl learned its own mix (TOPIC_ADAPTIVE)"


def test_gbk_pages_are_stored_raw_and_indexed_as_unicode(site, site_url, full_crawl):
    out, _ = full_crawl
    index = {urlsplit(row["url"]).path: row for row in read_jsonl(out / "pages" / "index.jsonl")}
    gbk_stored = [path for path in site.gbk_pages if path in index]
    assert gbk_stored, "no GBK page was stored"
    for path in gbk_stored:
        row = index[path]
        assert row["charset"] == "gb18030"
        served = urlopen(f"{site_url}{path}").read()  # noqa: S310 - local fixture server
        assert (out / "pages" / row["path"]).read_bytes() == served
        assert served.decode("gb18030").count(row["title"]) >= 1


def test_never_leaves_the_site_nor_fetches_robots_disallowed_or_binary(full_crawl):
    out, _ = full_crawl
    fetched = read_jsonl(out / "fetch.jsonl")
    assert all(urlsplit(row["url"]).hostname == "127.0.0.1" for row in fetched)
    assert not [p for p in paths(fetched) if p.startswith("/private/")]
    assert not [p for p in paths(fetched) if p.endswith((".pdf", ".jpg"))]
    assert len(paths(fetched)) == len(set(paths(fetched)))


def test_best_first_beats_breadth_first_within_the_same_budget(site, site_url, tmp_path):
    budget = 15
    strategies = ("best_first", "bfs")
    results = scrapy_side_by_side(
        *(
            crawl_command(
                site_url,
                site,
                tmp_path / strategy,
                f"TOPIC_STRATEGY={strategy}",
                f"CLOSESPIDER_PAGECOUNT={budget}",
            )
            for strategy in strategies
        )
    )
    harvest = {}
    for strategy, result in zip(strategies, results, strict=True):
        assert result.returncode == 0, result.stderr[-2000:]
        first = paths(read_jsonl(tmp_path / strategy / "fetch.jsonl"))[:budget]
        harvest[strategy] = sum(path in site.on_topic for path in first)
    assert harvest["best_first"] > harvest["bfs"]
    assert harvest["best_first"] >= 9


def test_links_found_again_are_not_resent_and_the_crawl_fetches_the_same(site, site_url, tmp_path):
    """One request at a time the crawl is deterministic: remembering the links already sent
    changes what the scheduler is handed, not what is fetched nor in which order."""
    sizes = ("100000", "0")
    results = scrapy_side_by_side(
        *(
            crawl_command(
                site_url, site, tmp_path / size, *ONE_AT_A_TIME, f"TOPIC_SENT_LINKS={size}"
            )
            for size in sizes
        )
    )
    fetched, logs = {}, {}
    for size, result in zip(sizes, results, strict=True):
        assert result.returncode == 0, result.stderr[-2000:]
        fetched[size] = paths(read_jsonl(tmp_path / size / "fetch.jsonl"))
        logs[size] = result.stderr
    assert fetched["100000"] == fetched["0"]
    assert "'topic/links_known':" in logs["100000"]
    assert "'topic/links_known':" not in logs["0"]


def test_jobdir_pause_and_resume_fetches_nothing_twice(site, site_url, tmp_path, serial_crawl):
    jobdir = tmp_path / "job"
    command = crawl_command(site_url, site, tmp_path, f"JOBDIR={jobdir}", *ONE_AT_A_TIME)
    first = scrapy(*command, "-s", "CLOSESPIDER_PAGECOUNT=6")
    assert first.returncode == 0, first.stderr[-2000:]
    # Its pages wait for the threshold to settle: kept in JOBDIR, said by the crawl resumed.
    received = re.search(r"'response_received_count': (\d+)", first.stderr)
    assert received
    assert 4 <= int(received[1]) < 20  # robots.txt counts towards the page count

    second = scrapy(*command)
    assert second.returncode == 0, second.stderr[-2000:]
    assert "Resuming crawl" in second.stderr
    assert re.search(r"'topic/resumed': [1-9]", second.stderr), "TopicScheduler counts them"
    assert ", 0 queued," in second.stderr.split("Finished:")[1]
    fetched = paths(read_jsonl(tmp_path / "fetch.jsonl"))
    assert len(fetched) == len(set(fetched)), "a page was fetched twice"
    assert set(fetched) == serial_crawl, "the resumed crawl lost or added pages"
    stored = paths(read_jsonl(tmp_path / "pages" / "index.jsonl"))
    assert len(stored) == len(set(stored))


def test_what_the_crawl_learned_resumes_with_jobdir(site, site_url, tmp_path):
    """The pages counted per host go on from where the paused crawl left them."""
    jobdir = tmp_path / "job"
    command = crawl_command(site_url, site, tmp_path, f"JOBDIR={jobdir}", *ONE_AT_A_TIME)
    assert scrapy(*command, "-s", "CLOSESPIDER_PAGECOUNT=6").returncode == 0
    learned = pickle.loads((jobdir / "spider.state").read_bytes())
    # Judged: said in the fetch log, or waiting for the threshold to settle.
    fetched_first = len(read_jsonl(tmp_path / "fetch.jsonl")) + len(learned["waiting"])
    assert sum(learned["host_pages"].values()) == fetched_first
    assert learned["allowed_domains"] == ["127.0.0.1"]

    assert scrapy(*command).returncode == 0
    learned = pickle.loads((jobdir / "spider.state").read_bytes())
    fetched = len(read_jsonl(tmp_path / "fetch.jsonl"))
    assert fetched > fetched_first
    assert sum(learned["host_pages"].values()) == fetched


def test_a_part_off_in_the_paused_crawl_is_on_in_the_resumed_one_given_it():
    """Near-duplicates, the importance term and the stay-on-site rule, off when the crawl
    was paused: the state holds None for them. Before, the resumed crawl took that None
    over its own (the part stayed off), or failed to start (``allowed_domains``)."""
    off = {
        **PROJECT,
        "TOPIC_DUPLICATE_DISTANCE": -1,
        "TOPIC_STAY_ON_SITE": False,
        "TOPIC_IMPORTANCE_WEIGHT": 0.0,
    }
    paused = TopicSpider.from_crawler(
        get_crawler(TopicSpider, off), seeds="http://127.0.0.1/", keywords="足球:1"
    )
    paused.state = {}
    paused.restore_state()
    assert paused.state["duplicates"] is paused.state["importance"] is None
    on = {**PROJECT, "TOPIC_IMPORTANCE_WEIGHT": 0.1}
    resumed = TopicSpider.from_crawler(
        get_crawler(TopicSpider, on), seeds="http://127.0.0.1/", keywords="足球:1"
    )
    resumed.state = paused.state
    resumed.restore_state()
    assert resumed.duplicates is not None
    assert resumed.importance is not None
    assert resumed.allowed_domains == ["127.0.0.1"]
    assert resumed.state["duplicates"] is resumed.duplicates


@pytest.mark.parametrize("jobdir", [False, True])
def test_a_request_kept_in_memory_waits_for_its_turn_with_a_jobdir_too(jobdir, tmp_path):
    """With ``JOBDIR``, what would not pickle (a callback that is no spider method) stays in
    memory; before, Scrapy served it ahead of every better request on disk."""

    class Plain(Spider):
        name = "plain"

        def parse(self, response):
            pass

    crawler = get_crawler(Plain, {**PROJECT, "JOBDIR": str(tmp_path) if jobdir else None})
    crawler.spider = Plain()
    scheduler = TopicScheduler.from_crawler(crawler)
    scheduler.open(crawler.spider)
    for name, score, callback in [("best", 0.9, None), ("worst", -5.0, print), ("mid", 0.5, None)]:
        scheduler.enqueue_request(
            Request(f"http://127.0.0.1/{name}", meta={"topic_score": score}, callback=callback)
        )
    served = [request.url.rsplit("/", 1)[1] for request in iter(scheduler.next_request, None)]
    scheduler.close("finished")
    assert served == ["best", "mid", "worst"]
    assert crawler.stats.get_value("scheduler/dequeued") == 3


def test_ctrl_c_pauses_and_the_same_command_resumes(site, site_url, tmp_path, serial_crawl):
    full = serial_crawl

    jobdir = tmp_path / "job"
    out = tmp_path / "paused"
    command = crawl_command(
        site_url, site, out, f"JOBDIR={jobdir}", *ONE_AT_A_TIME, "DOWNLOAD_DELAY=0.1"
    )
    process = start_scrapy(*command, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(read_jsonl(out / "fetch.jsonl")) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _, log = process.communicate(timeout=120)
    assert "shutting down gracefully" in log.lower()
    paused = paths(read_jsonl(out / "fetch.jsonl"))
    assert len(paused) < len(full)

    resumed = scrapy(*command)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    fetched = paths(read_jsonl(out / "fetch.jsonl"))
    assert len(fetched) == len(set(fetched)), "a page was fetched twice"
    assert set(fetched) == full, "the resumed crawl lost or added pages"
    stored = paths(read_jsonl(out / "pages" / "index.jsonl"))
    assert len(stored) == len(set(stored))


SEED = ["-a", "seeds=http://127.0.0.1:9/", "-a", "keywords=sports"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["-a", "keywords=sports"], "no seeds"),
        (["-a", "seeds=ftp://127.0.0.1/", "-a", "keywords=sports"], "is not an http(s) URL"),
        (["-a", "seeds=http://127.0.0.1:9/", "-a", "keywords=nosuchtopic"], "available:"),
        # before, accepted without MYSQL_URL, and refused only once the URL was added
        ([*SEED, "-s", "MYSQL_BATCH_SIZE=0"], "MYSQL_BATCH_SIZE=0: expected at least 1"),
        # before, "keywords argument is empty", for an argument not given at all
        (["-a", "seeds=http://127.0.0.1:9/"], "no keywords: pass -a keywords=NAME"),
        (["-a", "seeds=http://127.0.0.1:9/", "-a", "keywords=足球:0"], "positive"),
        (
            [
                "-a",
                "seeds=http://127.0.0.1:9/",
                "-a",
                "keywords=sports",
                "-s",
                "TOPIC_STRATEGY=random",
            ],
            "TOPIC_STRATEGY",
        ),
        (
            [
                "-a",
                "seeds=http://127.0.0.1:9/",
                "-a",
                "keywords=sports",
                "-s",
                "TOPIC_DUPEFILTER=foo",
            ],
            "TOPIC_DUPEFILTER='foo': expected one of bloom, exact",
        ),
        (
            [
                "-a",
                "seeds=http://127.0.0.1:9/",
                "-a",
                "keywords=sports",
                "-s",
                "TOPIC_DUPLICATE_DISTANCE=three",
            ],
            "TOPIC_DUPLICATE_DISTANCE='three': expected a whole number",
        ),
        (
            [
                "-a",
                "seeds=http://127.0.0.1:9/",
                "-a",
                "keywords=sports",
                "-s",
                "TOPIC_ANCHOR_WEIGHT=nan",
            ],
            "TOPIC_ANCHOR_WEIGHT='nan': expected a finite number",
        ),
        (
            [
                "-a",
                "seeds=http://127.0.0.1:9/",
                "-a",
                "keywords=sports",
                "-s",
                "TOPIC_TITLE_WEIGHT=-1",
            ],
            "TOPIC_TITLE_WEIGHT='-1': expected a number >= 0",
        ),
        (
            [
                "-a",
                "seeds=http://127.0.0.1:9/",
                "-a",
                "keywords=sports",
                "-s",
                "CLOSESPIDER_PAGECOUNT=abc",
            ],
            "CLOSESPIDER_PAGECOUNT='abc': expected a whole number",
        ),
        (  # before: a traceback for every page, and nothing crawled
            [
                "-a",
                "seeds=http://127.0.0.1:9/",
                "-a",
                "keywords=sports",
                "-s",
                "TOPIC_ANALYSIS_PROCESSES=-1",
            ],
            "TOPIC_ANALYSIS_PROCESSES='-1': expected a whole number >= 0",
        ),
        (  # scrapyd passes -d jobid=NAME as the spider argument _job
            ["-a", "seeds=http://127.0.0.1:9/", "-a", "keywords=sports", "-a", "_job=.."],
            "scrapyd job id '..' cannot be a folder name (TOPIC_PAGES_PER_JOB)",
        ),
        (  # before: the crawl started, its analysis worker died twice with a traceback
            ["-a", "seeds=http://127.0.0.1:9/", "-a", "keywords=sports", "-a", "allow=(news"],
            "allow='(news': not a regular expression (missing ), unterminated subpattern",
        ),
        (
            ["-a", "seeds=http://127.0.0.1:9/", "-a", "keywords=sports", "-a", "deny=*.pdf"],
            "deny='*.pdf': not a regular expression (nothing to repeat at position 0)",
        ),
        (  # before: a typo was ignored, and the crawl went everywhere -a allow would not
            ["-a", "seeds=http://127.0.0.1:9/", "-a", "keywords=sports", "-a", "alow=/news/"],
            "unknown spider argument 'alow' (expected seeds, keywords, allow or deny)",
        ),
        (  # before: 'no seeds', though the seeds were given
            ["-a", "seed=http://127.0.0.1:9/", "-a", "keywords=sports"],
            "unknown spider argument 'seed' (expected seeds, keywords, allow or deny)",
        ),
        (  # a spider attribute Scrapy has deprecated for its setting
            [*SEED, "-a", "download_delay=2"],
            "unknown spider argument 'download_delay' (expected seeds, keywords, allow or deny;"
            " the setting is -s DOWNLOAD_DELAY=…)",
        ),
        (  # before: Scrapy dropped it at INFO, and the crawl ended 'finished', fetching nothing
            ["-a", f"seeds=http://127.0.0.1:9/{'a' * 2100}", "-a", "keywords=sports"],
            "is 2119 characters long, over URLLENGTH_LIMIT (2083)",
        ),
        # Scrapy's FAQ gives these for breadth-first order. Before, the first two stopped
        # the crawl at its first request with a traceback and exit status 0; the last did
        # nothing.
        (
            [*SEED, "-s", "SCHEDULER_MEMORY_QUEUE=scrapy.squeues.FifoMemoryQueue"],
            "SCHEDULER_MEMORY_QUEUE='scrapy.squeues.FifoMemoryQueue': the frontier orders"
            " requests by TOPIC_STRATEGY (bfs: breadth-first, dfs: depth-first), and takes"
            " topicspider.pqueues.MemoryQueue or a subclass of it (the default:"
            " topicspider.pqueues.SpillQueue)",
        ),
        (
            [*SEED, "-s", "SCHEDULER_PRIORITY_QUEUE=scrapy.pqueues.DownloaderAwarePriorityQueue"],
            "takes topicspider.pqueues.ScorePriorityQueue",
        ),
        (
            [*SEED, "-s", "DEPTH_PRIORITY=1"],
            "DEPTH_PRIORITY=1: the frontier orders requests by TOPIC_STRATEGY (bfs: breadth-first,"
            " dfs: depth-first), not by priority",
        ),
    ],
)
def test_bad_input_stops_before_any_request_with_one_message(arguments, message):
    result = scrapy("crawl", "topic", *arguments)
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if "error" in line.lower()]
    assert errors == [next(line for line in errors if message in line)]
    assert "Traceback" not in result.stderr
    assert "Spider opened" not in result.stderr


SCRIPT = """
import sys
from scrapy.crawler import CrawlerProcess
from topicspider.spiders.topic import TopicSpider

seed, pages, *more = sys.argv[1:]
settings = {"TOPIC_PAGES_DIR": pages, "LOG_LEVEL": "INFO"}
process = CrawlerProcess({**settings, **dict(setting.split("=", 1) for setting in more)})
process.crawl(TopicSpider, seeds=seed, keywords="sports")
process.start()
"""


def run_script(seed: str, pages: Path, *settings: str) -> subprocess.CompletedProcess:
    """``SCRIPT`` run outside the project (no ``scrapy.cfg``, no project settings)."""
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, seed, str(pages), *settings],
        cwd=pages.parent, env=SCRAPY_ENV, capture_output=True, text=True, timeout=240,
    )  # fmt: skip


def test_a_script_outside_the_project_crawls_with_the_projects_defaults(site, site_url, tmp_path):
    """Before: ``TOPIC_THRESHOLD_MODE=None: expected one of adaptive, fixed``, a traceback:
    outside this project there were no ``TOPIC_*`` settings, nor its scheduler."""
    pages = tmp_path / "pages"
    result = run_script(f"{site_url}{site.seed_path}", pages)
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    stored = paths(read_jsonl(pages / "index.jsonl"))
    assert stored
    assert set(stored) <= site.on_topic
    assert "topicspider.scheduler.TopicScheduler" in result.stderr  # its own frontier


def test_a_project_of_ones_own_crawls_with_the_spider_and_its_own_settings(
    site, site_url, tmp_path
):
    """Before, ``scrapy crawl topic`` in another project stopped on the first ``TOPIC_*``
    setting the spider read; set at Scrapy's default priority, the crawl command put
    Scrapy's scheduler queue back."""
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = mine.settings\n")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "__init__.py").write_text("")
    (tmp_path / "mine" / "settings.py").write_text(
        'BOT_NAME = "mine"\n'
        'SPIDER_MODULES = ["topicspider.spiders"]\n'
        'TOPIC_THRESHOLD_MODE = "fixed"\n'
    )
    pages = tmp_path / "pages"
    command = topic_args(f"{site_url}{site.seed_path}", "sports", f"TOPIC_PAGES_DIR={pages}")
    result = subprocess.run(
        [*SCRAPY, *command], cwd=tmp_path, env={**SCRAPY_ENV, "PYTHONPATH": f"{ROOT}:{tmp_path}"},
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert "(bot: mine)" in result.stderr
    assert "'topic/threshold': 0.12" in result.stderr  # its fixed threshold: the default bar
    assert set(paths(read_jsonl(pages / "index.jsonl"))) <= site.on_topic


def test_a_script_with_a_bad_setting_stops_before_any_request(site, site_url, tmp_path):
    """Before, ``-a deny=*.pdf`` or a weight below 0 were checked by ``scrapy crawl`` only:
    a script ran with them (every page failed to analyze, or was scored with the weight)."""
    pages = tmp_path / "pages"
    result = run_script(f"{site_url}{site.seed_path}", pages, "TOPIC_TITLE_WEIGHT=-1")
    assert "TOPIC_TITLE_WEIGHT='-1': expected a number >= 0" in result.stderr
    assert "Spider opened" not in result.stderr
    assert not pages.exists()


def test_a_subclass_takes_its_seeds_from_start_urls_and_extends_parse(site, site_url, tmp_path):
    """``start_urls`` are Scrapy's seeds of a spider (before: ``no seeds``), and the topic
    spider's ``parse`` is a coroutine whose outputs a subclass awaits."""
    module = tmp_path / "mine.py"
    module.write_text(
        "from topicspider.spiders.topic import TopicSpider\n\n\n"
        "class MySpider(TopicSpider):\n"
        "    name = 'mine'\n"
        f"    start_urls = [{site_url + site.seed_path!r}]\n\n"
        "    async def parse(self, response):\n"
        "        for output in await super().parse(response):\n"
        "            if hasattr(output, 'title'):\n"
        "                output.title = '[mine] ' + output.title\n"
        "            yield output\n"
    )
    pages = tmp_path / "pages"
    result = scrapy(
        "runspider", str(module), "-a", "keywords=sports", "-s", f"TOPIC_PAGES_DIR={pages}"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    index = read_jsonl(pages / "index.jsonl")
    assert index
    assert set(paths(index)) <= site.on_topic
    assert all(line["title"].startswith("[mine] ") for line in index)


class AgentRecorder(Handler):
    """One football page; the User-Agent of each request for it."""

    agents: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        AgentRecorder.agents.append(self.headers.get("User-Agent", ""))
        self.send("<title>足球</title><p>足球比赛</p>".encode())


def test_the_user_agent_attribute_scrapy_documents_is_taken(tmp_path):
    """Scrapy's ``UserAgentMiddleware`` reads the spider's ``user_agent``; before, ``-a
    user_agent=`` was refused as an unknown argument."""
    with serving(AgentRecorder) as url:
        result = scrapy(
            "crawl", "topic", "-a", f"seeds={url}/", "-a", "keywords=足球:1",
            "-a", "user_agent=MyCrawler/1.0 (+ops@example.org)",
            "-s", f"TOPIC_PAGES_DIR={tmp_path / 'pages'}", "-s", "ROBOTSTXT_OBEY=False",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert AgentRecorder.agents == ["MyCrawler/1.0 (+ops@example.org)"]


def test_bad_keyword_file_names_file_and_line(tmp_path):
    broken = tmp_path / "broken.txt"
    broken.write_text("足球 3\n比赛 lots\n", "utf-8")
    result = scrapy("crawl", "topic", "-a", "seeds=http://127.0.0.1:9/", "-a", f"keywords={broken}")
    assert result.returncode == 2
    assert f"{broken}, line 2" in result.stderr


def test_a_file_named_in_gbk_is_named_so_in_the_log_file_too(tmp_path):
    """A GBK name under a UTF-8 locale: the message showed its bytes as ``\\udcd6…``, and a
    ``LOG_FILE`` (scrapyd sets one) refused them: the error and the topic line were lost."""
    gbk = "种子.txt".encode("gbk").decode("utf-8", "surrogateescape")
    seeds = tmp_path / gbk
    seeds.write_text("http://127.0.0.1:9/\nftp://x/\n", "utf-8")
    log_file = tmp_path / "crawl.log"
    arguments = ["-a", f"seeds={seeds}", "-a", "keywords=sports", "-s", f"LOG_FILE={log_file}"]
    result = scrapy("crawl", "topic", *arguments)
    assert result.returncode == 2
    said = f"topicspider: error: {tmp_path}/种子.txt, line 2: 'ftp://x/' is not an http(s) URL"
    assert said in result.stderr
    assert "Logging error" not in result.stderr
    assert said in log_file.read_text("utf-8")


def test_a_seed_that_redirects_to_another_host_is_followed_there(site_url, redirect, tmp_path):
    moved = f"http://localhost:{urlsplit(site_url).port}/index.html"
    seed = f"{redirect(moved)}/"
    result = crawl_seed(seed, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"Seed {seed} redirects to {moved}: the crawl keeps to localhost too" in result.stderr
    assert "'topic/seed_hosts_added': 1" in result.stderr
    stored = [line["url"] for line in read_jsonl(tmp_path / "pages" / "index.jsonl")]
    assert len(stored) >= 10
    assert all(url.startswith("http://localhost:") for url in stored)
    assert "offsite/filtered" not in result.stderr


def test_a_resumed_crawl_still_keeps_to_the_host_its_seed_redirected_to(
    site_url, redirect, tmp_path
):
    seed = f"{redirect(f'http://localhost:{urlsplit(site_url).port}/index.html')}/"
    jobdir = f"JOBDIR={tmp_path / 'job'}"
    first = crawl_seed(seed, tmp_path, jobdir, "CLOSESPIDER_PAGECOUNT=6")
    assert first.returncode == 0, first.stderr[-2000:]
    stored_first = len(read_jsonl(tmp_path / "pages" / "index.jsonl"))

    second = crawl_seed(seed, tmp_path, jobdir)
    assert second.returncode == 0, second.stderr[-2000:]
    assert "Resuming crawl" in second.stderr
    assert "offsite/filtered" not in second.stderr
    stored = [line["url"] for line in read_jsonl(tmp_path / "pages" / "index.jsonl")]
    assert len(stored) > max(stored_first, 10)
    assert all(url.startswith("http://localhost:") for url in stored)


def test_a_resumed_crawl_given_a_seed_on_another_host_crawls_it(site_url, tmp_path):
    """A seed added to the list between runs: before, the resumed crawl kept to the hosts
    of the first run's seeds, and Scrapy's offsite filter dropped the new one (at DEBUG)."""
    jobdir = f"JOBDIR={tmp_path / 'job'}"
    first = crawl_seed(f"{site_url}/index.html", tmp_path, jobdir, "CLOSESPIDER_PAGECOUNT=3")
    assert first.returncode == 0, first.stderr[-2000:]
    added = f"http://localhost:{urlsplit(site_url).port}/index.html"
    second = crawl_seed(f"{site_url}/index.html,{added}", tmp_path, jobdir)
    assert second.returncode == 0, second.stderr[-2000:]
    assert "Resuming crawl" in second.stderr
    assert "offsite/filtered" not in second.stderr
    fetched = [line["url"] for line in read_jsonl(tmp_path / "f.jsonl")]
    assert added in fetched  # its pages are the same as the first host's: not stored again
    assert len([url for url in fetched if url.startswith("http://localhost:")]) >= 5


GATED_PAGES = {
    "/": "<p>昨晚的足球比赛非常精彩，主队连进两球锁定胜局。</p>"
    '<a href="/match.html">足球比赛回顾</a>',
    "/match.html": "<p>联赛第十轮比赛回顾：客队门将两次扑救，足球比赛以二比零结束。</p>",
}


#: Redirects whatever the cookie: loops, one back to an address spelled otherwise.
LOOPS = {
    "/a": "/b",
    "/b": "/a",
    "/q?x=1&y=2": "/r",
    "/r": "/q?y=2&x=1",
    "/f": "/g",
    "/g": "/f#top",
    "/self": "/self",
}


class Gate(Handler):
    """A site that first sets a cookie: every page redirects to itself until it is sent;
    the ``LOOPS`` redirect in a loop."""

    def do_GET(self) -> None:
        if self.path == "/robots.txt":
            self.send(b"", status=404)
        elif self.path in LOOPS:
            self.send(b"", status=302, Location=LOOPS[self.path])
        elif "ok=1" not in (self.headers["Cookie"] or ""):
            self.send(b"", status=302, Location=self.path, **{"Set-Cookie": "ok=1; Path=/"})
        else:
            body = GATED_PAGES.get(self.path)
            self.send(f'<html><meta charset="utf-8"><body>{body}</body></html>'.encode())


def test_a_seed_behind_a_cookie_gate_is_fetched(tmp_path):
    """Before, the redirect to the seed's own address was dropped as a duplicate of the
    seed: the crawl fetched nothing and said nothing. Plain Scrapy fetches it."""
    with serving(Gate) as url:
        result = crawl_seed(f"{url}/", tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    stored = paths(read_jsonl(tmp_path / "pages" / "index.jsonl"))
    assert stored == ["/", "/match.html"]
    assert "redirects to" not in result.stderr, "the seed's own host is no new host"
    assert "topic/seed_hosts_added" not in result.stderr


def test_a_seed_without_a_path_behind_a_cookie_gate_is_fetched(tmp_path):
    """``http://host`` redirected to ``http://host/``, which the seen-set takes for the
    seed: before, it was dropped as a duplicate, the crawl fetching nothing and saying
    nothing."""
    with serving(Gate) as url:
        result = crawl_seed(url, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert paths(read_jsonl(tmp_path / "pages" / "index.jsonl")) == ["/", "/match.html"]


@pytest.mark.parametrize(
    ("seed", "chain"),
    [
        ("/a", "/a -> /b -> /a"),
        # Back to the seed spelled otherwise: before, dropped without a word.
        ("/q?x=1&y=2", "/q?x=1&y=2 -> /r -> /q?y=2&x=1"),
        ("/f", "/f -> /g -> /f#top"),
        # Fetched once again (it might be a cookie gate), then a loop; before, fetched
        # until REDIRECT_MAX_TIMES, then 'max redirections reached'.
        ("/self", "/self -> /self -> /self"),
    ],
)
def test_a_redirect_loop_is_said_in_one_line(tmp_path, seed, chain):
    """Before, a seed caught in a loop (``/a`` → ``/b`` → ``/a``) was dropped as a duplicate
    without a word, and the crawl ended having fetched nothing."""
    with serving(Gate) as url:
        result = crawl_seed(f"{url}{seed}", tmp_path)
    assert result.returncode == 1, result.stderr[-2000:]  # no seed gave a page
    loop = " -> ".join(f"{url}{path}" for path in chain.split(" -> "))
    assert f"WARNING: Not fetched {url}{seed}: redirect loop ({loop})" in result.stderr
    assert "'topic/failed/RedirectLoop': 1" in result.stderr
    assert "'downloader/request_count': 3," in result.stderr  # robots.txt and two redirects


class Broken(Handler):
    """Redirects without end (``/r/N`` to ``/r/N+1``), a redirect to a missing page, and a
    page whose Content-Length is 50 bytes more than the server sends (a PHP site's)."""

    def do_GET(self) -> None:
        if self.path == "/robots.txt":
            self.send(b"", status=404)
        elif self.path.startswith("/r/"):
            self.send(b"", status=302, Location=f"/r/{int(self.path[3:]) + 1}")
        elif self.path == "/moved":
            self.send(b"", status=301, Location="/gone")
        elif self.path == "/short.html":
            body = f"<html><body>{GATED_PAGES['/']}</body></html>".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body) + 50))
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True
        else:
            self.send(b"not found", "text/plain", status=404)


@pytest.mark.parametrize(
    ("seed", "said"),
    [
        # Before, the line named the last address of the chain, not the seed.
        ("/r/0", "max redirections reached (redirected to {url}/r/3)"),
        ("/moved", "HTTP 404 Not Found (redirected to {url}/gone)"),
        # Before, the reason was empty: "Not fetched …/short.html: ".
        (
            "/short.html",
            "the connection closed before the Content-Length the server sent was read"
            " (DOWNLOAD_FAIL_ON_DATALOSS=False keeps what arrived)",
        ),
    ],
)
def test_a_seed_not_fetched_is_named_as_given_with_a_reason(tmp_path, seed, said):
    with serving(Broken) as url:
        result = crawl_seed(f"{url}{seed}", tmp_path, "RETRY_TIMES=0", "REDIRECT_MAX_TIMES=3")
    assert result.returncode == 1, result.stderr[-2000:]
    assert f"WARNING: Not fetched {url}{seed}: {said.format(url=url)}\n" in result.stderr


class Down(Handler):
    """A site whose seed is missing (404) until ``up``; its page links to a match report."""

    up = False

    def do_GET(self) -> None:
        if self.path == "/robots.txt" or not Down.up:
            self.send(b"", status=404)
        else:
            self.send(
                f'<html><meta charset="utf-8"><body>{GATED_PAGES[self.path]}</body></html>'.encode()
            )


def test_a_seed_that_failed_is_fetched_again_when_the_crawl_is_run_again_with_jobdir(tmp_path):
    """Before, the seen-set in JOBDIR held the seed: the same command, run again once the
    site was back, filtered it, fetched nothing and exited 0 as a crawl that had ended."""
    jobdir = f"JOBDIR={tmp_path / 'job'}"
    with serving(Down) as url:
        Down.up = False
        first = crawl_seed(f"{url}/", tmp_path / "1", jobdir)
        assert first.returncode == 1, first.stderr[-2000:]
        assert "'finish_reason': 'seeds_failed'" in first.stderr
        Down.up = True
        second = crawl_seed(f"{url}/", tmp_path / "2", jobdir)
        assert second.returncode == 0, second.stderr[-2000:]
        assert paths(read_jsonl(tmp_path / "2" / "pages" / "index.jsonl")) == ["/", "/match.html"]
        third = crawl_seed(f"{url}/", tmp_path / "3", jobdir)  # fetched: not again
    assert third.returncode == 0, third.stderr[-2000:]
    assert read_jsonl(tmp_path / "3" / "f.jsonl") == []


def test_a_seed_redirecting_to_an_ipv6_host_adds_that_host():
    """Before, the host was put in a URL without brackets, which the check of the hosts the
    crawl keeps to could not read: a ValueError in the signal handler, the host not added."""
    crawler = get_crawler(TopicSpider, PROJECT)
    crawler.spider = spider = TopicSpider.from_crawler(
        crawler, seeds="http://[::1]:8080/", keywords="足球:3"
    )
    for url in ("http://[::1]:8080/home", "http://[fe80::2]/"):
        spider.scheduled(Request(url, meta={"redirect_urls": ["http://[::1]:8080/"]}))
    assert spider.allowed_domains == ["::1", "fe80::2"]


def test_unreachable_seed_is_reported_and_crawl_ends(tmp_path):
    result = scrapy(
        *topic_args("http://127.0.0.1:9/", "sports", f"TOPIC_PAGES_DIR={tmp_path}", "RETRY_TIMES=0")
    )
    assert result.returncode == 1
    assert "Connection refused" in result.stderr or "ConnectionRefused" in result.stderr
    assert "fetched 0 pages" in result.stderr


def test_a_seed_the_site_does_not_have_is_reported_with_its_status(site_url, tmp_path):
    seed = f"{site_url}/no-such-page.html"
    result = crawl_seed(seed, tmp_path)
    assert result.returncode == 1, result.stderr[-2000:]
    assert f"WARNING: Not fetched {seed}: HTTP 404 Not Found" in result.stderr
    assert "'topic/failed/HttpError/404': 1" in result.stderr


class Forbidden(Handler):
    """A site whose robots.txt forbids everything."""

    def do_GET(self) -> None:
        if self.path == "/robots.txt":
            self.send(b"User-agent: *\nDisallow: /\n", "text/plain")
        else:
            self.send(f'<html><meta charset="utf-8"><p>{GATED_PAGES["/"]}</p></html>'.encode())


@pytest.mark.parametrize(
    "seeds",
    [
        ["http://127.0.0.1:9/", "{url}/missing.html"],
        ["{forbidden}/"],
    ],
)
def test_a_crawl_none_of_whose_seeds_gives_a_page_fails(site_url, tmp_path, seeds):
    """Before, it ended as one that had crawled its site: status 0, reason 'finished'; a
    script or cron job could not tell a site down or a mistyped seed from a crawl done."""
    with serving(Forbidden) as forbidden:
        spec = ",".join(seeds).format(url=site_url, forbidden=forbidden)
        result = crawl_seed(spec, tmp_path, "RETRY_TIMES=0")
    assert result.returncode == 1, result.stderr[-2000:]
    said = [line for line in result.stderr.splitlines() if " ERROR: " in line]
    assert said[-1].endswith(" ERROR: No seed gave a page: nothing was crawled")
    assert "'finish_reason': 'seeds_failed'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/files/schedule.pdf", "not HTML (Content-Type application/pdf)"),
        ("/images/dumplings.jpg", "not text (Content-Type image/jpeg)"),
    ],
)
def test_a_seed_that_is_no_html_page_is_said_in_one_line(site_url, tmp_path, path, said):
    """Before, it was skipped without a word: 'fetched 2 pages, accepted 0', status 0."""
    result = crawl_seed(f"{site_url}{path},{site_url}/no-such-page.html", tmp_path)
    assert f"WARNING: Not crawled {site_url}{path}: {said}" in result.stderr
    assert result.returncode == 1, result.stderr[-2000:]  # neither seed gave a page
    assert "'finish_reason': 'seeds_failed'" in result.stderr


def test_a_crawl_one_of_whose_seeds_gives_a_page_ends_well(site_url, tmp_path):
    result = crawl_seed(f"http://127.0.0.1:9/,{site_url}/index.html", tmp_path, "RETRY_TIMES=0")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "'finish_reason': 'finished'" in result.stderr


def test_a_page_frees_its_slot_only_once_every_link_is_handed_over():
    """The scheduler may choose the slot's next request as soon as the page's links are all
    in (not when its item is stored), and no sooner."""
    from scrapy import Request

    from topicspider.pqueues import LINKS_QUEUED_KEY
    from topicspider.spiders.topic import _handed_over

    page = Request("http://127.0.0.1/page")
    outputs = _handed_over(page, [Request("http://127.0.0.1/a"), Request("http://127.0.0.1/b")])
    next(outputs)
    next(outputs)
    assert LINKS_QUEUED_KEY not in page.meta
    assert list(outputs) == []
    assert page.meta[LINKS_QUEUED_KEY] is True


def test_a_resumed_crawl_remembers_the_scripts_it_asked_for_and_the_barren_names():
    """Before, a crawl resumed from ``JOBDIR`` asked again for every script it had fetched
    (the seen-set dropped them) and fetched the copies of names that wrote nothing."""
    paused = TopicSpider.from_crawler(
        get_crawler(TopicSpider, PROJECT), seeds="http://127.0.0.1/", keywords="足球:1"
    )
    paused.state = {}
    paused.restore_state()
    assert paused.scripts.due("http://127.0.0.1/js/contents.js", seed=True)
    for folder in ("std", "core"):
        paused.scripts.record(f"http://127.0.0.1/{folder}/sidebar-items.js", False)
    resumed = TopicSpider.from_crawler(
        get_crawler(TopicSpider, PROJECT), seeds="http://127.0.0.1/", keywords="足球:1"
    )
    resumed.state = pickle.loads(pickle.dumps(paused.state))
    resumed.restore_state()
    assert not resumed.scripts.due("http://127.0.0.1/js/contents.js", seed=True)
    assert resumed.scripts.is_barren("http://127.0.0.1/alloc/sidebar-items.js")
