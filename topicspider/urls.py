"""Link addresses as browsers send them, and the words in an address.

A link's path goes out in UTF-8 and its query in the page's encoding, so the same page
linked from a GBK and a UTF-8 page is one address, and one request.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from urllib.parse import unquote_to_bytes, urljoin, urlsplit

from w3lib.html import strip_html5_whitespace
from w3lib.url import safe_url_string

from topicspider.urlpatterns import without_session

__all__ = ["link_url", "on_sites", "url_words"]

_URL_SPLIT = re.compile(r"[^\w]+|_")
#: URLs made only of these need no escaping (``%`` is left to ``safe_url_string`` to check).
_SAFE_URL = re.compile(r"[A-Za-z0-9\-._~:/?\[\]@!$&'()*+,;=]*")
#: An address up to its query or fragment, where browsers read a backslash as a slash.
_BEFORE_QUERY = re.compile(r"[^?#]*")
_DEFAULT_PORT = re.compile(r"http://[^/?#]*?(:80)(?=[/?#]|$)|https://[^/?#]*?(:443)(?=[/?#]|$)")
_HOST = re.compile(r"https?://(?:[^/?#@]*@)?([^/?#]*)")
#: The error handler that writes a character of a query that the page's encoding lacks as
#: browsers do: a numeric character reference, percent-encoded (``%26%2321271%3B``).
_URL_REFERENCES = "topicspider_url_references"
_URL_NOISE = frozenset(
    [
        "http",
        "https",
        "www",
        "html",
        "htm",
        "shtml",
        "php",
        "asp",
        "aspx",
        "jsp",
        "cgi",
        "index",
        "default",
        "com",
        "cn",
        "org",
        "net",
    ]
)


def _percent_references(error: UnicodeEncodeError) -> tuple[str, int]:
    chars = error.object[error.start : error.end]
    return "".join(f"%26%23{ord(char)}%3B" for char in chars), error.end


codecs.register_error(_URL_REFERENCES, _percent_references)


def link_url(href: str, base_url: str, encoding: str = "utf-8") -> str | None:
    """The absolute URL an ``href`` points to, without its fragment, default port, session
    id and tracking parameters (:func:`~topicspider.urlpatterns.without_session`), read and
    percent-encoded as browsers do (backslashes before the query are slashes; the host in
    lower case, as Scrapy's requests have it; path in UTF-8, query in the page's encoding);
    None for a bogus one."""
    href = strip_html5_whitespace(href)
    if "\\" in href:
        path = _BEFORE_QUERY.match(href).group()
        href = path.replace("\\", "/") + href[len(path) :]
    try:
        url = urljoin(base_url, href).split("#", 1)[0]
        if not _SAFE_URL.fullmatch(url):
            url = _percent_encoded(url, encoding)
        if (host := _HOST.match(url)) and host[1] != host[1].lower():
            url = url[: host.start(1)] + host[1].lower() + url[host.end(1) :]
        if port := _DEFAULT_PORT.match(url):
            start, end = port.span(port.lastindex)
            url = url[:start] + url[end:]
        return without_session(url)
    except ValueError:
        return None


def _percent_encoded(url: str, encoding: str) -> str:
    """The URL as browsers send it: a query in the page's encoding, with references to the
    characters it lacks, or in UTF-8 if the page is in UTF-16 or UTF-32."""
    if codecs.lookup(encoding).name.startswith(("utf-16", "utf-32")):
        encoding = "utf-8"
    path, mark, query = url.partition("?")
    if not query.isascii():
        url = path + mark + query.encode(encoding, _URL_REFERENCES).decode(encoding)
    return safe_url_string(url, encoding)


def _unquoted(part: str, encoding: str) -> str:
    raw = unquote_to_bytes(part)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode(encoding, errors="replace")


def url_words(url: str, encoding: str = "utf-8") -> str:
    """Words in a URL's host-less path and query, for scoring links by their address.

    A browser sends a link's path in UTF-8 and its query in the page's ``encoding``
    (:func:`link_url` writes them so): a GBK page's ``?tag=足球`` is ``%D7%E3%C7%F2``.
    A query or path that is not UTF-8 is read in the page's encoding: a GBK site's own
    links are often written so already (``/%D7%E3%C7%F2/1.html``, its ``/足球/``)."""
    parts = urlsplit(url)
    raw = f"{_unquoted(parts.path, encoding)} {_unquoted(parts.query, encoding)}"
    return " ".join(w for w in _URL_SPLIT.split(raw) if w and w.lower() not in _URL_NOISE)


def on_sites(host: str, domains: Iterable[str]) -> bool:
    """Whether ``host`` (a host name, no port) is one of ``domains`` or their subdomains, as
    Scrapy's offsite filter compares them."""
    return any(host == domain or host.endswith(f".{domain}") for domain in domains)
