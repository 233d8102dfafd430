"""decompress(..., limit=): never more than ``limit`` bytes out, whatever the input claims.

A "bomb" (hundreds of MB of zeros, compressed by each codec's own compressor)
must be refused with INVALID_RECORD after inflating no more than the limit: the
process's peak RSS and Python's peak allocation stay megabytes, not the
bomb's size.  Truncated and corrupt input is still CORRUPT_MESSAGE, and any
input within the limit round-trips exactly as without one."""

from __future__ import annotations

import gzip
import os
import struct
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import cramjam
import lz4.frame
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches.compression import (
    Compression,
    DecompressedTooLarge,
    compress,
    decompress,
)

CODECS = [Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]
BOMB_BYTES = 200 << 20
LIMIT = 1 << 20
MB = 1 << 20


@pytest.fixture(scope="module")
def bombs() -> Iterator[dict[Compression, bytes]]:
    zeros = bytes(BOMB_BYTES)
    yield {codec: compress(codec, zeros) for codec in CODECS}


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


def peak_growth(action: Callable[[], object]) -> tuple[int, int]:
    """(peak RSS growth, peak Python allocation) in bytes while ``action`` runs.

    The kernel's peak RSS mark is reset first (``clear_refs`` 5), so the peak
    read after is this action's."""
    Path("/proc/self/clear_refs").write_text("5")
    before = _status_kb("VmRSS")
    tracemalloc.start()
    try:
        action()
    finally:
        _, traced_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return (_status_kb("VmHWM") - before) * 1024, traced_peak


@pytest.mark.parametrize("codec", CODECS)
def test_a_bomb_is_refused_without_inflating_it(
    codec: Compression, bombs: dict[Compression, bytes]
) -> None:
    bomb = bombs[codec]
    assert len(bomb) < BOMB_BYTES // 20

    def refuse() -> None:
        with pytest.raises(DecompressedTooLarge) as refused:
            decompress(codec, bomb, limit=LIMIT)
        assert refused.value.code == ErrorCode.INVALID_RECORD
        assert refused.value.limit == LIMIT
        assert f"more than {LIMIT} bytes" in str(refused.value)

    started = time.perf_counter()
    rss_growth, allocated = peak_growth(refuse)
    assert time.perf_counter() - started < 2.0  # a fraction of inflating 200 MB
    # The input copy and a piece or two of output; the whole would be 200 MB.
    assert allocated < len(bomb) + 8 * MB
    assert rss_growth < len(bomb) + 32 * MB


@pytest.mark.parametrize("codec", CODECS)
def test_a_limit_at_the_exact_size_passes_one_byte_less_does_not(
    codec: Compression, bombs: dict[Compression, bytes]
) -> None:
    payload = bytes(3 * MB + 17)  # pieces of output meet the limit mid-stream
    data = compress(codec, payload)
    assert decompress(codec, data, limit=len(payload)) == payload
    with pytest.raises(DecompressedTooLarge):
        decompress(codec, data, limit=len(payload) - 1)


