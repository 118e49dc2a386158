"""Session fixtures: the demo site, written once and served on a free local port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from demo.site import SiteInfo, serve, write_site


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> SiteInfo:
    return write_site(tmp_path_factory.mktemp("site"))


@pytest.fixture(scope="session")
def site_url(site: SiteInfo) -> Iterator[str]:
    server, url = serve(site.root)
    yield url
    server.shutdown()
    server.server_close()
