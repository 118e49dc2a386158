"""Shared fixtures: the demo site, written once and served on a free local port; a MariaDB;
a redis-server per test module."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import uuid
from collections.abc import Iterator

import pytest

from demo.mariadb import MariaDB
from demo.site import SiteInfo, serve, write_site
from tests.httpserver import Handler, serving
from tests.redis_server import RedisServer


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> SiteInfo:
    return write_site(tmp_path_factory.mktemp("site"))


@pytest.fixture(scope="session")
def site_url(site: SiteInfo) -> Iterator[str]:
    server, url = serve(site.root)
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A redis-server of the test module's own, started and stopped around it."""
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(autouse=True, scope="session")
def _no_mysql_url_from_the_environment() -> Iterator[None]:
    """A developer's TOPICSPIDER_MYSQL_URL must not send every test crawl to their database."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("TOPICSPIDER_MYSQL_URL", raising=False)
        yield


@pytest.fixture(scope="session")
def mysql_password() -> str:
    """The password of the tests' MariaDB user: characters a URL must quote, and a string no
    log contains by chance, so tests can look for it."""
    return "Sekr3t/p@ss:4711"


@pytest.fixture(scope="session")
def mariadb(tmp_path_factory: pytest.TempPathFactory, mysql_password: str) -> Iterator[MariaDB]:
    """A real MariaDB on 127.0.0.1, on a free port, in a temporary folder."""
    server = MariaDB(tmp_path_factory.mktemp("mariadb"), password=mysql_password)
    server.start()
    yield server
    server.stop()
    shutil.rmtree(server.folder, ignore_errors=True)


@pytest.fixture
def mysql_url(mariadb: MariaDB) -> str:
    """The URL of a new, empty database on the session's MariaDB."""
    return mariadb.create_database(f"test_{uuid.uuid4().hex[:12]}")


@pytest.fixture(scope="session")
def serial_crawl(site, site_url, tmp_path_factory):
    """The pages a crawl of the fixture site fetches one request at a time: a deterministic
    set to compare paused, resumed and crashed crawls with."""
    from tests.test_spider import ONE_AT_A_TIME, crawl_command, paths, read_jsonl, scrapy

    out = tmp_path_factory.mktemp("serial")
    result = scrapy(*crawl_command(site_url, site, out, *ONE_AT_A_TIME))
    assert result.returncode == 0, result.stderr[-3000:]
    return set(paths(read_jsonl(out / "fetch.jsonl")))


@pytest.fixture
def redirect():
    """A server on 127.0.0.1 that sends every page to the URL it is given (none for
    robots.txt); returns its base URL."""
    servers = contextlib.ExitStack()

    def serve_redirect(target: str) -> str:
        class Moved(Handler):
            def do_GET(self) -> None:
                if self.path == "/robots.txt":
                    self.send(b"", status=404)
                else:
                    self.send(b"", status=301, Location=target)

        return servers.enter_context(serving(Moved))

    with servers:
        yield serve_redirect


@pytest.fixture(scope="module")
def lost_mariadb(tmp_path_factory, mysql_password) -> Iterator[MariaDB]:
    """A MariaDB of the module's own, for tests that stop, start or hang it."""
    server = MariaDB(tmp_path_factory.mktemp("lost-mariadb"), password=mysql_password)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def small_fs(tmp_path):
    """Mounts a small file system (tmpfs) of the given size and options at a fresh folder;
    unmounts it after."""
    mounted = []

    def mount(size: str, options: str = "rw"):
        target = tmp_path / f"fs{len(mounted)}"
        target.mkdir()
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},{options}", "tmpfs", str(target)],
            check=True,
        )
        mounted.append(target)
        return target

    yield mount
    for target in mounted:
        subprocess.run(["umount", "-l", str(target)], check=False)
