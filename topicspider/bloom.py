"""A Bloom filter of request fingerprints: dedup in constant memory, about 1.8 bytes per URL.

An exact set of fingerprints grows by some 100 bytes per seen URL; a Bloom filter
sized for ``capacity`` URLs at false-positive rate ``p`` needs
``1.44 * log2(1 / p)`` bits per URL (14.4 bits at 0.1%), whatever the URLs. The price:
with probability ``p`` a URL never seen is reported as seen, so a crawl of ``n`` URLs
skips about ``p * n`` pages it would have fetched. It never lets a duplicate through.
Past ``capacity`` the rate grows (see :meth:`BloomFilter.false_positive_rate`).

The bits live in a :class:`BitStore`: local bytes (:class:`LocalBits`: in memory, or a
file mapped into memory that every bit set reaches at once) or a Redis string shared by
many crawlers (:class:`RedisBits`, one round trip per URL, none for recently seen ones).
The workers of a crawl in Redis set the bits in batches instead, inside the frontier's
script (:mod:`topicspider.redis.dupefilter`), with positions from
:meth:`BloomFilter.positions`.
"""

from __future__ import annotations

import hashlib
import math
import mmap
import os
import struct
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from topicspider import atomic

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redis import Redis
    from typing_extensions import Self

__all__ = ["BitStore", "BloomFilter", "LocalBits", "RedisBits", "optimal_size"]

#: A Redis string holds at most 512 MiB: about 298 million URLs at 0.1%.
REDIS_MAX_BITS = 2**32


def optimal_size(capacity: int, error_rate: float) -> tuple[int, int]:
    """Bits ``m`` and hash functions ``k`` for ``capacity`` items at ``error_rate``.

    >>> optimal_size(1_000_000, 0.001)
    (14377588, 10)
    """
    if capacity < 1:
        raise ValueError(f"capacity must be at least 1, got {capacity}")
    if not 0.0 < error_rate < 1.0:
        raise ValueError(f"error rate must be within (0, 1), got {error_rate}")
    bits = math.ceil(-capacity * math.log(error_rate) / math.log(2) ** 2)
    return bits, max(1, round(bits / capacity * math.log(2)))


class BitStore(Protocol):
    """Where a Bloom filter's bits live."""

    size: int

    def add(self, positions: Sequence[int]) -> bool:
        """Set the bits; return whether all of them were set already."""

    def contains(self, positions: Sequence[int]) -> bool:
        """Whether all the bits are set."""


