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
import threading
import time
from contextlib import suppress
from itertools import count
from pathlib import Path
from urllib.parse import urlsplit

import redis
from scrapy.settings import Settings

from topicspider.redis.connection import get_client

__all__ = ["LossyLink", "RedisServer", "leased_paths", "new_crawl", "page_url", "request_path"]

_crawls = count()
_pages = count()


def page_url() -> str:
    """The address of a page no test gave before."""
    return f"http://127.0.0.1/page-{next(_pages)}.html"


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


class LossyLink:
    """A TCP link on 127.0.0.1 to a Redis, which can lose the answer to the next scripts a
    client sends: Redis runs them, the client never hears (a slow or broken link)."""

    def __init__(self, server: RedisServer) -> None:
        self.server = server
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lose_next = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def close(self) -> None:
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # closed
                return
            upstream = socket.create_connection(("127.0.0.1", self.server.port))
            lost = threading.Event()
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(
                    target=self._forward, args=(source, target, lost), daemon=True
                ).start()

    def _forward(self, source: socket.socket, target: socket.socket, lost: threading.Event) -> None:
        to_redis = target.getpeername()[1] == self.server.port
        try:
            while data := source.recv(65536):
                if to_redis and b"EVALSHA" in data and self.lose_next.is_set():
                    self.lose_next.clear()
                    lost.set()
                if to_redis or not lost.is_set():
                    target.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, target):
                with suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
