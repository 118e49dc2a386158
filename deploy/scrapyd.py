"""A local scrapyd: its own folder and config, bound to 127.0.0.1.

It runs on a Python that sees every installed dependency but not the checkout
(``pip install -e .`` makes ``topicspider`` importable from the project's virtualenv),
so jobs import topicspider and its keyword files from the deployed egg alone, as on
a real scrapyd host. ``make scrapyd-up`` and ``make scrapyd-down`` call this module::

    python -m deploy.scrapyd up [--dir .run/scrapyd] [--port 6800] [--max-proc 4]
    python -m deploy.scrapyd down [--dir .run/scrapyd]

The folder holds ``scrapy.cfg`` (scrapyd's config), ``scrapyd.pid``, ``scrapyd.log`` and
scrapyd's ``eggs/``, ``logs/``, ``dbs/``; jobs run in it, so relative paths in spider
arguments and settings (``pages/`` by default) are relative to it. ``down`` cancels the
jobs first: scrapyd would leave them crawling. ``up`` on a folder whose scrapyd runs already
says on which port, and fails if another port was asked for.
"""

from __future__ import annotations

import argparse
import configparser
import http.client
import json
import os
import signal
import subprocess
import sys
import sysconfig
import time
import urllib.parse
import venv
from collections import Counter
from pathlib import Path

DEFAULT_DIR = Path(".run/scrapyd")
DEFAULT_PORT = 6800
#: scrapyd reads the ``[scrapyd]`` section of the closest ``scrapy.cfg`` last, after
#: ``/etc/scrapyd/``, ``./scrapyd.conf`` and ``~/.scrapyd.conf``: there, this config is the
#: one that counts, and no enclosing project's ``scrapy.cfg`` is read (the checkout's,
#: above ``.run/scrapyd``, whose ``[settings]`` scrapyd would list as a project run
#: from the checkout).
CONFIG_NAME = "scrapy.cfg"
PID_NAME = "scrapyd.pid"
LOG_NAME = "scrapyd.log"
HOST_PYTHON_DIR = "python"
#: Environment variables that would let a job see the checkout or override the config.
_HIDDEN_ENV = ("PYTHONPATH", "PYTHONHOME", "SCRAPY_SETTINGS_MODULE", "SCRAPY_PROJECT")

CONFIG = """\
[scrapyd]
bind_address = 127.0.0.1
http_port = {port}
unix_socket_path =
username =
password =
eggs_dir = {directory}/eggs
logs_dir = {directory}/logs
dbs_dir = {directory}/dbs
items_dir =
jobs_to_keep = 20
finished_to_keep = 100
max_proc = {max_proc}
poll_interval = {poll_interval}
"""


class ScrapydError(RuntimeError):
    """The local scrapyd did not start, answer or stop; the message says how."""