class LocalBits:
    """The bits in a ``bytearray`` of this process, or in a writable view of a mapped file."""

    def __init__(self, size: int, data: bytearray | memoryview | None = None) -> None:
        self.size = size
        self.data = data if data is not None else bytearray((size + 7) // 8)
        if len(self.data) != (size + 7) // 8:
            raise ValueError(f"{len(self.data)} bytes do not hold {size} bits")

    def add(self, positions: Sequence[int]) -> bool:
        data = self.data
        seen = True
        for position in positions:
            mask = 1 << (position & 7)
            byte = position >> 3
            if not data[byte] & mask:
                data[byte] |= mask
                seen = False
        return seen

    def contains(self, positions: Sequence[int]) -> bool:
        data = self.data
        return all(data[position >> 3] & (1 << (position & 7)) for position in positions)


class RedisBits:
    """The bits in one Redis string, shared by every crawler that uses ``key`` with the
    same ``size`` and number of hashes. A test-and-set is one ``BITFIELD`` command (atomic,
    one round trip).
    """

    def __init__(self, client: Redis, key: str, size: int) -> None:
        if size > REDIS_MAX_BITS:
            raise ValueError(f"a Redis string holds at most {REDIS_MAX_BITS} bits, not {size}")
        self.client = client
        self.key = key
        self.size = size

    def _set_command(self, positions: Sequence[int]) -> list[str | int]:
        command: list[str | int] = ["BITFIELD", self.key]
        for position in positions:
            command += ["SET", "u1", position, 1]
        return command

    def add(self, positions: Sequence[int]) -> bool:
        return all(self.client.execute_command(*self._set_command(positions)))

    def contains(self, positions: Sequence[int]) -> bool:
        command: list[str | int] = ["BITFIELD_RO", self.key]
        for position in positions:
            command += ["GET", "u1", position]
        return all(self.client.execute_command(*command))


class BloomFilter:
    """Set membership of byte strings (request fingerprints) in a fixed number of bits.

    Positions come from double hashing (Kirsch and Mitzenmacher): ``h1 + i * h2`` for
    ``i < hashes``, with ``h1`` and ``h2`` the two halves of a BLAKE2b digest of the
    item, so any fingerprinter's output spreads evenly. ``cache_size`` keeps that many
    recently seen items in front of the bits: an item seen once stays seen, so the
    cache never lies, and a remote store is asked once per new item only.
    """

    MAGIC = b"TSBLOOM1"
    HEADER = struct.Struct("<8sQQQ")  # magic, bits, hashes, count
    _COUNT = struct.Struct("<Q")
    _COUNT_OFFSET = HEADER.size - _COUNT.size

    def __init__(self, bits: BitStore, hashes: int, *, count: int = 0, cache_size: int = 0):
        self.bits = bits
        self.hashes = hashes
        #: Items added that were not in the filter before: by this process, or for a
        #: shared filter the count its owner keeps (``RedisBloomDupeFilter``).
        self.count = count
        self.cache_size = cache_size
        self._cache: OrderedDict[bytes, None] = OrderedDict()
        #: The file this filter's header and bits are mapped from (:meth:`open`).
        self._mapped: mmap.mmap | None = None

    @classmethod
    def local(cls, capacity: int, error_rate: float) -> Self:
        """A filter in this process's memory, sized for ``capacity`` items at ``error_rate``."""
        size, hashes = optimal_size(capacity, error_rate)
        return cls(LocalBits(size), hashes)

    def positions(self, item: bytes) -> list[int]:
        digest = hashlib.blake2b(item, digest_size=16).digest()
        h1 = int.from_bytes(digest[:8], "little")
        h2 = int.from_bytes(digest[8:], "little") | 1
        size = self.bits.size
        return [(h1 + i * h2) % size for i in range(self.hashes)]

    def add(self, item: bytes) -> bool:
        """Add the item; return whether it was (probably) in the filter already."""
        if item in self._cache:
            self._cache.move_to_end(item)
            return True
        seen = self.bits.add(self.positions(item))
        if not seen:
            self.count += 1
            if self._mapped is not None:
                self._COUNT.pack_into(self._mapped, self._COUNT_OFFSET, self.count)
        if self.cache_size:
            self._cache[item] = None
            if len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return seen

    def __contains__(self, item: bytes) -> bool:
        return item in self._cache or self.bits.contains(self.positions(item))

    @property
    def capacity(self) -> int:
        """The items the filter holds at the false-positive rate it was sized for: about
        half its bits are set then (``optimal_size`` sizes it so), for a filter made with
        settings no longer at hand (a file).

        >>> BloomFilter.local(1_000_000, 0.001).capacity
        996578
        """
        return round(self.bits.size * math.log(2) / self.hashes)

    def false_positive_rate(self, count: int | None = None) -> float:
        """The expected false-positive rate with ``count`` items in (default: ``self.count``)."""
        n = self.count if count is None else count
        return (1.0 - math.exp(-self.hashes * n / self.bits.size)) ** self.hashes

    # Local filters only: the bits in a file, so that a crawl resumes with them.

    def save(self, path: Path) -> None:
        """Write the filter to ``path`` whole or not at all (:func:`topicspider.atomic.replace`)."""
        if not isinstance(self.bits, LocalBits):
            raise TypeError("only a filter with LocalBits can be saved")
        header = self.HEADER.pack(self.MAGIC, self.bits.size, self.hashes, self.count)
        atomic.replace(path, (header, self.bits.data))

    @classmethod
    def open(cls, path: Path, capacity: int, error_rate: float) -> Self:
        """A local filter whose header and bits live in the file ``path``, mapped into memory.

        Every bit set and the count are in the file as soon as they change (the kernel's page
        cache holds them for the next process), so a crawl killed outright resumes with what
        it had seen; only losing the machine before the pages reach the disk loses any. A new
        file is sized for ``capacity`` items at ``error_rate``; an existing one keeps its size.
        """
        if not path.exists():
            size, hashes = optimal_size(capacity, error_rate)
            cls(LocalBits(size), hashes).save(path)
        with path.open("r+b") as file:
            if os.fstat(file.fileno()).st_size < cls.HEADER.size:
                raise ValueError(f"{path}: not a Bloom filter file (too short)")
            mapped = mmap.mmap(file.fileno(), 0)  # the mapping outlives the file object
        magic, size, hashes, count = cls.HEADER.unpack(mapped[: cls.HEADER.size])
        if magic != cls.MAGIC or len(mapped) != cls.HEADER.size + (size + 7) // 8:
            mapped.close()
            raise ValueError(f"{path}: not a Bloom filter file (or a truncated one)")
        bloom = cls(LocalBits(size, memoryview(mapped)[cls.HEADER.size :]), hashes, count=count)
        bloom._mapped = mapped
        return bloom

    def close(self) -> None:
        """Unmap a filter from :meth:`open` (its pages are flushed to the file first)."""
        if self._mapped is None:
            return
        assert isinstance(self.bits, LocalBits)
        assert isinstance(self.bits.data, memoryview)
        self._mapped.flush()
        self.bits.data.release()
        self._mapped.close()
        self._mapped = None
