"""Sites made of a request handler instead of a folder of files (redirects, hostile
answers, session ids), served on 127.0.0.1 for the length of a ``with`` block."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["Handler", "serving"]


class Handler(BaseHTTPRequestHandler):
    """A test site's request handler: quiet, with one call to answer a request."""

    def log_message(self, *args) -> None:
        pass

    def send(self, body: bytes, content_type: str = "text/html", status: int = 200, **headers):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """The base URL of ``handler`` served on a free 127.0.0.1 port; stopped on exit."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
