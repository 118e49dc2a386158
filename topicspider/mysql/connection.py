"""pymysql, with the server's greeting and the login counted as part of connecting.

pymysql reads the handshake under ``read_timeout``: a server that accepts connections but
never answers (stopped, swapped out, a half-dead proxy) held a crawl's start, and each
reconnect, for ``MYSQL_TIMEOUT`` instead of ``MYSQL_CONNECT_TIMEOUT``. Passed to twisted's
``adbapi.ConnectionPool`` as its DB-API module, by name.
"""

from __future__ import annotations

from typing import Any

import pymysql

__all__ = ["Connection", "connect", "threadsafety"]

threadsafety = pymysql.threadsafety


class Connection(pymysql.connections.Connection):
    """A pymysql connection whose handshake waits at most ``connect_timeout``; its
    queries then wait ``read_timeout``."""

    def connect(self, sock: Any = None) -> None:
        # pymysql keeps the read timeout in a private attribute, and sets the socket's
        # timeout from it before each read that follows.
        read_timeout = self._read_timeout
        self._read_timeout = self.connect_timeout
        try:
            super().connect(sock)
        finally:
            self._read_timeout = read_timeout


def connect(**kwargs: Any) -> Connection:
    """``pymysql.connect``, with the handshake under ``connect_timeout``."""
    return Connection(**kwargs)
