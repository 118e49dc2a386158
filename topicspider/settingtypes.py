"""Each setting whose default is a number or a truth value must read as one: a value given
as text (``-s NAME=value``, a scrapyd job's ``setting=NAME=value``) that does not stops the
crawl before it starts, in one line that names the setting, instead of a traceback from
wherever it is first read. So does a number of the project's out of its range, and a
contact the User-Agent cannot carry."""

from __future__ import annotations

import math

from scrapy.settings import BaseSettings
from scrapy.settings import default_settings as scrapy_defaults
from scrapy.utils.misc import load_object

from topicspider import settings as defaults
from topicspider.exceptions import ConfigError
from topicspider.simhash import MAX_DISTANCE

__all__ = ["check_types", "loaded"]

_OWN = ("TOPIC_", "MYSQL_", "REDIS_")
_RANGED = ("TOPIC_", "REDIS_")


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
#: The least value of the whole numbers of ``TOPIC_*`` and ``REDIS_*`` that may not be 0 (the
#: others may not be negative), and the most of those that have one (the ``MYSQL_*`` ones are
#: the MySQL pipeline's to check). Out of range, one gave a traceback
#: (``TOPIC_ANALYSIS_PROCESSES=-1``, "all cores" to joblib, on every page;
#: ``TOPIC_QUEUE_MEMORY_LIMIT=0`` as the crawl opened) or did something else without a word
#: (``TOPIC_MAX_LINKS_PER_PAGE=-5`` dropped each page's last five links).
_LEAST = {
    "TOPIC_DUPLICATE_DISTANCE": -1,
    "TOPIC_THRESHOLD_TOP": 1,
    "TOPIC_MAX_TEXT_CHARS": 1,  # 0 read no text: every page a near-duplicate of the first
    "TOPIC_QUEUE_MEMORY_LIMIT": 1,
    "TOPIC_BLOOM_CAPACITY": 1,
    "TOPIC_SLOTS": 1,
    "TOPIC_PARTITIONS": 1,
}
_MOST = {
    "TOPIC_DUPLICATE_DISTANCE": MAX_DISTANCE,
    # Sizes of what the crawl allocates as it opens; past these, a traceback of no memory.
    "TOPIC_THRESHOLD_TOP": 10**6,
    "TOPIC_BLOOM_CAPACITY": 10**10,
    "TOPIC_PARTITIONS": 10**4,
}
#: The ranges of the project's other numbers, and of Scrapy's download limits: least, most,
#: and whether those are left out.
#: Out of range, one gave a traceback (``TOPIC_NOISE_DISCOUNT=2.5``; ``REDIS_LEASE=0``, once
#: the worker had joined its crawl) or did something else without a word
#: (``TOPIC_HUB_LINK_RATIO=-1`` stored no page; ``TOPIC_PROGRESS_INTERVAL=-1`` turned the
#: progress line and the summary off).
_RANGES = {
    **{
        name: (0.0, math.inf, False)
        for name in vars(defaults)
        if name.startswith("TOPIC_") and name.endswith("_WEIGHT")
    },
    "TOPIC_PROGRESS_INTERVAL": (0.0, math.inf, False),
    "TOPIC_ANALYSIS_TIMEOUT": (0.0, math.inf, False),
    "REDIS_LEASE": (0.0, math.inf, True),
    "REDIS_POLL_INTERVAL": (0.0, math.inf, True),
    "REDIS_IDLE_TIMEOUT": (0.0, math.inf, False),  # -1: a joining worker left at once
    # Relevance is a cosine of vectors of weights >= 0: TOPIC_THRESHOLD=5 stored nothing,
    # -1 everything, without a word.
    "TOPIC_THRESHOLD": (0.0, 1.0, False),
    "TOPIC_THRESHOLD_MIN": (0.0, 1.0, False),
    "TOPIC_NOISE_LINK_RATIO": (0.0, 1.0, False),
    "TOPIC_HUB_LINK_RATIO": (0.0, 1.0, False),
    "TOPIC_LIST_LINK_RATIO": (0.0, 1.0, False),
    "TOPIC_NOISE_DISCOUNT": (0.0, 1.0, False),
    "TOPIC_BLOOM_ERROR_RATE": (0.0, 1.0, True),
    # Scrapy's, which it reads unchecked: below 0, every request of the crawl failed with a
    # traceback and it ended "seeds_failed"; a timeout of 0 or NaN (Twisted's "no timeout",
    # by accident) stopped `scrapy keywords`, which reads them too.
    "DOWNLOAD_TIMEOUT": (0.0, math.inf, True),
    "DOWNLOAD_MAXSIZE": (0.0, math.inf, False),
    "DOWNLOAD_WARNSIZE": (0.0, math.inf, False),
    "DOWNLOAD_DELAY": (0.0, math.inf, False),
}

