"""A robots.txt that cannot be downloaded: one line, and the crawl goes on."""

from __future__ import annotations

import pytest

from demo.site import serve
from tests.test_spider import crawl_seed, read_jsonl


@pytest.fixture
def site_without_robots(site):
    """The fixture site, but a request for robots.txt gets its connection closed unanswered."""
    server, url = serve(site.root)

    class NoRobots(server.RequestHandlerClass):
        def do_GET(self) -> None:
            if self.path == "/robots.txt":
                self.close_connection = True
                return
            super().do_GET()

    server.RequestHandlerClass = NoRobots
    yield url
    server.shutdown()
    server.server_close()


def test_a_site_whose_robots_txt_fails_is_crawled_and_said_so_in_one_line(
    site, site_without_robots, tmp_path
):
    result = crawl_seed(f"{site_without_robots}{site.seed_path}", tmp_path, "RETRY_TIMES=0")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    robots = f"{site_without_robots}/robots.txt"
    warnings = [line for line in result.stderr.splitlines() if f"Not fetched {robots}" in line]
    assert len(warnings) == 1, result.stderr[-3000:]
    assert "as if it allowed all" in warnings[0]
    assert len(read_jsonl(tmp_path / "pages" / "index.jsonl")) >= 10


def test_an_unreachable_seed_is_one_line_per_request_not_a_traceback(tmp_path):
    seed = "http://127.0.0.1:9/"
    result = crawl_seed(seed, tmp_path, "RETRY_TIMES=0")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert f"Not fetched {seed}robots.txt (the host's pages are fetched as if" in result.stderr
    assert f"WARNING: Not fetched {seed}: Connection was refused" in result.stderr