def _truncations(data: bytes) -> list[bytes]:
    return [data[:cut] for cut in sorted({1, len(data) // 3, len(data) // 2, len(data) - 1})]


@pytest.mark.parametrize("codec", CODECS)
def test_truncated_input_is_still_corrupt_message(codec: Compression) -> None:
    payload = os.urandom(50_000) + b"kafka " * 20_000
    for cut in _truncations(compress(codec, payload)):
        with pytest.raises(KafkaError) as refused:
            decompress(codec, cut, limit=len(payload))
        assert refused.value.code == ErrorCode.CORRUPT_MESSAGE, len(cut)


def _outcome(action: Callable[[], bytes]) -> bytes | ErrorCode:
    try:
        return action()
    except KafkaError as exc:
        return exc.code


@settings(max_examples=200, deadline=None)
@given(
    codec=st.sampled_from(CODECS),
    at=st.floats(0, 1, exclude_max=True),
    damage=st.binary(min_size=1, max_size=8),
)
def test_damaged_input_reads_as_it_does_without_a_limit(
    codec: Compression, at: float, damage: bytes
) -> None:
    """Corruption the codec detects is refused with or without a limit (as
    INVALID_RECORD where a damaged length claims more than the limit, which the
    bounded read believes before it inflates); what it cannot detect (no
    checksum) reads the same either way."""
    payload = b"hello kafka " * 5000
    data = bytearray(compress(codec, payload))
    start = int(at * len(data))
    data[start : start + len(damage)] = damage
    unbounded = _outcome(lambda: decompress(codec, bytes(data)))
    bounded = _outcome(lambda: decompress(codec, bytes(data), limit=4 * len(payload)))
    if isinstance(unbounded, bytes) and len(unbounded) > 4 * len(payload):
        assert bounded == ErrorCode.INVALID_RECORD
    elif unbounded == ErrorCode.CORRUPT_MESSAGE:
        assert bounded in (ErrorCode.CORRUPT_MESSAGE, ErrorCode.INVALID_RECORD)
    else:
        assert bounded == unbounded


@pytest.mark.parametrize("codec", CODECS)
def test_garbage_is_still_corrupt_message(codec: Compression) -> None:
    with pytest.raises(KafkaError) as garbage:
        decompress(codec, b"\x00\x01not compressed at all" * 10, limit=LIMIT)
    assert garbage.value.code == ErrorCode.CORRUPT_MESSAGE


def test_uncompressed_bytes_are_held_to_the_limit_too() -> None:
    assert decompress(Compression.NONE, b"abc", limit=3) == b"abc"
    with pytest.raises(DecompressedTooLarge):
        decompress(Compression.NONE, b"abcd", limit=3)


def test_the_framings_other_clients_write_stay_readable_under_a_limit() -> None:
    one, two = b"first member " * 100, b"second member " * 100
    both = len(one) + len(two)
    members = gzip.compress(one) + gzip.compress(two) + b"\x00" * 4
    assert decompress(Compression.GZIP, members, limit=both) == one + two
    with pytest.raises(DecompressedTooLarge):
        decompress(Compression.GZIP, members, limit=both - 1)

    raw_snappy = bytes(cramjam.snappy.compress_raw(one))
    assert decompress(Compression.SNAPPY, raw_snappy, limit=len(one)) == one
    with pytest.raises(DecompressedTooLarge):
        decompress(Compression.SNAPPY, raw_snappy, limit=len(one) - 1)
    block = bytes(cramjam.snappy.compress_raw(two))
    odd_header = b"\x82SNAPPY\x00" + struct.pack("<ii", 1, 1)
    xerial = compress(Compression.SNAPPY, one) + odd_header + struct.pack(">i", len(block)) + block
    assert decompress(Compression.SNAPPY, xerial, limit=both) == one + two

    frames = lz4.frame.compress(one, store_size=True) + lz4.frame.compress(two)
    assert decompress(Compression.LZ4, frames, limit=both) == one + two

    streamed = zstandard.ZstdCompressor(write_checksum=True, write_content_size=False)
    skippable = struct.pack("<II", 0x184D2A53, 3) + b"xyz"
    zstd = streamed.compress(one) + skippable + zstandard.ZstdCompressor().compress(two)
    assert decompress(Compression.ZSTD, zstd, limit=both) == one + two
    with pytest.raises(DecompressedTooLarge):
        decompress(Compression.ZSTD, zstd, limit=both - 1)


def test_a_snappy_block_is_refused_on_its_declared_length_before_it_is_inflated() -> None:
    # A raw block whose varint claims 1 GiB: refused on the claim, never allocated.
    claim = bytes([0x80, 0x80, 0x80, 0x80, 0x04])
    with pytest.raises(DecompressedTooLarge):
        decompress(Compression.SNAPPY, claim + b"\x00" * 32, limit=LIMIT)
    block = claim + b"\x00" * 32
    xerial = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + struct.pack(">i", len(block)) + block
    with pytest.raises(DecompressedTooLarge):
        decompress(Compression.SNAPPY, xerial, limit=LIMIT)


def test_a_zstd_frame_with_a_reserved_bit_or_block_type_is_corrupt() -> None:
    frame = bytearray(zstandard.ZstdCompressor().compress(b"abc" * 100))
    reserved_bit = bytearray(frame)
    reserved_bit[4] |= 0x08
    with pytest.raises(KafkaError) as refused:
        decompress(Compression.ZSTD, bytes(reserved_bit), limit=LIMIT)
    assert refused.value.code == ErrorCode.CORRUPT_MESSAGE
    with pytest.raises(KafkaError) as trailing:
        decompress(Compression.ZSTD, bytes(frame) + b"garbage!", limit=LIMIT)
    assert trailing.value.code == ErrorCode.CORRUPT_MESSAGE


payloads = st.one_of(
    st.binary(max_size=4000),
    st.builds(lambda b, n: b * n, st.binary(min_size=1, max_size=40), st.integers(1, 3000)),
)


@settings(max_examples=150, deadline=None)
@given(
    codec=st.sampled_from(CODECS),
    payload=payloads,
    slack=st.integers(0, 100),
    short=st.integers(1, 100),
)
def test_round_trip_within_the_limit_and_refusal_past_it(
    codec: Compression, payload: bytes, slack: int, short: int
) -> None:
    data = compress(codec, payload)
    assert decompress(codec, data, limit=len(payload) + slack) == payload
    if len(payload) >= short:
        with pytest.raises(DecompressedTooLarge):
            decompress(codec, data, limit=len(payload) - short)


@settings(max_examples=200, deadline=None)
@given(codec=st.sampled_from(CODECS), data=st.binary(max_size=300), limit=st.integers(0, 5000))
def test_any_input_either_fits_the_limit_or_is_refused_with_a_kafka_error(
    codec: Compression, data: bytes, limit: int
) -> None:
    try:
        out = decompress(codec, data, limit=limit)
    except KafkaError as exc:
        assert exc.code in (ErrorCode.CORRUPT_MESSAGE, ErrorCode.INVALID_RECORD)
    else:
        assert len(out) <= limit