#: Scrapy reads a setting whose default is a whole number as one (``2.5`` pages, ``16e6``
#: bytes: a traceback as the crawl opened) or a truth value (``TELNETCONSOLE_ENABLED``), but
#: these three as any number.
_SCRAPY_NUMBERS = frozenset({"DNS_TIMEOUT", "DOWNLOAD_DELAY", "DOWNLOAD_TIMEOUT"})
_SCRAPY_READERS = (
    (bool, (BaseSettings.getbool,), "True or False (or 1, 0)"),
    (int, (BaseSettings.getint, BaseSettings.getbool), "a whole number"),
    (float, (BaseSettings.getfloat, BaseSettings.getbool), "a number"),
)


def check_types(settings: BaseSettings) -> None:
    """Raise ``ConfigError`` on the first setting whose value does not read as its
    default's type: the project's own settings exactly, Scrapy's as Scrapy reads them; then
    on a number of the project's out of its range, and on a contact the User-Agent cannot
    carry."""
    own = {name: value for name, value in vars(defaults).items() if name.startswith(_OWN)}
    scrapy = {
        name: float(value) if name in _SCRAPY_NUMBERS else value
        for name, value in vars(scrapy_defaults).items()
        if name.isupper()
    }
    for readers, names in ((_OWN_READERS, own), (_SCRAPY_READERS, scrapy)):
        for name, default in names.items():
            _check(settings, name, default, readers)
    for name, default in own.items():
        if name.startswith(_RANGED) and type(default) is int and settings.get(name) is not None:
            _check_range(settings, name)
    for name, (least, most, ends_out) in _RANGES.items():
        if settings.get(name) is not None:
            _check_number(settings, name, least, most, ends_out)
    contact = settings.get("TOPIC_CONTACT") or ""
    if not (contact.isascii() and contact.isprintable()):
        raise ConfigError(
            f"TOPIC_CONTACT={contact!r}: expected printable ASCII (an e-mail address or URL,"
            " the User-Agent carries it)"
        )


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


def _check_number(
    settings: BaseSettings, name: str, least: float, most: float, ends_out: bool
) -> None:
    value = settings.getfloat(name)
    if (least < value < most) if ends_out else (least <= value <= most):
        return
    if most == math.inf:
        expected = f"above {least:g}" if ends_out else f">= {least:g}"
    else:
        expected = f"between {least:g} and {most:g}" if ends_out else f"from {least:g} to {most:g}"
    raise ConfigError(f"{name}={settings.get(name)!r}: expected a number {expected}")


def _check_range(settings: BaseSettings, name: str) -> None:
    least, most = _LEAST.get(name, 0), _MOST.get(name)
    if not least <= settings.getint(name) <= (most if most is not None else math.inf):
        expected = f">= {least}" if most is None else f"from {least} to {most}"
        raise ConfigError(f"{name}={settings.get(name)!r}: expected a whole number {expected}")


def loaded(settings: BaseSettings, name: str) -> object:
    """The object the setting ``name`` names by its import path; ``ConfigError`` in one line
    naming the setting if it does not load (before, a traceback as the crawl opened)."""
    value = settings.get(name)
    try:
        return load_object(value)
    except (ImportError, AttributeError, NameError, ValueError, TypeError) as error:
        raise ConfigError(f"{name}={value!r}: cannot be loaded ({error})") from None
