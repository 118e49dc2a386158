"""Each of the project's own settings has its default's type: a value given as text
(``-s NAME=value``, a scrapyd job's ``setting=NAME=value``) that is not one stops the crawl
before it starts, in one line that names the setting, instead of a traceback from wherever
it is first read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topicspider import settings as defaults
from topicspider.exceptions import ConfigError

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["check_types"]

_OWN = ("TOPIC_", "MYSQL_", "REDIS_")
#: A type, the ``Settings`` method that reads it, and what a user must give. ``bool``
#: comes before ``int``, its base class.
_READERS = (
    (bool, "getbool", "True or False (or 1, 0)"),
    (int, "getint", "a whole number"),
    (float, "getfloat", "a number"),
)


def check_types(settings: BaseSettings) -> None:
    """Raise ``ConfigError`` on the first own setting whose value does not read as its
    default's type."""
    for name, default in vars(defaults).items():
        if not name.startswith(_OWN):
            continue
        for kind, reader, expected in _READERS:
            if isinstance(default, kind):
                try:
                    getattr(settings, reader)(name)
                except (TypeError, ValueError):
                    raise ConfigError(
                        f"{name}={settings.get(name)!r}: expected {expected}"
                    ) from None
                break
