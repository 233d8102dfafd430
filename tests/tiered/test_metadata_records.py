"""``__remote_log_metadata`` records: Kafka's framing and schemas, round trips, bad bytes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.errors import DecodeError
from samsa.protocol.primitives import uvarint_bytes
from samsa.tiered.metadata import (
    EpochEntry,
    RemoteLogMetadata,
    RemoteLogSegmentId,
    RemoteLogSegmentMetadata,
    RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState,
    RemotePartitionDeleteMetadata,
    RemotePartitionDeleteState,
    TopicIdPartition,
    decode_remote_log_metadata,
    encode_remote_log_metadata,
)
from samsa.tiered.metadata.records import decode_record, encode_record

TOPIC_ID = bytes(range(1, 17))
SEGMENT_ID = bytes(range(101, 117))
TIP = TopicIdPartition(TOPIC_ID, "orders", 7)


def _segment(**overrides: object) -> RemoteLogSegmentMetadata:
    fields: dict[str, object] = {
        "segment_id": RemoteLogSegmentId(TIP, SEGMENT_ID),
        "start_offset": 100,
        "end_offset": 199,
        "max_timestamp_ms": 1_700_000_000_000,
        "broker_id": 2,
        "event_timestamp_ms": 1_700_000_000_500,
        "segment_size_bytes": 4096,
        "segment_leader_epochs": (EpochEntry(3, 100), EpochEntry(5, 150)),
    }
    fields.update(overrides)
    return RemoteLogSegmentMetadata(**fields)  # type: ignore[arg-type,unused-ignore]


def test_segment_metadata_bytes_follow_kafkas_layout() -> None:
    data = encode_remote_log_metadata(_segment())
    # frame version 1, api key 0, version 0; then the flexible body.
    assert data[:3] == b"\x01\x00\x00"
    # compact string "orders" (length + 1), the topic id, the partition, the segment id.
    assert data[3:10] == b"\x07orders"
    assert data[10:26] == TOPIC_ID
    assert data[26:30] == (7).to_bytes(4, "big")
    assert data[30:31] == b"\x00"  # TopicIdPartition's (empty) tagged fields
    assert data[31:47] == SEGMENT_ID
    # ... and no tagged field when TxnIndexEmpty is false (the default): one zero byte.
    assert data.endswith(b"\x00\x00")


def test_txn_index_empty_is_a_tagged_field() -> None:
    plain = encode_remote_log_metadata(_segment())
    tagged = encode_remote_log_metadata(_segment(txn_index_empty=True))
    # One tagged field: count 1, tag 0, size 1, value 1.
    assert tagged == plain[:-1] + b"\x01\x00\x01\x01"
    assert decode_remote_log_metadata(tagged) == _segment(txn_index_empty=True)


@pytest.mark.parametrize(
    "value",
    [
        _segment(),
        _segment(state=RemoteLogSegmentState.COPY_SEGMENT_FINISHED, custom_metadata=b"\x00abc"),
        RemoteLogSegmentMetadataUpdate(
            RemoteLogSegmentId(TIP, SEGMENT_ID), 42, RemoteLogSegmentState.DELETE_SEGMENT_STARTED, 1
        ),
        RemotePartitionDeleteMetadata(
            TIP, RemotePartitionDeleteState.DELETE_PARTITION_MARKED, 9, 0
        ),
    ],
    ids=["segment", "finished-with-custom", "update", "partition-delete"],
)
def test_round_trip(value: RemoteLogMetadata) -> None:
    assert decode_remote_log_metadata(encode_remote_log_metadata(value)) == value


def test_version_1_records_decode() -> None:
    """Newer Kafka writes v1 with tagged broker leader epoch and end offset."""
    body = {
        "remote_log_segment_id": {
            "topic_id_partition": {"name": "orders", "id": TOPIC_ID, "partition": 7},
            "id": SEGMENT_ID,
        },
        "broker_id": 4,
        "event_timestamp_ms": 11,
        "custom_metadata": None,
        "remote_log_segment_state": 1,
        "broker_leader_epoch": 12,
        "end_offset": 199,
    }
    data = encode_record(1, body, version=1)
    assert decode_record(data) == (1, 1, body)
    update = decode_remote_log_metadata(data)
    assert update == RemoteLogSegmentMetadataUpdate(
        RemoteLogSegmentId(TIP, SEGMENT_ID), 11, RemoteLogSegmentState.COPY_SEGMENT_FINISHED, 4
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"\x00\x00\x00", "frame version 0"),
        (b"\x02\x00\x00", "frame version 2"),
        (b"\x01\x09\x00", "api key 9"),
        (b"\x01\x00\x05", "version 5"),
        (b"\x01\x00", "truncated version"),
        (b"\x01\x00\x00\x07ord", "truncated"),
    ],
)
def test_bad_bytes_raise_decode_error(data: bytes, message: str) -> None:
    with pytest.raises(DecodeError):
        decode_remote_log_metadata(data)


def test_garbage_after_the_body_is_refused() -> None:
    with pytest.raises(DecodeError, match="garbage"):
        decode_remote_log_metadata(encode_remote_log_metadata(_segment()) + b"\x00")


def test_invalid_values_are_decode_errors() -> None:
    good = encode_remote_log_metadata(_segment())
    with pytest.raises(DecodeError, match="RemoteLogSegmentState"):
        decode_remote_log_metadata(good[:-2] + b"\x09\x00")  # state id 9
    body = dict(decode_record(good)[2], segment_leader_epochs=[])
    with pytest.raises(DecodeError, match="epochs"):
        decode_remote_log_metadata(encode_record(0, body))


def test_snapshot_records_do_not_belong_in_the_topic() -> None:
    data = uvarint_bytes(1) + uvarint_bytes(3) + uvarint_bytes(0)
    body = {
        "segment_id": SEGMENT_ID,
        "start_offset": 0,
        "end_offset": 9,
        "broker_id": 1,
        "max_timestamp_ms": 0,
        "event_timestamp_ms": 0,
        "segment_leader_epochs": [{"leader_epoch": 0, "offset": 0}],
        "segment_size_in_bytes": 10,
        "custom_metadata": None,
        "remote_log_segment_state": 1,
        "txn_index_empty": True,
    }
    encoded = encode_record(3, body)
    assert encoded.startswith(data)
    assert decode_record(encoded)[2] == {**body, "broker_leader_epoch": 0}  # a v1 field, defaulted
    with pytest.raises(DecodeError, match="does not belong"):
        decode_remote_log_metadata(encoded)


# ----------------------------------------------------------------------------- properties

_uuids = st.binary(min_size=16, max_size=16)
_tips = st.builds(
    TopicIdPartition,
    _uuids,
    st.text(min_size=1, max_size=20),
    st.integers(0, 2**31 - 1),
)
_segment_ids = st.builds(RemoteLogSegmentId, _tips, _uuids)
_int64 = st.integers(-(2**63), 2**63 - 1)


@st.composite
def _segments(draw: st.DrawFn) -> RemoteLogSegmentMetadata:
    start = draw(st.integers(0, 2**62))
    end = draw(st.integers(start, 2**62 + 1))
    epochs = draw(st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=5, unique=True))
    offsets = sorted(
        draw(st.lists(st.integers(start, end), min_size=len(epochs), max_size=len(epochs)))
    )
    return RemoteLogSegmentMetadata(
        segment_id=draw(_segment_ids),
        start_offset=start,
        end_offset=end,
        max_timestamp_ms=draw(_int64),
        broker_id=draw(st.integers(-(2**31), 2**31 - 1)),
        event_timestamp_ms=draw(_int64),
        segment_size_bytes=draw(st.integers(0, 2**31 - 1)),
        segment_leader_epochs=tuple(
            EpochEntry(e, o) for e, o in zip(sorted(epochs), offsets, strict=True)
        ),
        state=draw(st.sampled_from(RemoteLogSegmentState)),
        custom_metadata=draw(st.none() | st.binary(max_size=64)),
        txn_index_empty=draw(st.booleans()),
    )


_updates = st.builds(
    RemoteLogSegmentMetadataUpdate,
    _segment_ids,
    _int64,
    st.sampled_from(list(RemoteLogSegmentState)[1:]),
    st.integers(-(2**31), 2**31 - 1),
    st.none() | st.binary(max_size=64),
)
_deletes = st.builds(
    RemotePartitionDeleteMetadata,
    _tips,
    st.sampled_from(RemotePartitionDeleteState),
    _int64,
    st.integers(-(2**31), 2**31 - 1),
)


@settings(max_examples=100, deadline=None)
@given(_segments() | _updates | _deletes)
def test_every_value_round_trips(value: RemoteLogMetadata) -> None:
    assert decode_remote_log_metadata(encode_remote_log_metadata(value)) == value


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_raise_only_decode_error(data: bytes) -> None:
    try:
        decode_remote_log_metadata(data)
    except DecodeError:
        pass


@settings(max_examples=100, deadline=None)
@given(_segments(), st.data())
def test_corrupted_records_raise_only_decode_error(
    value: RemoteLogSegmentMetadata, data: st.DataObject
) -> None:
    encoded = bytearray(encode_remote_log_metadata(value))
    position = data.draw(st.integers(0, len(encoded) - 1))
    encoded[position] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(encoded)))
    try:
        decode_remote_log_metadata(bytes(encoded[:cut]))
    except DecodeError:
        pass
