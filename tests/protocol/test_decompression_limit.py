"""max.decompressed.message.bytes on the record walks the broker runs over a client's batch.

``decode_batch`` (the compacted-topic key check, remote timestamp lookups)
and ``batch_schema_ids`` (schema id validation) inflate a compressed batch no
further than its records may go and refuse a record whose declared body is
over the limit with INVALID_RECORD in Kafka's words; an uncompressed batch is
not limited (Kafka limits only what it decompresses)."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches.compression import Compression, decompress
from samsa.protocol.batches.decompression_limit import (
    LENGTH_VARINT_MAX,
    check_record_bodies,
    records_bound,
)
from samsa.protocol.batches.record_batch import BATCH_HEADER_SIZE, BatchHeader, iter_batches
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.protocol.batches.record_reader import decode_batch
from samsa.protocol.batches.schema_ids import batch_schema_ids
from samsa.protocol.primitives import read_varint

COMPRESSED = [Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]
WALKS: list[Callable[..., Any]] = [decode_batch, batch_schema_ids]
"""The key check's full decode and the schema id check's framing walk."""


def build(values: list[bytes], codec: Compression) -> tuple[bytes, BatchHeader]:
    builder = RecordBatchBuilder(codec, batch_size=1 << 30)
    for i, value in enumerate(values):
        builder.append(1_700_000_000_000 + i, b"key-%d" % i, value)
    buf = builder.build()
    ((_, header),) = list(iter_batches(buf))
    return buf, header


def body_sizes(buf: bytes, header: BatchHeader) -> list[int]:
    """Each record's declared body size (Kafka's sizeOfBodyInBytes)."""
    blob = decompress(header.compression, memoryview(buf)[BATCH_HEADER_SIZE : header.size])
    sizes, pos = [], 0
    for _ in range(header.records_count):
        length, body = read_varint(blob, pos)
        sizes.append(length)
        pos = body + length
    return sizes


def decode_both(buf: bytes, header: BatchHeader, limit: int) -> None:
    decode_batch(buf, 0, header, max_record_body=limit)
    batch_schema_ids(buf, 0, header, max_record_body=limit)


def refusal(action: Callable[[], object]) -> str:
    with pytest.raises(KafkaError) as refused:
        action()
    assert refused.value.code == ErrorCode.INVALID_RECORD
    assert "max.decompressed.message.bytes" in str(refused.value)
    return str(refused.value)


@pytest.mark.parametrize("codec", COMPRESSED)
@pytest.mark.parametrize("value_size", [10, 300, 20_000], ids=["tiny", "small", "long"])
def test_a_record_over_the_limit_is_invalid_record_one_at_it_passes(
    codec: Compression, value_size: int
) -> None:
    """Small records take the vector walk, long ones (3-byte length varints) the
    record-by-record one: both refuse the record, in Kafka's message."""
    values = [b"v" * value_size, b"w" * (value_size + 7), b"x" * value_size]
    buf, header = build(values, codec)
    largest = max(body_sizes(buf, header))
    decode_both(buf, header, largest)
    for walk in WALKS:
        message = refusal(partial(walk, buf, 0, header, max_record_body=largest - 1))
        assert (
            f"Invalid record size: {largest} exceeds the configured maximum record size of "
            f"{largest - 1}"
        ) in message


def test_an_uncompressed_batch_is_not_limited() -> None:
    buf, header = build([b"v" * 500] * 3, Compression.NONE)
    decode_both(buf, header, 10)


@pytest.mark.parametrize("codec", COMPRESSED)
def test_a_bomb_record_is_refused_after_inflating_at_most_its_records_bound(
    codec: Compression,
) -> None:
    # One record of 64 MiB of zeros: a few hundred KB compressed at most.
    buf, header = build([bytes(64 << 20)], codec)
    limit = 1 << 20
    for walk in WALKS:
        tracemalloc.start()
        started = time.perf_counter()
        try:
            message = refusal(partial(walk, buf, 0, header, max_record_body=limit))
        finally:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        assert time.perf_counter() - started < 2.0
        assert peak < len(buf) + 4 * limit
        bound = records_bound(1, limit)
        assert f"batch of 1 record decompresses to more than {bound} bytes" in message
        assert f"max.decompressed.message.bytes={limit}" in message


def test_the_records_bound_allows_each_record_its_length_varint() -> None:
    assert records_bound(3, 100) == 3 * (100 + LENGTH_VARINT_MAX)
    assert records_bound(-1, 100) == 0


def test_check_record_bodies_leaves_malformed_framing_to_the_decoder() -> None:
    check_record_bodies(b"\x81", 0, 1, 1, 10)  # a truncated varint: not this check's fault
    check_record_bodies(b"\x01\x00", 0, 2, 1, 10)  # a negative length
    with pytest.raises(KafkaError):
        check_record_bodies(b"\x98\x01" + b"\x00" * 76, 0, 78, 1, 10)  # declares 76


def test_a_compressed_batch_of_many_alike_records_has_its_schema_ids_read() -> None:
    """More records than compressed bytes: the count is checked on the inflated records."""
    framed = b"\x00\x00\x00\x00\x07"
    builder = RecordBatchBuilder(Compression.ZSTD, batch_size=1 << 26)
    for _ in range(5000):
        builder.append(1_700_000_000_000, framed + b"k", framed + b"v")
    buf = builder.build()
    ((_, header),) = list(iter_batches(buf))
    assert header.size < header.records_count
    keys, values = batch_schema_ids(buf, 0, header, max_record_body=100)
    assert keys is not None and values is not None
    assert set(values.ids.tolist()) == {7} and len(values) == 5000


@settings(max_examples=60, deadline=None)
@given(
    codec=st.sampled_from(COMPRESSED),
    sizes=st.lists(st.integers(0, 9000), min_size=1, max_size=12),
)
def test_the_largest_body_is_exactly_the_smallest_limit_that_passes(
    codec: Compression, sizes: list[int]
) -> None:
    buf, header = build([b"z" * n for n in sizes], codec)
    largest = max(body_sizes(buf, header))
    decode_both(buf, header, largest)
    for walk in WALKS:
        refusal(partial(walk, buf, 0, header, max_record_body=largest - 1))
