"""A throwaway MariaDB on 127.0.0.1 for development and tests.

It lives in a folder of its own — data, socket, pid file, error log and ``server.json`` (port,
user, password) — and is started from Debian's ``mariadb-server`` binaries with
``--no-defaults``, so it neither reads nor disturbs a system server.

``python -m demo.mariadb up [--dir .run/mysql] [--port N]`` starts it (creating it the first
time) and prints the ``MYSQL_URL`` to use; ``python -m demo.mariadb down`` stops it.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import closing, suppress
from pathlib import Path
from urllib.parse import quote

import pymysql

__all__ = ["MariaDB", "free_port", "main"]

DEFAULT_DIR = Path(".run/mysql")

#: Ports tried when the one picked is taken before the server binds it.
PORT_TRIES = 5


class PortTaken(Exception):
    """The server could not listen on the port picked for it."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _binary(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin")
    if found is None:
        raise RuntimeError(f"{name} not found: install Debian's mariadb-server (make system-deps)")
    return found


class MariaDB:
    """One server in ``folder``: :meth:`start` it (installing it the first time), get a
    :meth:`url` for a database on it (:meth:`create_database`), :meth:`stop` it. The port,
    user and password are chosen once and kept in ``server.json``, so a restart keeps them.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        port: int = 0,
        user: str = "topicspider",
        password: str | None = None,
    ) -> None:
        self.folder = Path(folder).absolute()
        self.datadir = self.folder / "data"
        self.socket = self.folder / "mysql.sock"
        self.pid_file = self.folder / "mariadbd.pid"
        self.log = self.folder / "error.log"
        config = self.folder / "server.json"
        saved = json.loads(config.read_text("utf-8")) if config.exists() else {}
        #: A port picked here, not given or kept: another may be picked if it is taken.
        self._picked_port = not (port or saved.get("port"))
        self.port = port or saved.get("port") or free_port()
        self.user = saved.get("user", user)
        self.password = saved.get("password") or password or secrets.token_urlsafe(12)
        self.process: subprocess.Popen | None = None

    def url(self, database: str = "crawl") -> str:
        return (
            f"mysql://{quote(self.user, safe='')}:{quote(self.password, safe='')}"
            f"@127.0.0.1:{self.port}/{database}"
        )

    def install(self) -> None:
        """Create the data folder and the server's own tables, once."""
        if (self.datadir / "mysql").is_dir():
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                _binary("mariadb-install-db"),
                "--no-defaults",
                f"--datadir={self.datadir}",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--skip-name-resolve",
                *self._as_root(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        self._save()

    def _save(self) -> None:
        config = self.folder / "server.json"
        config.write_text(
            json.dumps({"port": self.port, "user": self.user, "password": self.password}), "utf-8"
        )
        config.chmod(0o600)

    def start(self, timeout: float = 60) -> None:
        """Start the server and wait until it accepts connections. A port picked here
        that another process took meanwhile (tests run side by side) is picked again."""
        self.install()
        if self.running():
            return
        for _ in range(PORT_TRIES - 1):
            try:
                return self._start(timeout)
            except PortTaken:
                self.port = free_port()
                self._save()
        self._start(timeout)

    def _start(self, timeout: float) -> None:
        logged = self.log.stat().st_size if self.log.exists() else 0
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [
                    _binary("mariadbd"),
                    "--no-defaults",
                    f"--datadir={self.datadir}",
                    f"--port={self.port}",
                    f"--socket={self.socket}",
                    f"--pid-file={self.pid_file}",
                    f"--log-error={self.log}",
                    "--bind-address=127.0.0.1",
                    "--skip-name-resolve",
                    "--character-set-server=utf8mb4",
                    "--collation-server=utf8mb4_unicode_ci",
                    "--innodb-buffer-pool-size=64M",
                    *self._as_root(),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # outlives `make mysql-up`
            )
        deadline = time.monotonic() + timeout
        while True:
            try:
                with closing(self.admin()) as connection, connection.cursor() as cursor:
                    cursor.execute(
                        "CREATE USER IF NOT EXISTS %s@'127.0.0.1' IDENTIFIED BY %s",
                        (self.user, self.password),
                    )
                self._picked_port = False  # its clients know it now: a restart keeps it
                return
            except pymysql.Error:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    with open(self.log, "rb") as log:
                        log.seek(logged)
                        said = log.read().decode("utf-8", "replace")
                    if self._picked_port and "Address already in use" in said:
                        raise PortTaken(self.port) from None
                    raise RuntimeError(
                        f"MariaDB in {self.folder} did not start:\n{said[-2000:]}"
                    ) from None
                time.sleep(0.1)

    def stop(self, timeout: float = 60) -> None:
        """Shut the server down cleanly (SIGTERM), killing it if it takes too long."""
        pid = self.pid
        if pid is None:
            return
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while self._alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if self._alive(pid):
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if self.process is not None:
            self.process.wait(timeout=10)
            self.process = None

    def running(self) -> bool:
        pid = self.pid
        return pid is not None and self._alive(pid)

    def admin(self) -> pymysql.connections.Connection:
        """A connection as the server's root user, over the socket."""
        return pymysql.connect(
            unix_socket=str(self.socket), user="root", charset="utf8mb4", connect_timeout=5
        )

    def create_database(self, name: str) -> str:
        """Create database ``name`` if it does not exist, for the user; return its URL."""
        with closing(self.admin()) as connection, connection.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE IF NOT EXISTS `{name}` CHARACTER SET utf8mb4")
            cursor.execute(f"GRANT ALL ON `{name}`.* TO %s@'127.0.0.1'", (self.user,))
        return self.url(name)

    @property
    def pid(self) -> int | None:
        """The server's process id, if it was started."""
        if self.process is not None:
            return self.process.pid
        try:
            return int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None

    def _alive(self, pid: int) -> bool:
        if self.process is not None and self.process.pid == pid:
            return self.process.poll() is None
        with suppress(ChildProcessError):  # not our child: init reaps it
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return False  # our child, exited: reaped now rather than left a zombie
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True

    @staticmethod
    def _as_root() -> list[str]:
        """mariadbd refuses to run as root unless told to."""
        return ["--user=root"] if os.geteuid() == 0 else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m demo.mariadb", description=__doc__)
    parser.add_argument("action", choices=("up", "down"))
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="the server's folder")
    parser.add_argument("--port", type=int, default=0, help="TCP port (default: a free one)")
    args = parser.parse_args(argv)
    server = MariaDB(args.dir, port=args.port)
    if args.action == "down":
        server.stop()
        print(f"MariaDB in {server.folder} stopped")
        return 0
    server.start()
    url = server.create_database("crawl")
    print(f"MariaDB in {server.folder} is up on 127.0.0.1:{server.port}. Use:")
    print(f"  export TOPICSPIDER_MYSQL_URL='{url}'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
