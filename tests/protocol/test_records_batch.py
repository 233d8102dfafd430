"""Batch headers: walking, validation, stamping - the broker's view of records."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from crc32c import crc32c

from samsa.errors import DecodeError, ErrorCode, KafkaError
from samsa.protocol.records import (
    BATCH_HEADER_SIZE,
    Compression,
    ControlType,
    RecordBatchBuilder,
    control_batch,
    decode_records,
    iter_batches,
    parse_control_key,
    read_batch_header,
    set_log_append_time,
    set_producer_state,
    stamp_batch,
    validate_batch,
    validate_client_batch,
)


def make_batch(count: int = 3, codec: Compression = Compression.NONE, **kwargs: Any) -> bytes:
    builder = RecordBatchBuilder(codec, **kwargs)
    for i in range(count):
        builder.append(1_000 + i, f"k{i}".encode(), f"value-{i}".encode() * 5)
    return builder.build()


def codes(fn: object, *args: object, **kwargs: object) -> ErrorCode:
    with pytest.raises(KafkaError) as info:
        fn(*args, **kwargs)  # type: ignore[operator]
    return info.value.code


def test_header_fields_and_properties() -> None:
    data = make_batch(
        3,
        Compression.LZ4,
        producer_id=77,
        producer_epoch=2,
        base_sequence=2_147_483_646,
        is_transactional=True,
        base_offset=10,
    )
    header = read_batch_header(data)
    assert header.size == len(data)
    assert header.magic == 2
    assert header.records_count == 3
    assert header.last_offset_delta == 2
    assert (header.last_offset, header.next_offset) == (12, 13)
    assert header.compression is Compression.LZ4
    assert header.is_transactional and not header.is_control
    assert header.timestamp_type == 0 and not header.has_delete_horizon
    assert (header.base_timestamp, header.max_timestamp) == (1_000, 1_002)
    assert (header.producer_id, header.producer_epoch) == (77, 2)
    assert header.last_sequence == 0  # wraps at 2**31 like Kafka
    assert header.crc == crc32c(data[21:])
    validate_batch(data, 0, header)


def test_read_batch_header_short_buffer() -> None:
    with pytest.raises(DecodeError):
        read_batch_header(make_batch()[:60])
    with pytest.raises(DecodeError):
        data = make_batch()
        read_batch_header(data, pos=len(data) - 60)


def test_iter_batches_walks_and_stops_at_truncated_tail() -> None:
    batches = [make_batch(n) for n in (1, 5, 2)]
    blob = b"".join(batches)
    positions = [pos for pos, _ in iter_batches(blob)]
    assert positions == [0, len(batches[0]), len(batches[0]) + len(batches[1])]
    for cut in (1, 16, 17, 60, 61, len(batches[2]) - 1):
        got = list(iter_batches(blob[: len(blob) - len(batches[2]) + cut]))
        assert [pos for pos, _ in got] == positions[:2]
    assert list(iter_batches(b"")) == []
    assert list(iter_batches(memoryview(blob))) == list(iter_batches(blob))


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_message_sets_are_detected(magic: int) -> None:
    # offset, size, crc, magic, attributes, [timestamp], key -1, value "v"
    message = struct.pack(">IbB", 0, magic, 0)
    if magic == 1:
        message += struct.pack(">q", 5)
    message += struct.pack(">ii", -1, 1) + b"v"
    legacy = struct.pack(">qi", 0, len(message)) + message
    assert codes(lambda: list(iter_batches(legacy))) == ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT
    padded = legacy + bytes(64)
    header = read_batch_header(padded)
    assert codes(validate_batch, padded, 0, header) == ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT


def test_unknown_magic_and_impossible_length_are_corrupt() -> None:
    data = bytearray(make_batch())
    data[16] = 3
    assert codes(lambda: list(iter_batches(data))) == ErrorCode.CORRUPT_MESSAGE
    data = bytearray(make_batch())
    struct.pack_into(">i", data, 8, 10)
    assert codes(lambda: list(iter_batches(data))) == ErrorCode.CORRUPT_MESSAGE


@pytest.mark.parametrize("index", [21, 30, 45, 60, 61, -1])
def test_any_flipped_byte_inside_the_crc_is_corrupt_message(index: int) -> None:
    data = bytearray(make_batch(codec=Compression.GZIP))
    data[index] ^= 0x01
    header = read_batch_header(data)
    assert codes(validate_batch, data, 0, header) == ErrorCode.CORRUPT_MESSAGE


def test_batch_length_beyond_buffer_is_corrupt() -> None:
    data = make_batch()
    header = read_batch_header(data)
    assert codes(validate_batch, data[:-1], 0, header) == ErrorCode.CORRUPT_MESSAGE


def test_stamp_batch_keeps_crc_valid() -> None:
    data = bytearray(make_batch(4) * 2)
    size = len(data) // 2
    stamp_batch(data, size, base_offset=1_000, partition_leader_epoch=7)
    header = read_batch_header(data, size)
    assert (header.base_offset, header.partition_leader_epoch) == (1_000, 7)
    validate_batch(data, size, header)
    _, records = list(decode_records(data))[1]
    assert [r.offset for r in records] == [1_000, 1_001, 1_002, 1_003]


def test_set_log_append_time_recomputes_crc_and_overrides_record_timestamps() -> None:
    data = bytearray(make_batch(3, Compression.SNAPPY))
    set_log_append_time(data, 0, 99_999)
    header = read_batch_header(data)
    assert header.timestamp_type == 1
    assert header.max_timestamp == 99_999
    assert header.compression is Compression.SNAPPY
    validate_batch(data, 0, header)
    ((_, records),) = decode_records(data)
    assert [r.timestamp for r in records] == [99_999] * 3


def test_set_producer_state_restamps_sequence_without_reencoding() -> None:
    data = bytearray(make_batch(3, Compression.ZSTD))
    records_before = bytes(data[BATCH_HEADER_SIZE:])
    set_producer_state(data, 0, 5, 1, 42, is_transactional=True)
    header = read_batch_header(data)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (5, 1, 42)
    assert header.is_transactional and header.last_sequence == 44
    assert bytes(data[BATCH_HEADER_SIZE:]) == records_before
    validate_client_batch(data, 0, header)


def test_builder_restamp_after_build_only_changes_header() -> None:
    builder = RecordBatchBuilder(Compression.GZIP)
    builder.append(1, None, b"v" * 100)
    first = builder.build()
    builder.set_producer_state(9, 0, 100, is_transactional=False)
    second = builder.build()
    assert first[BATCH_HEADER_SIZE:] == second[BATCH_HEADER_SIZE:]
    header = read_batch_header(second)
    assert header.base_sequence == 100
    validate_batch(second, 0, header)
    with pytest.raises(RuntimeError):
        builder.append(2, None, b"late")


def test_validate_client_batch_rules() -> None:
    good = make_batch(2, producer_id=1, producer_epoch=0, base_sequence=0)
    validate_client_batch(good, 0, read_batch_header(good), max_batch_bytes=len(good))
    assert (
        codes(
            validate_client_batch, good, 0, read_batch_header(good), max_batch_bytes=len(good) - 1
        )
        == ErrorCode.MESSAGE_TOO_LARGE
    )
    no_seq = make_batch(2, producer_id=1, producer_epoch=0)
    assert (
        codes(validate_client_batch, no_seq, 0, read_batch_header(no_seq))
        == ErrorCode.INVALID_RECORD
    )
    marker = control_batch(ControlType.COMMIT, producer_id=1, producer_epoch=0, timestamp_ms=5)
    validate_batch(marker, 0, read_batch_header(marker))
    assert (
        codes(validate_client_batch, marker, 0, read_batch_header(marker))
        == ErrorCode.INVALID_RECORD
    )
    # records_count disagreeing with last_offset_delta, CRC made valid again
    bad = bytearray(good)
    struct.pack_into(">i", bad, 23, 5)
    set_producer_state(bad, 0, 1, 0, 0)
    header = read_batch_header(bad)
    validate_batch(bad, 0, header)  # compaction can leave gaps: storage accepts
    assert codes(validate_client_batch, bad, 0, header) == ErrorCode.INVALID_RECORD


def test_negative_count_is_corrupt() -> None:
    bad = bytearray(make_batch())
    struct.pack_into(">i", bad, 57, -1)
    set_producer_state(bad, 0, -1, -1, -1)
    assert codes(validate_batch, bad, 0, read_batch_header(bad)) == ErrorCode.CORRUPT_MESSAGE


def test_control_batches_are_skipped_unless_asked_for() -> None:
    marker = control_batch(
        ControlType.ABORT, producer_id=3, producer_epoch=1, timestamp_ms=50, coordinator_epoch=4
    )
    blob = make_batch(2) + marker
    assert [len(records) for _, records in decode_records(blob)] == [2]
    (_, _), (header, (record,)) = decode_records(blob, skip_control=False)
    assert header.is_control and header.is_transactional
    assert parse_control_key(record.key) == (0, ControlType.ABORT)
    assert record.value == struct.pack(">hi", 0, 4)
    with pytest.raises(ValueError):
        parse_control_key(b"\x00")
