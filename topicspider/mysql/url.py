"""The database address, ``mysql://user:password@host:port/database``, and its masked form."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from topicspider.exceptions import ConfigError

SCHEMES = ("mysql", "mariadb")
DEFAULT_PORT = 3306
MASK = "***"


@dataclass(frozen=True)
class MySQLUrl:
    """A parsed ``MYSQL_URL``. Its ``str()`` masks the password: print and log that.

    >>> url = MySQLUrl.parse("mysql://spider:s%40cret@127.0.0.1:3307/crawl")
    >>> str(url), url.password, url.port
    ('mysql://spider:***@127.0.0.1:3307/crawl', 's@cret', 3307)
    """

    host: str
    port: int
    user: str
    password: str = field(repr=False)
    database: str

    @classmethod
    def parse(cls, url: str) -> MySQLUrl:
        """Parse ``url``; a :class:`ConfigError` says what is wrong without showing the password."""
        try:
            parts = urlsplit(url)
            port = parts.port or DEFAULT_PORT
        except ValueError:
            raise ConfigError(f"MYSQL_URL {_masked(url)!r} is not a valid URL") from None
        database = unquote(parts.path.lstrip("/"))
        if parts.scheme not in SCHEMES or not parts.hostname or not parts.username:
            raise ConfigError(
                f"MYSQL_URL {_masked(url)!r}: expected mysql://user:password@host[:port]/database"
            )
        if not database or "/" in database:
            raise ConfigError(f"MYSQL_URL {_masked(url)!r} names no database")
        return cls(
            host=parts.hostname,
            port=port,
            user=unquote(parts.username),
            password=unquote(parts.password or ""),
            database=database,
        )

    def connect_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of ``pymysql.connect()``: utf8mb4, so 4-byte characters fit."""
        return {
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": self.password,
            "database": self.database,
            "charset": "utf8mb4",
        }

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        auth = quote(self.user, safe="") + (f":{MASK}" if self.password else "")
        return f"mysql://{auth}@{host}:{self.port}/{quote(self.database, safe='')}"


def _masked(url: str) -> str:
    """``url`` with everything between ``://`` and its last ``@`` masked: whatever the
    mistake in it, no part of a password shows. Without an ``@`` (the host left out), what
    comes before the path is masked: ``mysql://user:password/crawl``."""
    if "@" not in url:
        scheme, sep, rest = url.partition("://")
        _, slash, path = rest.partition("/")
        return f"{scheme}{sep}{MASK}{slash}{path}" if sep and rest else url
    head, _, host = url.rpartition("@")
    scheme, sep, _ = head.partition("://")
    return f"{scheme}{sep}{MASK}@{host}" if sep else f"{MASK}@{host}"