def write_config(directory: Path, port: int, max_proc: int, poll_interval: float) -> Path:
    """The config in ``directory``; scrapyd reads it because it starts there."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / CONFIG_NAME
    path.write_text(
        CONFIG.format(
            port=port,
            directory=directory.resolve(),
            max_proc=max_proc,
            poll_interval=poll_interval,
        ),
        "utf-8",
    )
    return path


def host_python(directory: Path) -> Path:
    """A virtualenv whose only packages are this interpreter's site-packages, by a ``.pth``
    line: ``.pth`` files in there (the editable install's among them) are not run."""
    home = directory / HOST_PYTHON_DIR
    python = home / "bin" / "python"
    if not python.exists():
        venv.EnvBuilder(with_pip=False, symlinks=True).create(home)
        site_packages = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        paths = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
        Path(site_packages, "topicspider-host.pth").write_text("\n".join(paths) + "\n", "utf-8")
    return python


def start(
    directory: Path,
    port: int = DEFAULT_PORT,
    *,
    max_proc: int = 4,
    poll_interval: float = 1.0,
    timeout: float = 30.0,
) -> subprocess.Popen[bytes]:
    """Start scrapyd in ``directory`` (in a session of its own) and wait until it answers.

    Refuses a port another scrapyd answers on: the new one would fail to listen, and
    the old one answer in its place."""
    if _answers(port):
        raise ScrapydError(f"port {port} is taken: a scrapyd already answers on it")
    directory = directory.resolve()
    write_config(directory, port, max_proc, poll_interval)
    env = {k: v for k, v in os.environ.items() if k not in _HIDDEN_ENV}
    env = {k: v for k, v in env.items() if not k.startswith("SCRAPYD_")}
    command = [str(host_python(directory)), "-m", "scrapyd", "--pidfile", PID_NAME]
    with open(directory / LOG_NAME, "ab") as log:
        process = subprocess.Popen(
            command,
            cwd=directory,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + timeout
    while not _answers(port):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            process.wait()
            raise ScrapydError(f"scrapyd did not start on port {port}:\n{log_tail(directory)}")
        time.sleep(0.2)
    return process


def stop(directory: Path, timeout: float = 30.0) -> list[str] | None:
    """Stop the scrapyd whose pid file is in ``directory``, its jobs first (see
    :func:`cancel_jobs`); the ids of the jobs cancelled, None if it was not running.

    Waits for the pid file to go (scrapyd removes it last), not for the process to be
    reaped: its parent may be long gone."""
    pidfile = directory / PID_NAME
    pid = running_pid(directory)
    if pid is None:
        return None
    cancelled = cancel_jobs(configured_port(directory), timeout)
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pidfile.exists():
        if time.monotonic() > deadline:
            raise ScrapydError(f"scrapyd (pid {pid}) did not stop:\n{log_tail(directory)}")
        time.sleep(0.2)
    return cancelled


def cancel_jobs(port: int, timeout: float = 30.0) -> list[str]:
    """Cancel every pending and running job of the scrapyd on ``port`` and wait for them
    to end; their ids.

    scrapyd leaves its jobs running when it stops, crawling on out of sight. A job is
    cancelled as ``cancel.json`` does it (Scrapy finishes the requests in flight and
    closes the spider), and once more, which stops it at once, if it still runs after
    ``timeout``."""
    cancels: Counter[str] = Counter()
    deadline = time.monotonic() + timeout
    while jobs := _unfinished_jobs(port):
        now = time.monotonic()
        if now > deadline + timeout:
            raise ScrapydError(f"jobs still running after two cancels: {', '.join(jobs)}")
        times = 1 if now < deadline else 2
        for job, project in jobs.items():
            if cancels[job] < times:
                _api(port, "cancel.json", {"project": project, "job": job})
                cancels[job] += 1
        time.sleep(0.2)
    return list(cancels)


def configured_port(directory: Path) -> int:
    """The ``http_port`` :func:`write_config` wrote in ``directory`` (in ``scrapyd.conf``
    before the config moved to ``scrapy.cfg``)."""
    config = configparser.ConfigParser()
    config.read([directory / "scrapyd.conf", directory / CONFIG_NAME], encoding="utf-8")
    return config.getint("scrapyd", "http_port")


def running_pid(directory: Path) -> int | None:
    """The pid in ``directory``'s pid file, if that process is alive."""
    try:
        pid = int((directory / PID_NAME).read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def log_tail(directory: Path, lines: int = 30) -> str:
    try:
        text = (directory / LOG_NAME).read_text("utf-8", "replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def _answers(port: int) -> bool:
    try:
        _api(port, "daemonstatus.json")
    except ScrapydError:
        return False
    return True


def _unfinished_jobs(port: int) -> dict[str, str]:
    """The pending and running jobs, each id with its project."""
    listing = _api(port, "listjobs.json")
    return {job["id"]: job["project"] for job in listing["pending"] + listing["running"]}


def _api(port: int, endpoint: str, form: dict[str, str] | None = None) -> dict:
    """GET ``endpoint`` of the scrapyd on ``port``, or POST ``form`` to it; its JSON answer."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        if form is None:
            connection.request("GET", "/" + endpoint)
        else:
            headers = {"Content-Type": "application/x-www-form-urlencoded"}
            connection.request("POST", "/" + endpoint, urllib.parse.urlencode(form), headers)
        response = connection.getresponse()
        body = response.read()
    except OSError as error:
        raise ScrapydError(f"{endpoint} on port {port}: {error}") from error
    finally:
        connection.close()
    try:
        answer = json.loads(body)
    except ValueError:
        answer = {}
    if response.status != 200 or answer.get("status") != "ok":
        raise ScrapydError(f"{endpoint}: HTTP {response.status} {body[:200]!r}")
    return answer


def _already_running(directory: Path, pid: int, asked: int | None) -> int:
    """``up`` on a folder whose scrapyd runs: fine if on the port asked for (or none was);
    otherwise status 1, since nothing answers on the port asked for."""
    port = configured_port(directory)
    if asked is not None and asked != port:
        print(
            f"scrapyd is already running in {directory} (pid {pid}) on port {port}, not {asked}:"
            f" stop it first (python -m deploy.scrapyd down --dir {directory}), or use port {port}",
            file=sys.stderr,
        )
        return 1
    print(
        f"scrapyd is already running (pid {pid}) on http://127.0.0.1:{port}/;"
        f" log: {directory / LOG_NAME}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy.scrapyd", description=__doc__)
    parser.add_argument("action", choices=("up", "down"))
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="default: %(default)s")
    parser.add_argument("--port", type=int, help=f"default: {DEFAULT_PORT}")
    parser.add_argument("--max-proc", type=int, default=4, help="jobs at once (default: 4)")
    args = parser.parse_args(argv)
    directory = args.dir.resolve()
    try:
        if args.action == "down":
            cancelled = stop(directory)
            if cancelled is None:
                print("scrapyd was not running")
            else:
                print("scrapyd stopped", *(f"cancelled job {job}" for job in cancelled), sep="\n")
            return 0
        if (pid := running_pid(directory)) is not None:
            return _already_running(directory, pid, args.port)
        port = DEFAULT_PORT if args.port is None else args.port
        process = start(directory, port, max_proc=args.max_proc)
    except ScrapydError as error:
        print(error, file=sys.stderr)
        return 1
    print(
        f"scrapyd (pid {process.pid}) on http://127.0.0.1:{port}/\n"
        f"folder: {directory}\nlog: {directory / LOG_NAME}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
