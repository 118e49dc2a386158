"""Bodies in a ``Content-Encoding`` zlib undoes, read as Scrapy's decompression reads them."""

from __future__ import annotations

import zlib

__all__ = ["ZLIB_CODINGS", "inflate"]

#: The ``Content-Encoding`` values zlib undoes.
ZLIB_CODINGS = ("gzip", "x-gzip", "deflate")


def inflate(data: bytes, max_length: int = 0) -> bytes:
    """``data`` decompressed, at most ``max_length`` bytes of it (0: all): gzip or zlib by
    their header, else raw deflate, as IIS sends it. Raises ``zlib.error`` if it is none."""
    try:
        return zlib.decompressobj(zlib.MAX_WBITS | 32).decompress(data, max_length)
    except zlib.error:
        return zlib.decompressobj(-zlib.MAX_WBITS).decompress(data, max_length)
