"""Domain-hash partitioning: every site belongs to one partition of the shared frontier.

As in distributed crawlers that assign each site to one node (Mercator, UbiCrawler), the
partition of a URL is a stable hash of its registered domain (``news.example.co.uk`` →
``example.co.uk``) modulo ``TOPIC_PARTITIONS``; a worker serves the partitions listed in
``TOPIC_WORKER_PARTITIONS``. A site then never has two partitions, so its politeness is
decided in one place, and workers can be pinned to sites (e.g. by network location).
"""

from __future__ import annotations

import ipaddress
import zlib
from functools import lru_cache
from typing import TYPE_CHECKING

import tldextract

from topicspider.exceptions import ConfigError

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["parse_worker_partitions", "partition_of", "registered_domain"]

# The public suffix list bundled with tldextract: never fetched, never cached on disk.
_extract = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


@lru_cache(maxsize=65536)
def registered_domain(host: str) -> str:
    """The domain a registrar sold, or the host itself for IP addresses and bare names.

    >>> registered_domain("news.bbc.co.uk"), registered_domain("127.0.0.1")
    ('bbc.co.uk', '127.0.0.1')
    """
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return _extract(host).top_domain_under_public_suffix or host
    return host


def partition_of(host: str, partitions: int) -> int:
    """The partition of a host: CRC-32 of its registered domain, the same on every machine."""
    if partitions <= 1:
        return 0
    return zlib.crc32(registered_domain(host).encode()) % partitions


def parse_worker_partitions(values: Iterable[str | int], partitions: int) -> tuple[int, ...]:
    """``TOPIC_WORKER_PARTITIONS`` (``0,2``; empty: all) → sorted partition numbers.

    >>> parse_worker_partitions(["2", " 0"], 4), parse_worker_partitions([], 3)
    ((0, 2), (0, 1, 2))
    """
    if partitions < 1:
        raise ConfigError(f"TOPIC_PARTITIONS={partitions}: must be at least 1")
    chosen = set()
    for value in values:
        try:
            number = int(value)
        except ValueError:
            raise ConfigError(f"TOPIC_WORKER_PARTITIONS: {value!r} is not a number") from None
        if not 0 <= number < partitions:
            raise ConfigError(
                f"TOPIC_WORKER_PARTITIONS: {number} is not a partition (0 to {partitions - 1})"
            )
        chosen.add(number)
    return tuple(sorted(chosen)) or tuple(range(partitions))
