"""Builder/decoder round trips and fuzzing of every reader with arbitrary bytes."""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from samsa.errors import DecodeError, KafkaError
from samsa.protocol.records import (
    BATCH_HEADER_SIZE,
    Compression,
    RecordBatchBuilder,
    decode_records,
    estimate_record_size,
    iter_batches,
    read_batch_header,
    set_producer_state,
    validate_batch,
)

headers_st = st.lists(
    st.tuples(st.text(max_size=8), st.one_of(st.none(), st.binary(max_size=20))), max_size=3
)
record_st = st.tuples(
    st.integers(min_value=-(2**40), max_value=2**41),
    st.one_of(st.none(), st.binary(max_size=40)),
    st.one_of(st.none(), st.binary(max_size=300)),
    headers_st,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    codec=st.sampled_from(list(Compression)),
    records=st.lists(record_st, min_size=1, max_size=40),
    base_offset=st.integers(min_value=0, max_value=2**62),
)
def test_round_trip(
    codec: Compression,
    records: list[tuple[int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]],
    base_offset: int,
) -> None:
    builder = RecordBatchBuilder(codec, base_offset=base_offset)
    for i, (ts, key, value, headers) in enumerate(records):
        assert builder.append(ts, key, value, headers) == i
    data = builder.build()
    header = read_batch_header(data)
    validate_batch(data, 0, header)
    assert header.max_timestamp == max(r[0] for r in records)
    ((_, decoded),) = decode_records(data)
    assert [(r.timestamp, r.key, r.value, r.headers) for r in decoded] == records
    assert [r.offset for r in decoded] == [base_offset + i for i in range(len(records))]


def test_large_deltas_and_lengths_take_the_slow_varint_paths() -> None:
    builder = RecordBatchBuilder(batch_size=10**9)
    big = b"b" * 70_000
    for i in range(20_000):
        builder.append(10**12 + i * 1_000_003, big if i == 7 else None, b"v")
    data = builder.build()
    ((_, decoded),) = decode_records(data)
    assert decoded[-1].offset == 19_999
    assert decoded[-1].timestamp == 10**12 + 19_999 * 1_000_003
    assert decoded[7].key == big


def test_batch_size_tracking() -> None:
    builder = RecordBatchBuilder(batch_size=1_000)
    assert builder.has_room_for(None, b"x" * 5_000)  # the first record always fits
    added = 0
    while builder.try_append(0, None, b"x" * 100) is not None:
        added += 1
    assert added == builder.record_count > 1
    assert builder.estimated_size() <= 1_000
    assert len(builder.build()) == builder.estimated_size() == builder.built_size()
    assert estimate_record_size(b"k", b"v", [("h", None)]) >= 3


def test_empty_builder_refuses_to_build() -> None:
    with pytest.raises(ValueError):
        RecordBatchBuilder().build()
    with pytest.raises(ValueError):
        RecordBatchBuilder(magic=1)


def _valid_blob() -> bytes:
    builder = RecordBatchBuilder()
    builder.append(5, b"key", b"value", [("h", b"1")])
    builder.append(6, None, None)
    return builder.build()


@settings(max_examples=500, deadline=None)
@given(data=st.binary(max_size=200))
def test_arbitrary_bytes_raise_only_codec_errors(data: bytes) -> None:
    try:
        read_batch_header(data)
    except DecodeError:
        pass
    try:
        for pos, header in iter_batches(data):
            validate_batch(data, pos, header)
    except KafkaError:
        pass
    try:
        list(decode_records(data, check_crc=False))
    except (DecodeError, KafkaError):
        pass


@settings(max_examples=500, deadline=None)
@given(
    index=st.integers(min_value=BATCH_HEADER_SIZE - 4, max_value=200),
    byte=st.integers(min_value=0, max_value=255),
    codec=st.sampled_from(list(Compression)),
)
def test_mutated_records_raise_only_codec_errors(index: int, byte: int, codec: Compression) -> None:
    builder = RecordBatchBuilder(codec)
    builder.append(5, b"key", b"value" * 5, [("h", b"1")])
    builder.append(6, None, None)
    data = bytearray(builder.build())
    if index >= len(data):
        return
    data[index] = byte
    set_producer_state(data, 0, -1, -1, -1)  # fix the CRC so the records get parsed
    try:
        list(decode_records(data))
    except (DecodeError, KafkaError):
        pass


def test_record_count_larger_than_records_is_decode_error() -> None:
    data = bytearray(_valid_blob())
    struct.pack_into(">i", data, 57, 3)
    with pytest.raises(DecodeError):
        list(decode_records(data, check_crc=False))
    struct.pack_into(">i", data, 57, 1)
    with pytest.raises(DecodeError):
        list(decode_records(data, check_crc=False))


def test_try_append_sizes_exactly_and_leaves_the_batch_unchanged_when_full() -> None:
    builder = RecordBatchBuilder(batch_size=400)
    assert builder.try_append(100, None, b"x" * 1_000) == 0  # first record always fits
    assert builder.try_append(200, None, b"y") is None
    builder = RecordBatchBuilder(batch_size=400)
    deltas = []
    while (delta := builder.try_append(50 - len(deltas), b"k", b"v" * 50)) is not None:
        deltas.append(delta)
    assert deltas == list(range(len(deltas)))
    assert builder.estimated_size() <= 400 < builder.estimated_size() + 60
    assert builder.try_append(10**6, None, b"z" * 500) is None
    assert builder.max_timestamp == 50  # the refused record left no trace
    data = builder.build()
    assert len(data) == builder.estimated_size()
    ((header, records),) = decode_records(data)
    assert header.records_count == len(deltas)
    assert header.base_timestamp == 50 and header.max_timestamp == 50
    assert [r.timestamp for r in records] == [50 - i for i in deltas]
