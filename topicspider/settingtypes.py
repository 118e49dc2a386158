"""Each setting whose default is a number or a truth value must read as one: a value given
as text (``-s NAME=value``, a scrapyd job's ``setting=NAME=value``) that does not stops the
crawl before it starts, in one line that names the setting, instead of a traceback from
wherever it is first read."""

from __future__ import annotations

import math

from scrapy.settings import BaseSettings
from scrapy.settings import default_settings as scrapy_defaults

from topicspider import settings as defaults
from topicspider.exceptions import ConfigError

__all__ = ["check_types"]

_OWN = ("TOPIC_", "MYSQL_", "REDIS_")


def _finite(settings: BaseSettings, name: str) -> float:
    """A number of the project's: ``nan`` compares false with everything (a threshold, a
    ratio, an interval of it means nothing), and none takes ``inf`` for "no limit"."""
    value = settings.getfloat(name)
    if not math.isfinite(value):
        raise ValueError(f"{name} is {value}")
    return value


#: A type, the functions that read it from settings (any one will do), and what a user
#: must give. ``bool`` comes before ``int``, its base class.
_OWN_READERS = (
    (bool, (BaseSettings.getbool,), "True or False (or 1, 0)"),
    (int, (BaseSettings.getint,), "a whole number"),
    (float, (_finite,), "a finite number"),
)
#: Scrapy reads some settings whose default is a whole number as a number
#: (``DOWNLOAD_DELAY``, ``DOWNLOAD_TIMEOUT``) or a truth value (``TELNETCONSOLE_ENABLED``).
_SCRAPY_READERS = (
    (bool, (BaseSettings.getbool,), "True or False (or 1, 0)"),
    (int | float, (BaseSettings.getfloat, BaseSettings.getbool), "a number"),
)


def check_types(settings: BaseSettings) -> None:
    """Raise ``ConfigError`` on the first setting whose value does not read as its
    default's type: the project's own settings exactly, Scrapy's as Scrapy reads them."""
    own = {name: value for name, value in vars(defaults).items() if name.startswith(_OWN)}
    scrapy = {name: value for name, value in vars(scrapy_defaults).items() if name.isupper()}
    for readers, names in ((_OWN_READERS, own), (_SCRAPY_READERS, scrapy)):
        for name, default in names.items():
            _check(settings, name, default, readers)


def _check(settings: BaseSettings, name: str, default: object, readers: tuple) -> None:
    for kind, reads, expected in readers:
        if not isinstance(default, kind):
            continue
        for read in reads:
            try:
                read(settings, name)
            except (TypeError, ValueError):
                continue
            return
        raise ConfigError(f"{name}={settings.get(name)!r}: expected {expected}")
