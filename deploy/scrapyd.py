"""A local scrapyd: its own folder and config, bound to 127.0.0.1.

It runs on a Python that sees every installed dependency but not the checkout
(``pip install -e .`` makes ``topicspider`` importable from the project's virtualenv),
so jobs import topicspider and its keyword files from the deployed egg alone, as on
a real scrapyd host. ``make scrapyd-up`` and ``make scrapyd-down`` call this module::

    python -m deploy.scrapyd up [--dir .run/scrapyd] [--port 6800] [--max-proc 4]
    python -m deploy.scrapyd down [--dir .run/scrapyd]

The folder holds ``scrapyd.conf``, ``scrapyd.pid``, ``scrapyd.log`` and scrapyd's
``eggs/``, ``logs/``, ``dbs/``; jobs run in it, so relative paths in spider arguments
and settings (``pages/`` by default) are relative to it.
"""

from __future__ import annotations

import argparse
import http.client
import os
import signal
import subprocess
import sys
import sysconfig
import time
import venv
from pathlib import Path

DEFAULT_DIR = Path(".run/scrapyd")
DEFAULT_PORT = 6800
CONFIG_NAME = "scrapyd.conf"
PID_NAME = "scrapyd.pid"
LOG_NAME = "scrapyd.log"
HOST_PYTHON_DIR = "python"
#: Environment variables that would let a job see the checkout or override the config.
_HIDDEN_ENV = ("PYTHONPATH", "PYTHONHOME", "SCRAPY_SETTINGS_MODULE", "SCRAPY_PROJECT")

CONFIG = """\
[scrapyd]
bind_address = 127.0.0.1
http_port = {port}
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
    """The local scrapyd did not start or stop; the message has the end of its log."""


def write_config(directory: Path, port: int, max_proc: int, poll_interval: float) -> Path:
    """``scrapyd.conf`` in ``directory``; scrapyd reads it because jobs start there."""
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
    """Start scrapyd in ``directory`` (in a session of its own) and wait until it answers."""
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


def stop(directory: Path, timeout: float = 30.0) -> bool:
    """Stop the scrapyd whose pid file is in ``directory``; False if none was running.

    Waits for the pid file to go (scrapyd removes it last), not for the process to be
    reaped: its parent may be long gone."""
    pidfile = directory / PID_NAME
    pid = running_pid(directory)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pidfile.exists():
        if time.monotonic() > deadline:
            raise ScrapydError(f"scrapyd (pid {pid}) did not stop:\n{log_tail(directory)}")
        time.sleep(0.2)
    return True


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
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        connection.request("GET", "/daemonstatus.json")
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy.scrapyd", description=__doc__)
    parser.add_argument("action", choices=("up", "down"))
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="default: %(default)s")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="default: %(default)s")
    parser.add_argument("--max-proc", type=int, default=4, help="jobs at once (default: 4)")
    args = parser.parse_args(argv)
    directory = args.dir.resolve()
    if args.action == "down":
        print("scrapyd stopped" if stop(directory) else "scrapyd was not running")
        return 0
    if (pid := running_pid(directory)) is not None:
        print(f"scrapyd is already running (pid {pid}); log: {directory / LOG_NAME}")
        return 0
    try:
        process = start(directory, args.port, max_proc=args.max_proc)
    except ScrapydError as error:
        print(error, file=sys.stderr)
        return 1
    print(
        f"scrapyd (pid {process.pid}) on http://127.0.0.1:{args.port}/\n"
        f"folder: {directory}\nlog: {directory / LOG_NAME}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
