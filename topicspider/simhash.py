"""SimHash fingerprints of page text, and an index to find near-duplicates fast.

Two pages whose 64-bit SimHashes differ in at most k bits are near-duplicates
(Charikar's SimHash; k = 3 for 64 bits, as Manku et al. found for web pages).
The index splits a fingerprint into k + 1 blocks: two fingerprints within k
bits agree on at least one whole block, so a lookup only compares candidates
sharing a block.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from collections import Counter
from collections.abc import Iterable

import numpy as np

__all__ = ["SimHashIndex", "simhash"]

BITS = 64
#: The most bits a near-duplicate may differ by: the index splits a fingerprint into
#: distance + 1 blocks, which must stay at least 4 bits wide.
MAX_DISTANCE = 15
_MASK = (1 << BITS) - 1


@functools.lru_cache(maxsize=1 << 18)
def _hash(token: str) -> bytes:
    return hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()


def simhash(tokens: Iterable[str]) -> int:
    """64-bit SimHash of tokens weighted by their counts (stable across processes)."""
    counts = Counter(tokens)
    if not counts:
        return 0
    digests = np.frombuffer(b"".join(map(_hash, counts)), dtype=np.uint8).reshape(-1, 8)
    bits = np.unpackbits(digests, axis=1)  # big-endian bit order
    # Each bit's weighted vote, +count for a 1 and -count for a 0, is positive when the
    # counts of the tokens with a 1 there outweigh half of all counts: one product in
    # floating point (exact: whole numbers far below 2**53), without a ±1 copy of the bits.
    weights = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
    return int.from_bytes(np.packbits(2 * (weights @ bits) > weights.sum()).tobytes(), "big")


def near(first: int, second: int, distance: int) -> bool:
    """Whether two fingerprints are within ``distance`` bits of each other."""
    return ((first ^ second) & _MASK).bit_count() <= distance


class SimHashIndex:
    """Fingerprints seen so far, searchable for any within ``distance`` bits."""

    def __init__(self, distance: int = 3, fingerprints: Iterable[int] = ()) -> None:
        if not 0 <= distance <= MAX_DISTANCE:
            raise ValueError(f"distance must be within [0, {MAX_DISTANCE}], got {distance}")
        self.distance = distance
        blocks = distance + 1
        edges = [BITS * i // blocks for i in range(blocks + 1)]
        self._blocks = [(lo, (1 << (hi - lo)) - 1) for lo, hi in itertools.pairwise(edges)]
        self._tables: list[dict[int, list[int]]] = [{} for _ in self._blocks]
        self.fingerprints: list[int] = []
        for fingerprint in fingerprints:
            self.add(fingerprint)

    def resume(self, saved: SimHashIndex) -> None:
        """Take a paused crawl's fingerprints, searched within this index's ``distance``."""
        if saved.distance == self.distance:
            self._tables, self.fingerprints = saved._tables, saved.fingerprints
        else:
            for fingerprint in saved.fingerprints:
                self.add(fingerprint)

    def blocks(self, fingerprint: int) -> list[int]:
        """The fingerprint's k + 1 blocks, in the order of the index's tables."""
        return [fingerprint >> shift & mask for shift, mask in self._blocks]

    def near(self, fingerprint: int) -> int | None:
        """A stored fingerprint within ``distance`` bits, or None."""
        for table, block in zip(self._tables, self.blocks(fingerprint), strict=True):
            for candidate in table.get(block, ()):
                if near(candidate, fingerprint, self.distance):
                    return candidate
        return None

    def add(self, fingerprint: int) -> None:
        self.fingerprints.append(fingerprint)
        for table, block in zip(self._tables, self.blocks(fingerprint), strict=True):
            table.setdefault(block, []).append(fingerprint)

    def add_if_new(self, fingerprint: int, url: str = "") -> bool:
        """Add the fingerprint unless one within ``distance`` bits is stored: whether it was.

        ``url``, the page's, is the shared index's to know a page fetched again after a
        worker was killed (:class:`~topicspider.redis.simhashes.SharedSimHashIndex`); with
        this one, the spider knows such a page by the addresses it keeps of stored pages."""
        if self.near(fingerprint) is not None:
            return False
        self.add(fingerprint)
        return True
