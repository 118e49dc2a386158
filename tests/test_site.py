"""The demo site keeps the promises other tests rely on: encodings, link shape and server."""

from __future__ import annotations

import html
import http.client
import re
import subprocess
import sys
from collections import deque
from email.message import Message
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import pytest

from demo.server import serve
from demo.site import SiteInfo

ORIGIN = "http://demo.test"
REPO = Path(__file__).resolve().parent.parent


# --- Helpers ----------------------------------------------------------------


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.base: str | None = None
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if not href:
            return
        if tag == "base" and self.base is None:
            self.base = href
        elif tag == "a":
            self.hrefs.append(href)


def _text(site: SiteInfo, path: str) -> str:
    return _bytes(site, path).decode(site.encodings[path])


def _bytes(site: SiteInfo, path: str) -> bytes:
    return (site.root / path.lstrip("/")).read_bytes()


def _parse(site: SiteInfo, path: str) -> _Links:
    parser = _Links()
    parser.feed(_text(site, path))
    return parser


def _outlinks(site: SiteInfo, path: str, honour_base: bool = True) -> set[str]:
    """Absolute URLs a page links to, fragments dropped, resolved as a browser would."""
    parser = _parse(site, path)
    base = ORIGIN + path
    if parser.base and honour_base:
        base = urljoin(base, parser.base)
    return {urldefrag(urljoin(base, href)).url for href in parser.hrefs}


def _internal(urls: set[str]) -> set[str]:
    return {urlsplit(url).path for url in urls if url.startswith(ORIGIN + "/")}


def _graph(site: SiteInfo) -> dict[str, set[str]]:
    return {p: _internal(_outlinks(site, p)) & site.pages for p in site.pages}


def _depths(graph: dict[str, set[str]], start: str, avoid: str | None = None) -> dict[str, int]:
    """Breadth-first link depth of each page reachable from ``start`` without ``avoid``."""
    depths = {start: 0}
    queue = deque([start])
    while queue:
        page = queue.popleft()
        for target in sorted(graph[page]):
            if target not in depths and target != avoid:
                depths[target] = depths[page] + 1
                queue.append(target)
    return depths


