"""A real ``redis-server`` for the tests: 127.0.0.1, a free port, its own folder.

No RDB snapshots (``--save ""``); an append-only file instead, so that a server stopped and
started again on the same port and folder comes back with its data, as in production; or,
with ``restart_empty()``, without it, as a Redis run without persistence.
"""

from __future__ import annotations

import pickle
import shutil
import signal
import socket
import subprocess
import time
from itertools import count
from pathlib import Path
from urllib.parse import urlsplit

import redis
from scrapy.settings import Settings

from topicspider.redis.connection import get_client

__all__ = ["RedisServer", "leased_paths", "new_crawl", "request_path"]

_crawls = count()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def request_path(blob: bytes) -> str:
    """The URL path of a request as the frontier stores it (``P:req``)."""
    return urlsplit(pickle.loads(blob)["url"]).path


def leased_paths(client: redis.Redis, prefix: str, inflight_key: str) -> set[str]:
    """URL paths of the requests leased in one worker's ``P:inflight:<id>`` hash."""
    members = client.hkeys(inflight_key)
    blobs = client.hmget(f"{prefix}:req", members) if members else []
    return {request_path(blob) for blob in blobs if blob}


def new_crawl(server: RedisServer) -> tuple[redis.Redis, str]:
    """A client made as a worker makes it, and the key prefix of a crawl no test used, whose
    record a first worker has made."""
    client = get_client(Settings({"REDIS_URL": server.url}))
    prefix = f"topicspider:test-{next(_crawls)}"
    client.hset(f"{prefix}:meta", "keywords", "asyncio 1")
    return client, prefix


class RedisServer:
    """``start()``, ``stop()``, ``start()`` again: same port, same data."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = 0
        self.process: subprocess.Popen | None = None
        executable = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not Path(executable).exists():
            raise RuntimeError("redis-server is not installed: run `make system-deps`")
        self.executable = executable

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5)

    def start(self) -> None:
        """Start on the previous port, or a free one the first time (retried if taken)."""
        for _ in range(5):
            port = self.port or free_port()
            self.process = subprocess.Popen(
                [
                    self.executable,
                    *("--bind", "127.0.0.1", "--port", str(port)),
                    *("--save", "", "--appendonly", "yes"),
                    *("--dir", str(self.directory), "--logfile", "redis.log"),
                ],
                cwd=self.directory,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            if self._wait_ready(port):
                self.port = port
                return
            self.process.kill()
            self.process.wait(10)
        raise RuntimeError(f"redis-server did not start; see {self.directory / 'redis.log'}")

    def _wait_ready(self, port: int) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                return False
            try:
                if redis.Redis(host="127.0.0.1", port=port, socket_timeout=1).ping():
                    return True
            except redis.exceptions.BusyLoadingError:
                pass
            except redis.exceptions.ConnectionError:
                pass
            time.sleep(0.05)
        return False

    def restart_empty(self) -> None:
        """Stop, and start again on the same port without the data: a Redis that keeps
        none on disk, restarted."""
        self.stop()
        shutil.rmtree(self.directory / "appendonlydir")
        self.start()

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """SIGTERM: Redis writes its append-only file and exits, as on a normal shutdown."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(20)
        self.process = None
