"""Compressed bodies read as Scrapy's decompression reads them."""

from __future__ import annotations

import gzip
import zlib

import pytest

from topicspider.inflate import inflate

TEXT = "足球比赛报道\n".encode() * 200


def raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


@pytest.mark.parametrize("compress", [gzip.compress, zlib.compress, raw_deflate])
def test_gzip_zlib_and_raw_deflate_are_read_up_to_a_length(compress):
    assert inflate(compress(TEXT)) == TEXT
    assert inflate(compress(TEXT), 100) == TEXT[:100]


def test_a_body_that_is_none_of_them_raises():
    with pytest.raises(zlib.error):
        inflate(b"User-agent: *\nDisallow: /private/\n")
