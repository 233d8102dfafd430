"""Codec framing: round trips, the framings other clients write, corrupt input."""

from __future__ import annotations

import gzip
import os
import struct

import cramjam
import lz4.frame
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches.compression import Compression, compress, decompress

PAYLOADS = [b"", b"a", b"hello kafka " * 1000, os.urandom(70_000), b"\x00" * 200_000]
CODECS = list(Compression)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: f"{len(p)}B")
def test_round_trip(codec: Compression, payload: bytes) -> None:
    assert decompress(codec, compress(codec, payload)) == payload


def test_gzip_writes_a_gzip_member_stdlib_can_read() -> None:
    data = b"abc" * 1000
    assert gzip.decompress(compress(Compression.GZIP, data)) == data


def test_gzip_reads_concatenated_members() -> None:
    assert decompress(Compression.GZIP, gzip.compress(b"one") + gzip.compress(b"two")) == b"onetwo"


def test_snappy_output_uses_xerial_framing() -> None:
    data = os.urandom(100_000)  # more than one 32 KiB block
    out = compress(Compression.SNAPPY, data)
    assert out[:16] == b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    pos, blocks = 16, []
    while pos < len(out):
        (size,) = struct.unpack_from(">i", out, pos)
        blocks.append(bytes(cramjam.snappy.decompress_raw(out[pos + 4 : pos + 4 + size])))
        pos += 4 + size
    assert len(blocks) == 4
    assert b"".join(blocks) == data


def test_snappy_reads_raw_blocks_and_little_endian_xerial_versions() -> None:
    data = b"raw snappy from some clients " * 50
    assert decompress(Compression.SNAPPY, bytes(cramjam.snappy.compress_raw(data))) == data
    block = bytes(cramjam.snappy.compress_raw(data))
    odd_header = b"\x82SNAPPY\x00" + struct.pack("<ii", 1, 1)
    framed = odd_header + struct.pack(">i", len(block)) + block
    assert decompress(Compression.SNAPPY, framed) == data


def test_lz4_writes_independent_64k_blocks_without_content_size() -> None:
    out = compress(Compression.LZ4, b"x" * 10)
    assert out[:4] == b"\x04\x22\x4d\x18"  # frame magic 0x184D2204, little-endian
    flg, bd = out[4], out[5]
    assert flg & 0x20  # block independence
    assert not flg & 0x08  # no content size
    assert (bd >> 4) & 0x07 == 4  # 64 KiB max block size


def test_lz4_reads_default_frames_from_other_writers() -> None:
    data = b"librdkafka frame " * 10_000
    assert decompress(Compression.LZ4, lz4.frame.compress(data)) == data
    linked = lz4.frame.compress(data, block_linked=True, content_checksum=True)
    assert decompress(Compression.LZ4, linked) == data


def test_zstd_reads_frames_without_content_size_and_several_frames() -> None:
    writer = zstandard.ZstdCompressor(write_content_size=False)
    frames = writer.compress(b"first ") + writer.compress(b"second")
    assert decompress(Compression.ZSTD, frames) == b"first second"
    stream = zstandard.ZstdCompressor().compressobj()
    streamed = stream.compress(b"streamed" * 1000) + stream.flush()
    assert decompress(Compression.ZSTD, streamed) == b"streamed" * 1000


@pytest.mark.parametrize("codec", [c for c in CODECS if c != Compression.NONE])
def test_truncated_input_is_corrupt_message(codec: Compression) -> None:
    out = compress(codec, os.urandom(1000) * 3)
    with pytest.raises(KafkaError) as info:
        decompress(codec, out[: len(out) - 3])
    assert info.value.code == ErrorCode.CORRUPT_MESSAGE


@pytest.mark.parametrize("codec", [5, 7])
def test_unknown_codec(codec: int) -> None:
    for fn in (compress, decompress):
        with pytest.raises(KafkaError) as info:
            fn(codec, b"x")
        assert info.value.code == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE


@settings(max_examples=200, deadline=None)
@given(codec=st.sampled_from(CODECS[1:]), data=st.binary(max_size=300))
def test_arbitrary_input_raises_only_kafka_error(codec: Compression, data: bytes) -> None:
    try:
        decompress(codec, data)
    except KafkaError as exc:
        assert exc.code == ErrorCode.CORRUPT_MESSAGE
