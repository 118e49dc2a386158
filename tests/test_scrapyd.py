"""topicspider deployed to a real scrapyd and run through its JSON API.

scrapyd runs on 127.0.0.1 on a free port, in a temporary folder, on a Python that has the
dependencies but not the checkout (see :mod:`deploy.scrapyd`): what runs is the egg
``scrapyd-deploy`` built, keyword files included.
"""

from __future__ import annotations

import configparser
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests
from scrapy import Spider
from scrapy.utils.test import get_crawler

from deploy import scrapyd as local_scrapyd
from tests.processes import children_of
from tests.test_pipelines_mysql import assert_no_secret, pages_by_url, stats_from
from topicspider import settings as project_settings
from topicspider.exceptions import ConfigError
from topicspider.pipelines.files import FilesystemPipeline

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "topicspider"
#: What the egg is built from: the files of the checkout that packaging reads.
PROJECT_FILES = ("scrapy.cfg", "setup.py", "pyproject.toml", "README.md", "topicspider", "keywords")
JOB_TIMEOUT = 120.0


@dataclass
class Scrapyd:
    url: str
    directory: Path

    def get(self, endpoint: str, **params: str) -> dict:
        response = requests.get(self.url + endpoint, params=params, timeout=30)
        response.raise_for_status()
        return response.json()

    def post(self, endpoint: str, data: list[tuple[str, str]], **files) -> dict:
        response = requests.post(self.url + endpoint, data=data, files=files, timeout=60)
        response.raise_for_status()
        result = response.json()
        assert result["status"] == "ok", result
        return result

    def schedule(self, *settings: str, **arguments: str) -> str:
        data = [("project", PROJECT), ("spider", "topic"), *arguments.items()]
        data += [("setting", setting) for setting in settings]
        return self.post("schedule.json", data)["jobid"]

    def wait_finished(self, *jobs: str, timeout: float = JOB_TIMEOUT) -> dict[str, dict]:
        """Poll ``listjobs.json`` until every job is finished; their entries by id."""
        deadline = time.monotonic() + timeout
        while True:
            listing = self.get("listjobs.json", project=PROJECT)
            finished = {job["id"]: job for job in listing["finished"] if job["id"] in jobs}
            if len(finished) == len(jobs):
                return finished
            if time.monotonic() > deadline:
                pytest.fail(f"jobs not finished after {timeout}s: {listing}\n{self.log_tail()}")
            time.sleep(0.5)

    def wait_running(self, job: str, timeout: float = JOB_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while job not in {j["id"] for j in self.get("listjobs.json", project=PROJECT)["running"]}:
            if time.monotonic() > deadline:
                pytest.fail(f"job {job} did not start within {timeout}s\n{self.log_tail()}")
            time.sleep(0.2)

    def wait_stored(self, job: str, index: Path, timeout: float = JOB_TIMEOUT) -> None:
        """Wait until the running ``job`` has stored a page in ``index``. Not "Spider
        opened": Scrapy installs its SIGINT handler only once the reactor has started,
        and a signal before that ends the process at once."""
        deadline = time.monotonic() + timeout
        log = self.directory / "logs" / PROJECT / "topic" / f"{job}.log"
        while not (index.exists() and index.read_text("utf-8")):
            running = {j["id"] for j in self.get("listjobs.json", project=PROJECT)["running"]}
            assert job in running, f"the job ended before the crawl started:\n{log.read_text()}"
            assert time.monotonic() < deadline, "the crawl stored no page"
            time.sleep(0.2)

    def job_log(self, job: dict) -> str:
        """A finished job's log, fetched the way a user would: from scrapyd's ``log_url``."""
        response = requests.get(self.url + job["log_url"].lstrip("/"), timeout=30)
        response.raise_for_status()
        return response.text

    def log_tail(self) -> str:
        return local_scrapyd.log_tail(self.directory)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def scrapyd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scrapyd]:
    directory = tmp_path_factory.mktemp("scrapyd")
    for attempt in range(3):  # the free port may be taken before scrapyd binds it
        port = free_port()
        try:
            process = local_scrapyd.start(directory, port, max_proc=4, poll_interval=0.2)
            break
        except local_scrapyd.ScrapydError:
            if attempt == 2:
                raise
    yield Scrapyd(f"http://127.0.0.1:{port}/", directory)
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def deployed(scrapyd: Scrapyd, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Deploy with ``scrapyd-deploy`` from a copy of the project; the egg scrapyd stored."""
    work = tmp_path_factory.mktemp("deploy")
    project = work / "project"
    project.mkdir()
    for name in PROJECT_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, project / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, project / name)
    # A target for the test's scrapyd, from the user config file Scrapy also reads.
    (work / "scrapy.cfg").write_text(f"[deploy:test]\nurl = {scrapyd.url}\nproject = {PROJECT}\n")
    env = {**os.environ, "XDG_CONFIG_HOME": str(work), "TMPDIR": str(work)}
    result = subprocess.run(
        [str(Path(sys.executable).parent / "scrapyd-deploy"), "test", "--version", "1"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["status"] == "ok", result.stdout
    return scrapyd.directory / "eggs" / PROJECT / "1.egg"


def index_lines(folder: Path) -> list[dict]:
    with (folder / "index.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def test_scrapy_cfg_has_a_deploy_target():
    config = configparser.ConfigParser()
    config.read(ROOT / "scrapy.cfg")
    assert config["deploy"]["url"] == "http://127.0.0.1:6800/"
    assert config["deploy"]["project"] == PROJECT


def test_egg_carries_the_keywords_and_runs_without_the_checkout(scrapyd, deployed):
    names = zipfile.ZipFile(deployed).namelist()
    assert "topicspider/keywords/sports.txt" in names
    assert "topicspider/stopwords.txt" in names
    assert "topicspider/plurals.txt" in names
    assert all(name.startswith(("topicspider/", "EGG-INFO/")) for name in names), names
    # scrapyd's Python cannot import topicspider by itself: only the egg provides it.
    python = scrapyd.directory / "python" / "bin" / "python"
    probe = subprocess.run(
        [str(python), "-c", "import topicspider"],
        cwd=scrapyd.directory,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "No module named 'topicspider'" in probe.stderr
    assert scrapyd.get("listspiders.json", project=PROJECT)["spiders"] == ["topic"]


def test_crawls_side_by_side_store_on_topic_pages(scrapyd, deployed, site, site_url, tmp_path):
    seed = site_url + site.seed_path
    explicit = scrapyd.schedule(
        f"TOPIC_PAGES_DIR={tmp_path / 'pages'}",
        "CLOSESPIDER_PAGECOUNT=30",
        "TOPIC_THRESHOLD=0.2",
        "TOPIC_PROGRESS_INTERVAL=0",
        seeds=seed,
        keywords="sports",
    )
    default = scrapyd.schedule(
        f"TOPIC_FETCH_LOG={tmp_path / 'fetch.jsonl'}",
        "CLOSESPIDER_PAGECOUNT=30",
        seeds=seed,
        keywords="sports",
        deny="/en/",
    )
    jobs = scrapyd.wait_finished(explicit, default)

    # -d setting=TOPIC_PAGES_DIR=...: that folder, one subfolder per job.
    folder = tmp_path / "pages" / explicit
    stored = index_lines(folder)
    assert stored, scrapyd.job_log(jobs[explicit])
    assert all(line["relevance"] >= 0.2 for line in stored)
    assert all((folder / line["path"]).is_file() for line in stored)
    paths = {urlsplit(line["url"]).path for line in stored}
    assert paths <= site.on_topic
    assert len(paths) >= 10
    log = scrapyd.job_log(jobs[explicit])
    assert "Spider closed (closespider_pagecount)" in log
    assert "Traceback" not in log

    # No TOPIC_PAGES_DIR: pages/<job id> in scrapyd's working directory; spider
    # arguments (deny) and other TOPIC_* settings (TOPIC_FETCH_LOG) reach the crawl.
    stored = index_lines(scrapyd.directory / "pages" / default)
    paths = {urlsplit(line["url"]).path for line in stored}
    assert paths, scrapyd.job_log(jobs[default])
    assert paths <= site.on_topic
    assert not any(path.startswith("/en/") for path in paths)
    assert (tmp_path / "fetch.jsonl").stat().st_size > 0


def test_bad_input_ends_the_job_with_one_clear_message_in_its_log(scrapyd, deployed, site_url):
    cases = {
        "keyword file not found (relative to": {"keywords": "keywords/mine.txt"},
        "no keywords/nosuchtopic.txt (available: asyncio, concurrency,": {
            "keywords": "nosuchtopic"
        },
        "TOPIC_STRATEGY='random': expected one of": {
            "keywords": "sports",
            "setting": "TOPIC_STRATEGY=random",
        },
        "is not an http(s) URL": {"seeds": "ftp://127.0.0.1/", "keywords": "sports"},
    }
    jobs = {}
    for message, arguments in cases.items():
        settings = [arguments.pop("setting")] if "setting" in arguments else []
        arguments.setdefault("seeds", site_url + "/")
        jobs[message] = scrapyd.schedule(*settings, **arguments)
    finished = scrapyd.wait_finished(*jobs.values())
    for message, job in jobs.items():
        log = scrapyd.job_log(finished[job])
        errors = [line for line in log.splitlines() if "ERROR" in line]
        assert len(errors) == 1, log
        assert "topicspider: error: " in errors[0]
        assert message in errors[0]
        assert "Traceback" not in log
        assert "Spider opened" not in log


def test_cancel_stops_a_running_crawl(scrapyd, deployed, site, site_url, tmp_path):
    job = scrapyd.schedule(
        f"TOPIC_PAGES_DIR={tmp_path}",
        "DOWNLOAD_DELAY=0.5",
        "CONCURRENT_REQUESTS_PER_DOMAIN=1",
        seeds=site_url + site.seed_path,
        keywords="sports",
    )
    scrapyd.wait_running(job)
    index = tmp_path / job / "index.jsonl"
    scrapyd.wait_stored(job, index)
    prevstate = scrapyd.post("cancel.json", [("project", PROJECT), ("job", job)])["prevstate"]
    assert prevstate == "running"
    finished = scrapyd.wait_finished(job, timeout=60)
    text = scrapyd.job_log(finished[job])
    assert "Spider closed (shutdown)" in text
    assert index.read_text("utf-8").endswith("\n")


def test_jobs_storing_in_mysql_run_side_by_side(
    deployed, site, site_url, tmp_path, mysql_url, monkeypatch
):
    """``TOPICSPIDER_MYSQL_URL`` in scrapyd's environment, as the README advises: every job
    stores in MySQL, and two jobs at once both store every page."""
    monkeypatch.setenv("TOPICSPIDER_MYSQL_URL", mysql_url)
    directory, port = tmp_path / "run", free_port()
    process = local_scrapyd.start(directory, port, max_proc=4, poll_interval=0.2)
    server = Scrapyd(f"http://127.0.0.1:{port}/", directory)
    try:
        with deployed.open("rb") as egg:
            server.post("addversion.json", [("project", PROJECT), ("version", "1")], egg=egg)
        jobs = [
            server.schedule(
                "CLOSESPIDER_PAGECOUNT=30",
                "DOWNLOAD_DELAY=0.1",
                seeds=site_url + site.seed_path,
                keywords="sports",
            )
            for _ in range(2)
        ]
        finished = server.wait_finished(*jobs)
        logs = [server.job_log(finished[job]) for job in jobs]
    finally:
        process.terminate()
        process.wait(timeout=30)

    indexed = set()
    for job, log in zip(jobs, logs, strict=True):
        stats = stats_from(log)
        assert stats["mysql/stored"] == stats["topic/stored"] > 0, log[-3000:]
        assert "mysql/unwritten" not in stats
        assert_no_secret(mysql_url, log)
        indexed |= {line["url"] for line in index_lines(directory / "pages" / job)}
    assert set(pages_by_url(mysql_url)) == indexed
    assert list((directory / "mysql-spool").iterdir()) == []  # no job left rows behind


def run_deploy_scrapyd(*arguments: str, env: dict[str, str] | None = None):
    """``python -m deploy.scrapyd ARGUMENTS``, as the Makefile's targets run it."""
    return subprocess.run(
        [sys.executable, "-m", "deploy.scrapyd", *arguments],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_make_targets_run_a_local_scrapyd_and_stop_it(tmp_path):
    directory = tmp_path / "run"
    port = free_port()
    up = run_deploy_scrapyd("up", "--dir", str(directory), "--port", str(port))
    assert up.returncode == 0, up.stdout + up.stderr
    try:
        config = configparser.ConfigParser()
        config.read(directory / "scrapy.cfg")
        assert config["scrapyd"]["bind_address"] == "127.0.0.1"
        assert config["scrapyd"]["http_port"] == str(port)
        assert (directory / "scrapyd.pid").is_file()
        status = requests.get(f"http://127.0.0.1:{port}/daemonstatus.json", timeout=10).json()
        assert status["status"] == "ok"
    finally:
        down = run_deploy_scrapyd("down", "--dir", str(directory))
    assert down.returncode == 0, down.stdout + down.stderr
    assert "scrapyd stopped" in down.stdout
    assert not (directory / "scrapyd.pid").exists()
    assert "Starting factory" in (directory / "scrapyd.log").read_text("utf-8")
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{port}/daemonstatus.json", timeout=10)


def test_local_scrapyd_takes_no_other_config(tmp_path):
    """scrapyd also reads ``~/.scrapyd.conf`` and the closest ``scrapy.cfg`` (the checkout's,
    above ``.run/scrapyd``): neither changes where it listens, asks for a password, or adds
    the checkout's ``[settings]`` as a project run from the checkout instead of an egg."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".scrapyd.conf").write_text(
        "[scrapyd]\nbind_address = 0.0.0.0\nusername = admin\npassword = secret\n"
    )
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    shutil.copy2(ROOT / "scrapy.cfg", checkout / "scrapy.cfg")
    directory = checkout / ".run" / "scrapyd"
    port = free_port()
    env = {**os.environ, "HOME": str(home)}
    up = run_deploy_scrapyd("up", "--dir", str(directory), "--port", str(port), env=env)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        projects = requests.get(f"http://127.0.0.1:{port}/listprojects.json", timeout=10)
        assert projects.json()["projects"] == []
        # Bound to 127.0.0.1, it does not answer on the loopback's other addresses.
        with pytest.raises(requests.ConnectionError):
            requests.get(f"http://127.0.0.2:{port}/daemonstatus.json", timeout=10)
    finally:
        down = run_deploy_scrapyd("down", "--dir", str(directory), env=env)
    assert down.returncode == 0, down.stdout + down.stderr


def test_up_refuses_the_port_of_another_scrapyd(scrapyd, tmp_path):
    port = urlsplit(scrapyd.url).port
    directory = tmp_path / "second"
    up = run_deploy_scrapyd("up", "--dir", str(directory), "--port", str(port))
    assert up.returncode == 1, up.stdout + up.stderr
    assert f"port {port} is taken: a scrapyd already answers on it" in up.stderr
    assert not (directory / "scrapyd.pid").exists()
    assert scrapyd.get("daemonstatus.json")["status"] == "ok"


def test_up_on_a_running_folder_names_its_port_and_fails_for_another(scrapyd):
    """Before: "scrapyd is already running (pid N)" and status 0 whatever port was asked
    for, though nothing answered on it."""
    port = urlsplit(scrapyd.url).port
    pid = (scrapyd.directory / "scrapyd.pid").read_text().strip()
    other = free_port()
    up = run_deploy_scrapyd("up", "--dir", str(scrapyd.directory), "--port", str(other))
    assert up.returncode == 1, up.stdout + up.stderr
    assert up.stderr == (
        f"scrapyd is already running in {scrapyd.directory} (pid {pid}) on port {port}, not"
        f" {other}: stop it first (python -m deploy.scrapyd down --dir {scrapyd.directory}),"
        f" or use port {port}\n"
    )
    for asked in (["--port", str(port)], []):
        up = run_deploy_scrapyd("up", "--dir", str(scrapyd.directory), *asked)
        assert up.returncode == 0, up.stdout + up.stderr
        assert f"already running (pid {pid}) on http://127.0.0.1:{port}/;" in up.stdout
    assert scrapyd.get("daemonstatus.json")["status"] == "ok"


def test_down_cancels_the_jobs_first(deployed, site, site_url, tmp_path):
    """scrapyd leaves its jobs crawling when it stops: ``down`` cancels them first, so
    they close as with ``cancel.json`` and nothing of them is left running."""
    directory = tmp_path / "run"
    port = free_port()
    up = run_deploy_scrapyd("up", "--dir", str(directory), "--port", str(port))
    assert up.returncode == 0, up.stdout + up.stderr
    server = Scrapyd(f"http://127.0.0.1:{port}/", directory)
    left: list[int] = []
    try:
        with deployed.open("rb") as egg:
            server.post("addversion.json", [("project", PROJECT), ("version", "1")], egg=egg)
        job = server.schedule(
            f"TOPIC_PAGES_DIR={tmp_path / 'pages'}",
            "DOWNLOAD_DELAY=0.5",
            "CONCURRENT_REQUESTS_PER_DOMAIN=1",
            "TOPIC_ANALYSIS_PROCESSES=2",
            seeds=site_url + site.seed_path,
            keywords="sports",
        )
        server.wait_running(job)
        index = tmp_path / "pages" / job / "index.jsonl"
        server.wait_stored(job, index)
        [crawl] = [j["pid"] for j in server.get("listjobs.json")["running"]]
        left = [crawl, *children_of(crawl, "topicspider.")]
        assert len(left) == 4  # the crawl, its page writer and its two analysis workers
        down = run_deploy_scrapyd("down", "--dir", str(directory))
        assert down.returncode == 0, down.stdout + down.stderr
        log = (directory / "logs" / PROJECT / "topic" / f"{job}.log").read_text("utf-8")
        assert "Spider closed (shutdown)" in log
        assert index.read_text("utf-8").endswith("\n")
        left = [pid for pid in left if Path(f"/proc/{pid}").exists()]
        assert not left, "processes of the job still running after scrapyd stopped"
        assert f"cancelled job {job}" in down.stdout
    finally:
        for pid in left:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with suppress(ProcessLookupError, FileNotFoundError, ValueError):
            os.kill(int((directory / "scrapyd.pid").read_text()), signal.SIGTERM)


def test_down_finds_the_port_of_a_scrapyd_started_with_scrapyd_conf(tmp_path):
    """A scrapyd started before the config moved to ``scrapy.cfg`` is still stopped."""
    (tmp_path / "scrapyd.conf").write_text(
        "[scrapyd]\nbind_address = 127.0.0.1\nhttp_port = 6899\n"
    )
    assert local_scrapyd.configured_port(tmp_path) == 6899


def pipeline_for(tmp_path: Path, job: str | None, **settings: object) -> FilesystemPipeline:
    defaults = {"TOPIC_PAGES_PER_JOB": project_settings.TOPIC_PAGES_PER_JOB}
    crawler = get_crawler(settings_dict={**defaults, "TOPIC_PAGES_DIR": str(tmp_path), **settings})
    crawler.spider = Spider("topic") if job is None else Spider("topic", _job=job)
    return FilesystemPipeline.from_crawler(crawler)


def test_pages_go_to_a_folder_per_scrapyd_job(tmp_path):
    assert pipeline_for(tmp_path, None).pages_dir == tmp_path
    assert pipeline_for(tmp_path, "abc123").pages_dir == tmp_path / "abc123"
    assert pipeline_for(tmp_path, "abc123", TOPIC_PAGES_PER_JOB=False).pages_dir == tmp_path
    for unsafe in ("..", "a/b", "."):
        with pytest.raises(ConfigError, match="cannot be a folder name"):
            pipeline_for(tmp_path, unsafe)
