"""URL patterns: group a site's URLs into templates and learn which templates pay.

A template replaces the variable parts of a URL — numbers, dates, ids, query
values — with placeholders, so ``/news/2024/10/123.html`` and
``/news/2023/01/7.html`` share ``/news/{n}/{n}/{n}.html``. Each template keeps
how many of its pages were fetched and how many were on topic; its smoothed
yield becomes a term of the link score. Templates that are pure noise (calendars,
print views) are recognised by name and never followed. Session ids and tracking
parameters are taken out of a link's URL instead (:func:`without_session`): the page
behind them is a real page, and one session's copy of the site is all a crawl needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit, urlunsplit

__all__ = ["PatternStats", "is_noise", "template", "without_session"]

_NUMBER = re.compile(r"\d+")
_ID = re.compile(r"^(?=.*\d)[0-9a-f-]{16,}$|^[A-Za-z0-9_-]{24,}$")
_NOISE_KEYS = frozenset(
    [
        "print",
        "printable",
        "printview",
        "replytocom",
        "share",
        "calendar",
    ]
)
# Keys whose value names the view a script shows: Discuz's ``forum.php?mod=viewthread&
# action=printable`` and ``home.php?do=calendar``, ``index.php?act=print``; and the forms a
# forum shows every thread and visitor, to log in or write a reply (Discuz's
# ``member.php?mod=logging&action=login``, ``forum.php?mod=post&action=reply&tid=5``,
# phpBB's ``posting.php?mode=reply&t=9``, ``ucp.php?mode=register``). Not ``quote``, which
# is a stock's page on a finance site (``stock.php?action=quote&code=600000``).
_VIEW_KEYS = frozenset(["action", "act", "do", "mod", "op", "view", "mode", "a", "m"])
_NOISE_VIEWS = frozenset(
    [
        *("print", "printable", "printview", "calendar"),
        *("reply", "newthread", "login", "logging", "logout", "register"),
    ]
)
_NOISE_PATH = re.compile(
    r"/(?:print|printable|calendar|cal|share|login|logout|signin|register)(?:/|\.|$)",
    re.IGNORECASE,
)
# A script named for its print view, a word joined to ``print``: ``news_print.jsp?id=``,
# ``print_article.php?id=``, ``printpage.asp?id=``. Only scripts: ``print_media.html`` is a page.
_PRINT_SCRIPT = re.compile(
    r"/(?:\w+[_-])?print(?:page|view|able)?(?:[_-]\w+)?\.(?:php\d?|jspx?|aspx?|do|action|cgi|pl)(?:;|$)",
    re.IGNORECASE,
)


# Query keys that name a session (Java, PHP, ASP, ColdFusion) or a click's source (Google
# Analytics, ad networks, newsletters, Alibaba's spm): the page is the same without them.
_SESSION_KEYS = frozenset(
    [
        *("jsessionid", "phpsessid", "sessionid", "session_id", "cfid", "cftoken"),
        *("gclid", "fbclid", "msclkid", "yclid", "spm", "mc_cid", "mc_eid", "_hsenc", "_hsmi"),
    ]
)
_SESSION_PREFIXES = ("aspsessionid", "utm_")
# Keys that are a session id only when their value looks like one (``sid=3`` is a section).
_MAYBE_SESSION_KEYS = frozenset(["sid", "s"])
_TOKEN = re.compile(r"(?=[a-z]*\d)(?=\d*[a-z])[a-z0-9]{16,}", re.IGNORECASE)
# A session id in the path: ``;jsessionid=…`` (Java), ``/(S(…))/`` (cookieless ASP.NET).
_PATH_SESSION = re.compile(
    r";(?:jsessionid|phpsessid|sessionid|sid)=[^/;]*|/\((?:[A-Z]\([\w-]*\))+\)(?=/)",
    re.IGNORECASE,
)
# Any of the above, so that most URLs are passed over with one search.
_SESSION_HINT = re.compile(
    "[;?&](?:{}|(?:{})\\w*)=|/\\([A-Z]\\(".format(
        "|".join(sorted(_SESSION_KEYS | _MAYBE_SESSION_KEYS)), "|".join(_SESSION_PREFIXES)
    ),
    re.IGNORECASE,
)


def without_session(url: str) -> str:
    """The URL without session ids and tracking parameters, the rest of it as it was.

    A site that writes its session id into its links (when it cannot yet tell whether the
    crawler keeps cookies) gives every page a new address on every visit; dropping those
    links would leave only the seed, following them would fetch the site over and over.

    >>> without_session("http://a.cn/news.jsp;jsessionid=0AF3B2?id=9")
    'http://a.cn/news.jsp?id=9'
    >>> without_session("http://a.cn/list.php?PHPSESSID=8f3a&page=2&utm_source=weibo")
    'http://a.cn/list.php?page=2'
    >>> without_session("http://a.cn/list.php?sid=3")
    'http://a.cn/list.php?sid=3'
    """
    # Most links have neither a query nor a path parameter: a few nanoseconds, not a search.
    if not ("?" in url or ";" in url or "/(" in url) or not _SESSION_HINT.search(url):
        return url
    parts = urlsplit(url)
    query = "&".join(p for p in parts.query.split("&") if p and not _is_session_parameter(p))
    return urlunsplit(parts._replace(path=_PATH_SESSION.sub("", parts.path), query=query))


def _is_session_parameter(parameter: str) -> bool:
    key, _, value = parameter.partition("=")
    key = key.lower()
    if key in _MAYBE_SESSION_KEYS:
        return bool(_TOKEN.fullmatch(value))
    return key in _SESSION_KEYS or key.startswith(_SESSION_PREFIXES)


def _segment(segment: str) -> str:
    if _ID.match(segment):
        return "{id}"
    return _NUMBER.sub("{n}", segment)


def template(url: str) -> str:
    """The URL's template: host, path segments with numbers and ids replaced, sorted query keys.

    >>> template("http://a.cn/news/2024/10/123.html?page=2&id=9")
    'a.cn/news/{n}/{n}/{n}.html?id&page'
    >>> template("http://a.cn/article/3f2a9c1e-77aa-4b1c-9d2e-1b2c3d4e5f60")
    'a.cn/article/{id}'
    """
    parts = urlsplit(url)
    path = "/".join(_segment(s) for s in parts.path.split("/"))
    keys = sorted({key for key, _ in parse_qsl(parts.query, keep_blank_values=True)})
    query = f"?{'&'.join(keys)}" if keys else ""
    return f"{parts.hostname or ''}{path}{query}"


def is_noise(url: str) -> bool:
    """Calendars, print and share views: pages that repeat other pages forever; and a
    forum's forms to log in or reply, the same page for every thread to a crawler.

    >>> is_noise("http://a.cn/news/print/123.html")
    True
    >>> is_noise("http://a.cn/events.php?year=2031&month=7")
    True
    >>> is_noise("http://a.cn/forum.php?mod=viewthread&action=printable&tid=5")
    True
    >>> is_noise("http://a.cn/gb/news_print.jsp?id=2016")
    True
    >>> is_noise("http://bbs.a.cn/forum.php?mod=post&action=reply&fid=2&tid=5")
    True
    >>> is_noise("http://a.cn/news/123.html?page=2")
    False
    """
    parts = urlsplit(url)
    if _NOISE_PATH.search(parts.path) or _PRINT_SCRIPT.search(parts.path):
        return True
    query = [(key.lower(), value) for key, value in parse_qsl(parts.query, keep_blank_values=True)]
    keys = {key for key, _ in query}
    calendar = "month" in keys and ({"year", "day"} & keys)
    view = any(key in _VIEW_KEYS and value.lower() in _NOISE_VIEWS for key, value in query)
    return bool(keys & _NOISE_KEYS or calendar or view)


@dataclass
class _Counts:
    fetched: int = 0
    accepted: int = 0


class PatternStats:
    """On-line yield (share of fetched pages that were on topic) per URL template
    (the analyzer computes links' templates, off the reactor thread).

    The yield is smoothed towards ``prior`` with ``strength`` pseudo-pages, so
    a template seen once does not jump to 0 or 1. A template fetched at least
    ``noise_after`` times without one page on topic is noise: its URLs are dropped.
    """

    def __init__(self, prior: float = 0.2, strength: float = 4.0, noise_after: int = 30) -> None:
        self.prior = prior
        self.strength = strength
        self.noise_after = noise_after
        self._counts: dict[str, _Counts] = {}

    def record(self, key: str, accepted: bool) -> None:
        counts = self._counts.setdefault(key, _Counts())
        counts.fetched += 1
        counts.accepted += accepted

    def yield_of(self, key: str) -> float:
        counts = self._counts.get(key)
        if counts is None:
            return self.prior
        return (counts.accepted + self.prior * self.strength) / (counts.fetched + self.strength)

    def is_barren(self, key: str) -> bool:
        counts = self._counts.get(key)
        return counts is not None and counts.fetched >= self.noise_after and not counts.accepted

    def set_counts(self, key: str, fetched: int, accepted: int) -> None:
        """Counts learned elsewhere (the other workers of a shared crawl)."""
        self._counts[key] = _Counts(fetched, accepted)