def _fetch(base_url: str, path: str, method: str = "GET") -> tuple[int, Message, bytes]:
    """Raw request: http.client sends ``path`` untouched and ignores proxy settings."""
    url = urlsplit(base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        conn.request(method, path)
        response = conn.getresponse()
        return response.status, response.headers, response.read()
    finally:
        conn.close()


def _declared_charsets(site: SiteInfo, path: str) -> set[str]:
    head = _text(site, path).split("</head>")[0]
    declared = set(re.findall(r'charset="?([\w-]+)', head, flags=re.IGNORECASE))
    content_type = site.headers.get(path, {}).get("Content-Type", "")
    declared.update(re.findall(r"charset=([\w-]+)", content_type))
    return {name.lower() for name in declared}


_FAMILY = {"utf-8": "utf-8", "gbk": "gbk", "gb2312": "gbk"}


# --- The generator ------------------------------------------------------------


def test_site_shape(site: SiteInfo) -> None:
    sports = {p for p in site.pages if p.startswith("/sports/")}
    english_football = {p for p in site.pages if p.startswith("/en/football/")}
    assert 40 <= len(site.pages) <= 60
    assert 12 <= len(sports) <= 15
    assert 5 <= len(english_football) <= 7
    assert site.on_topic == sports | english_football
    assert len(site.pages - site.on_topic) >= 2 * len(sports)
    assert site.seed_path in site.pages
    assert site.hub_path in site.pages
    assert len(sports & site.gbk_pages) >= 4
    assert site.gbk_pages - sports, "off-topic sections have GBK pages too"
    assert site.assets
    assert all((site.root / a.lstrip("/")).is_file() for a in site.assets)


def test_gbk_pages_are_not_utf8(site: SiteInfo) -> None:
    for path in site.gbk_pages:
        data = _bytes(site, path)
        with pytest.raises(UnicodeDecodeError):
            data.decode("utf-8")
        text = data.decode("gb18030")
        assert text == data.decode(site.encodings[path])
        if path in site.on_topic:
            assert "足球" in text, path


def test_every_page_decodes_with_its_true_encoding(site: SiteInfo) -> None:
    for path in site.pages:
        text = _bytes(site, path).decode(site.encodings[path])  # strict: raises on bad bytes
        assert "\ufffd" not in text
        title = re.search(r"<title>(.*?)</title>", text)
        assert title, path
        assert html.unescape(title[1]) == site.titles[path], path
        assert '<nav class="site-nav">' in text
        if not path.startswith("/en/"):
            assert len(re.findall(r"[\u4e00-\u9fff]", text)) >= 50, path


def test_charset_declarations_are_honest_except_the_wrong_header_pages(site: SiteInfo) -> None:
    families = {p: {_FAMILY[c] for c in _declared_charsets(site, p)} for p in site.pages}
    for path, declared in families.items():
        truth = _FAMILY[site.encodings[path]]
        if path in site.wrong_header_pages:
            assert site.headers[path]["Content-Type"].endswith("charset=gbk")
            assert truth == "utf-8"
            assert declared == {"utf-8", "gbk"}
        else:
            assert declared <= {truth}, path
    bare_gbk = [p for p in site.gbk_pages & site.on_topic if not families[p]]
    assert bare_gbk, "a GBK sports page declares no charset at all"
    assert all(site.headers[p] == {"Content-Type": "text/html"} for p in bare_gbk)
    assert any(_declared_charsets(site, p) == {"gb2312"} for p in site.gbk_pages)
    assert any(_declared_charsets(site, p) == {"gbk"} for p in site.gbk_pages)


def test_sports_are_reachable_only_through_the_hub(site: SiteInfo) -> None:
    graph = _graph(site)
    depths = _depths(graph, site.seed_path)
    assert set(depths) == site.pages, "every page is reachable from the seed"
    assert site.on_topic.isdisjoint(graph[site.seed_path])
    assert site.on_topic.isdisjoint(_depths(graph, site.seed_path, avoid=site.hub_path))
    assert depths["/sports/index.html"] == 2
    assert "/sports/index.html" in graph[site.hub_path]
    assert site.hub_path not in site.on_topic


def test_breadth_first_wastes_fetches_on_offtopic_pages(site: SiteInfo) -> None:
    depths = _depths(_graph(site), site.seed_path)
    first_article = min(depths[p] for p in site.on_topic if not p.endswith("/index.html"))
    offtopic_before = [p for p, d in depths.items() if d < first_article and p not in site.on_topic]
    assert len(offtopic_before) >= 25


def test_sports_articles_link_to_each_other(site: SiteInfo) -> None:
    graph = _graph(site)
    for path in site.on_topic:
        assert len(graph[path] & site.on_topic - {path}) >= 3, path


def test_anchor_text_describes_the_target(site: SiteInfo) -> None:
    """In-text anchors repeat the target's title, so a link can be scored before fetching."""
    pattern = re.compile(r'<a href="([^"#]+\.html)(?:#\w+)?">([^<]+)</a>')
    described = 0
    for path in site.on_topic - {p for p in site.on_topic if p.endswith("/index.html")}:
        for href, anchor in pattern.findall(_text(site, path)):
            target = urlsplit(urljoin(ORIGIN + path, href)).path
            if target in site.titles and site.titles[target].startswith(html.unescape(anchor)):
                described += 1
    assert described >= 3 * len(site.on_topic - {"/sports/index.html"}) // 2


def test_internal_links_point_at_files_once_base_is_honoured(site: SiteInfo) -> None:
    for path in site.pages:
        for target in _internal(_outlinks(site, path)):
            assert (site.root / target.lstrip("/")).is_file(), f"{path} -> {target}"
    with_base = [p for p in site.pages if _parse(site, p).base]
    assert len(with_base) == 1
    ignoring_base = _internal(_outlinks(site, with_base[0], honour_base=False))
    assert not all((site.root / t.lstrip("/")).is_file() for t in ignoring_base)


def test_seed_links_to_the_traps(site: SiteInfo) -> None:
    links = _outlinks(site, site.seed_path)
    assert any(url.startswith("mailto:") for url in links)
    assert site.offsite_urls & links
    assert {ORIGIN + p for p in site.disallowed} <= links
    assert any(url.endswith(".pdf") for url in links)
    assert any(url.endswith(".jpg") for url in links)
    every_link = set().union(*(_outlinks(site, p) for p in site.pages))
    assert site.offsite_urls <= every_link


# --- The server ---------------------------------------------------------------


def test_server_serves_bytes_and_headers(site: SiteInfo, site_url: str) -> None:
    status, headers, body = _fetch(site_url, site.seed_path)
    assert status == 200
    assert headers["Content-Type"] == "text/html"
    assert body == _bytes(site, site.seed_path)
    for path, expected in site.headers.items():
        status, headers, body = _fetch(site_url, path)
        assert status == 200
        assert body == _bytes(site, path)
        for name, value in expected.items():
            assert headers[name] == value, path


def test_server_serves_gbk_bytes_untouched(site: SiteInfo, site_url: str) -> None:
    path = sorted(site.gbk_pages & site.on_topic)[0]
    status, headers, body = _fetch(site_url, path)
    assert status == 200
    assert body == _bytes(site, path)
    assert int(headers["Content-Length"]) == len(body)


@pytest.mark.parametrize(
    ("path", "content_type"),
    [("/files/menu.pdf", "application/pdf"), ("/images/dumplings.jpg", "image/jpeg")],
)
def test_server_types_files_by_extension(site_url: str, path: str, content_type: str) -> None:
    status, headers, body = _fetch(site_url, path)
    assert status == 200
    assert headers["Content-Type"] == content_type
    assert body


@pytest.mark.parametrize(
    "path",
    [
        "/missing.html",
        "/images/",
        "/sports",
        "/_headers.json",
        "/../index.html",
        "/%2e%2e/index.html",
        "/sports/../../etc/passwd",
    ],
)
def test_server_404s_what_is_not_a_page(site_url: str, path: str) -> None:
    status, _, _ = _fetch(site_url, path)
    assert status == 404


def test_server_serves_pages_whose_names_start_with_an_underscore(tmp_path: Path) -> None:
    (tmp_path / "library").mkdir()
    (tmp_path / "library" / "_thread.html").write_text("<p>_thread</p>", "utf-8")
    (tmp_path / "_headers.json").write_text("{}", "utf-8")
    server, base = serve(tmp_path)
    try:
        assert _fetch(base, "/library/_thread.html")[:3:2] == (200, b"<p>_thread</p>")
        assert _fetch(base, "/_headers.json")[0] == 404
    finally:
        server.shutdown()
        server.server_close()


def test_server_maps_directories_to_their_index(site: SiteInfo, site_url: str) -> None:
    assert _fetch(site_url, "/")[2] == _bytes(site, "/index.html")
    assert _fetch(site_url, "/sports/")[2] == _bytes(site, "/sports/index.html")


def test_server_answers_head_without_a_body(site: SiteInfo, site_url: str) -> None:
    status, headers, body = _fetch(site_url, site.hub_path, method="HEAD")
    assert status == 200
    assert body == b""
    assert int(headers["Content-Length"]) == len(_bytes(site, site.hub_path))


def test_robots_txt_forbids_only_the_private_folder(site: SiteInfo, site_url: str) -> None:
    status, headers, body = _fetch(site_url, "/robots.txt")
    assert status == 200
    assert headers["Content-Type"] == "text/plain"
    robots = RobotFileParser()
    robots.parse(body.decode().splitlines())
    for path in site.disallowed:
        assert not robots.can_fetch("topicspider", site_url + path)
        assert _fetch(site_url, path)[0] == 200, "the server itself does not enforce robots.txt"
    assert all(robots.can_fetch("topicspider", site_url + p) for p in site.pages - site.disallowed)


def test_command_line_prints_the_url_first(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "demo.site", "--out", str(tmp_path)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url)
        assert _fetch(url, "/hub.html")[0] == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)
