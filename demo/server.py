"""A static file server for the demo site, bound to 127.0.0.1 and quiet."""

from __future__ import annotations

import json
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePosixPath
from typing import ClassVar, TextIO
from urllib.parse import unquote, urlsplit

#: Per-path header overrides, written by the generator beside the pages.
HEADERS_FILE = "_headers.json"

CONTENT_TYPES = {
    ".html": "text/html",
    ".txt": "text/plain",
    ".pdf": "application/pdf",
    ".jpg": "image/jpeg",
}


class SiteHandler(BaseHTTPRequestHandler):
    """Serves files under ``root`` by URL path, with per-path header overrides.

    Paths ending in ``/`` serve their ``index.html``; anything else that is not a file,
    including directories, dot files and the headers file, is a 404. Other names may
    start with ``_``: Python's docs have ``library/_thread.html``.
    """

    root: Path
    overrides: ClassVar[dict[str, dict[str, str]]] = {}
    access_log: ClassVar[TextIO | None] = None
    protocol_version = "HTTP/1.1"
    server_version = "topicspider-demo/1.0"

    def do_GET(self) -> None:
        self._respond(with_body=True)

    def do_HEAD(self) -> None:
        self._respond(with_body=False)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: tests and ``make demo`` want clean output."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """``GET /path 200``, one line per request, if the server keeps an access log."""
        if self.access_log is not None:
            self.access_log.write(f"{self.command} {self.path} {code}\n")

    def _respond(self, with_body: bool) -> None:
        found = self._locate(unquote(urlsplit(self.path).path))
        if found is None:
            self.send_error(HTTPStatus.NOT_FOUND)
            return
        path, file = found
        data = file.read_bytes()
        headers = {"Content-Type": CONTENT_TYPES.get(file.suffix, "application/octet-stream")}
        headers.update(self.overrides.get(path, {}))
        self.send_response(HTTPStatus.OK)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if with_body:
            self.wfile.write(data)

    def _locate(self, path: str) -> tuple[str, Path] | None:
        if not path.startswith("/"):
            return None
        if path.endswith("/"):
            path += "index.html"
        parts = PurePosixPath(path).parts[1:]
        if not parts or parts == (HEADERS_FILE,) or any(p.startswith(".") for p in parts):
            return None
        file = self.root.joinpath(*parts)
        if not file.is_file() or not file.resolve().is_relative_to(self.root):
            return None
        return "/" + "/".join(parts), file


def serve(
    root: Path, port: int = 0, access_log: Path | None = None
) -> tuple[ThreadingHTTPServer, str]:
    """Serve ``root`` on 127.0.0.1 from a daemon thread; return the server and its base URL.

    Port 0 picks a free port. ``access_log``: a file to append one line per request to (what
    was fetched, how often, in which order). Stop with ``server.shutdown()`` (then
    ``server_close()`` to free the socket).
    """
    root = Path(root).resolve()
    headers_file = root / HEADERS_FILE
    overrides = json.loads(headers_file.read_text("utf-8")) if headers_file.exists() else {}
    log = open(access_log, "a", encoding="utf-8", buffering=1) if access_log else None  # noqa: SIM115
    handler = type(
        "BoundSiteHandler",
        (SiteHandler,),
        {"root": root, "overrides": overrides, "access_log": log},
    )
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, name="demo-site", daemon=True).start()
    host, bound_port = server.server_address[:2]
    return server, f"http://{host}:{bound_port}"
