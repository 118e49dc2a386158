"""Serve a folder with Debian's nginx on 127.0.0.1, fast enough not to be the bottleneck.

nginx runs in the foreground as one process (no master, no user switch) with its
configuration, pid, logs and temporary files under its own prefix folder, so it
needs no system service and several can run at once.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["serve"]

CONF = """\
daemon off;
master_process off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    types {{ text/html html; text/plain txt; }}
    default_type application/octet-stream;
    charset utf-8;
    access_log off;
    sendfile on;
    keepalive_requests 100000;
    client_body_temp_path {prefix}/client;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        index index.html;
    }}
}}
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_listening(port: int, process: subprocess.Popen, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return True
        time.sleep(0.05)
    return False


@contextlib.contextmanager
def serve(root: Path, prefix: Path) -> Iterator[str]:
    """Serve ``root`` on a free port; yield the base URL; stop nginx on exit."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    prefix.mkdir(parents=True, exist_ok=True)
    for _ in range(5):  # another process may take the free port before nginx does
        port = _free_port()
        conf = prefix / "nginx.conf"
        conf.write_text(CONF.format(prefix=prefix.absolute(), port=port, root=root.absolute()))
        process = subprocess.Popen(
            [binary, "-c", str(conf.absolute()), "-p", str(prefix.absolute())],
            stderr=subprocess.DEVNULL,
        )
        if _wait_listening(port, process):
            break
        process.kill()
        process.wait()
    else:
        raise RuntimeError(f"nginx did not start; see {prefix / 'error.log'}")
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
