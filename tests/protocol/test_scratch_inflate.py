"""Records inflated into the reused per-thread buffer give exactly what the allocating
path gives, stop at the limit, and fall back to it (and its errors) for anything else."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import lz4.frame
import pytest
import zstandard

from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches import scratch_inflate
from samsa.protocol.batches.compression import Compression, compress
from samsa.protocol.batches.decompression_limit import decompress_records
from samsa.protocol.batches.scratch_inflate import SCRATCH_MAX, inflate_records_for_reading

IN_PLACE = [Compression.LZ4, Compression.ZSTD]


def inflate(codec: Compression, blob: bytes, count: int = 1, limit: int = 1 << 30) -> bytes:
    return bytes(inflate_records_for_reading(codec, memoryview(blob), count, limit))


@pytest.mark.parametrize("codec", list(Compression)[1:])
@pytest.mark.parametrize("size", [0, 1, 70_000, 3 << 20])
def test_gives_what_the_allocating_path_gives(codec: Compression, size: int) -> None:
    raw = os.urandom(97) * (size // 97) + b"t" * (size % 97)
    blob = compress(codec, raw)
    assert inflate(codec, blob) == bytes(decompress_records(codec, blob, 1, 1 << 30)) == raw


@pytest.mark.parametrize("codec", IN_PLACE)
def test_the_buffer_is_reused_and_grows_once_for_a_larger_batch(codec: Compression) -> None:
    def run() -> None:
        small = compress(codec, b"s" * 1000)
        first = inflate_records_for_reading(codec, memoryview(small), 1, 1 << 30)
        second = inflate_records_for_reading(codec, memoryview(small), 1, 1 << 30)
        assert isinstance(first, memoryview) and isinstance(second, memoryview)
        assert first.obj is second.obj  # the same buffer, not a new object per batch
        big = b"b" * (3 << 20)
        blob = compress(codec, big)
        assert bytes(inflate_records_for_reading(codec, memoryview(blob), 1, 1 << 30)) == big
        again = inflate_records_for_reading(codec, memoryview(blob), 1, 1 << 30)
        assert isinstance(again, memoryview) and bytes(again) == big
        assert len(again.obj) <= SCRATCH_MAX  # type: ignore[arg-type]

    # A fresh thread: its own buffer, whatever other tests left in this one's.
    failures: list[BaseException] = []
    thread = threading.Thread(target=lambda: _record(run, failures))
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive() and not failures, failures


def _record(action: Callable[[], None], failures: list[BaseException]) -> None:
    try:
        action()
    except BaseException as exc:  # reported by the test's thread
        failures.append(exc)


@pytest.mark.parametrize("codec", IN_PLACE)
def test_a_bomb_stops_at_the_limit_with_kafkas_error(codec: Compression) -> None:
    blob = compress(codec, bytes(64 << 20))
    with pytest.raises(KafkaError) as refused:
        inflate(codec, blob, count=1, limit=1 << 20)
    assert refused.value.code == ErrorCode.INVALID_RECORD
    assert "max.decompressed.message.bytes=1048576" in str(refused.value)


@pytest.mark.parametrize("codec", IN_PLACE)
def test_output_of_exactly_the_bound_passes_one_byte_more_does_not(codec: Compression) -> None:
    limit = 1000
    bound = limit + 5  # one record: its body and a length varint
    assert inflate(codec, compress(codec, b"x" * bound), 1, limit) == b"x" * bound
    with pytest.raises(KafkaError):
        inflate(codec, compress(codec, b"x" * (bound + 1)), 1, limit)


@pytest.mark.parametrize(
    ("codec", "damaged"),
    [
        (Compression.LZ4, lz4.frame.compress(b"a" * 5000)[:-7]),
        (Compression.ZSTD, zstandard.ZstdCompressor().compress(b"a" * 5000)[:-3]),
        (Compression.LZ4, b"not a frame at all"),
    ],
    ids=["lz4-cut", "zstd-cut", "lz4-garbage"],
)
def test_input_that_does_not_inflate_gets_the_allocating_paths_error(
    codec: Compression, damaged: bytes
) -> None:
    with pytest.raises(Exception) as expected:
        decompress_records(codec, damaged, 1, 1 << 20)
    with pytest.raises(type(expected.value)):
        inflate(codec, damaged, 1, 1 << 20)


def test_other_codecs_take_the_allocating_path() -> None:
    blob = compress(Compression.GZIP, b"g" * 100)
    out = inflate_records_for_reading(Compression.GZIP, memoryview(blob), 1, 1 << 20)
    assert out == b"g" * 100 and not isinstance(out, memoryview)
    assert Compression.GZIP not in scratch_inflate._INTO
