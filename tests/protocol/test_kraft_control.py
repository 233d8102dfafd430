"""KRaft control records: key and value bytes as Kafka's ControlRecordUtils writes them.

The LeaderChangeMessage golden value is assembled by hand from
LeaderChangeMessage.json at version 0 (the version Kafka writes and reads), not
by our encoder.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.errors import DecodeError
from samsa.protocol.batches.record_batch import CONTROL_MASK, TRANSACTIONAL_MASK, read_batch_header
from samsa.protocol.batches.record_reader import decode_batch
from samsa.protocol.internal_records.kraft_control import (
    CONTROL_SCHEMAS,
    ControlRecordType,
    UnknownControlRecordType,
    control_batch,
    decode_control_record,
    encode_control_record,
)

from .schema_strategies import body_strategy


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def test_control_record_type_codes_are_kafkas() -> None:
    assert {t.name: t.value for t in ControlRecordType} == {
        "ABORT": 0,
        "COMMIT": 1,
        "LEADER_CHANGE": 2,
        "SNAPSHOT_HEADER": 3,
        "SNAPSHOT_FOOTER": 4,
        "KRAFT_VERSION": 5,
        "KRAFT_VOTERS": 6,
    }


def test_leader_change_message_golden_bytes() -> None:
    body = {
        "version": 0,
        "leader_id": 2,
        "voters": [{"voter_id": 1}, {"voter_id": 2}, {"voter_id": 3}],
        "granting_voters": [{"voter_id": 2}, {"voter_id": 3}],
    }
    expected_key = i16(0) + i16(2)  # key version 0, type LEADER_CHANGE
    expected_value = (
        i16(0)  # Version
        + i32(2)  # LeaderId
        + b"\x04"  # Voters: compact array of 3
        + i32(1)
        + b"\x00"  # VoterId, no tags (VoterDirectoryId is v1+)
        + i32(2)
        + b"\x00"
        + i32(3)
        + b"\x00"
        + b"\x03"  # GrantingVoters: 2
        + i32(2)
        + b"\x00"
        + i32(3)
        + b"\x00"
        + b"\x00"  # no tagged fields
    )
    key, value = encode_control_record("LEADER_CHANGE", body)
    assert (key, value) == (expected_key, expected_value)
    name, decoded = decode_control_record(expected_key, expected_value)
    assert name == "LEADER_CHANGE"
    assert decoded["leader_id"] == 2
    assert [v["voter_id"] for v in decoded["granting_voters"]] == [2, 3]


def test_transaction_markers_keep_the_end_txn_marker_layout() -> None:
    key, value = encode_control_record("COMMIT", {"coordinator_epoch": 7})
    assert key == i16(0) + i16(1)
    assert value == i16(0) + i32(7)
    assert decode_control_record(key, value) == ("COMMIT", {"version": 0, "coordinator_epoch": 7})


def test_a_newer_key_version_is_read_as_version_0_and_trailing_value_bytes_are_ignored() -> None:
    key, value = encode_control_record("SNAPSHOT_FOOTER", {})
    newer_key = i16(3) + key[2:] + b"future"
    assert decode_control_record(newer_key, value + b"\x01\x02") == (
        "SNAPSHOT_FOOTER",
        {"version": 0},
    )


CASES = [pytest.param(kind, id=kind.name) for kind in ControlRecordType]


@pytest.mark.parametrize("kind", CASES)
@settings(max_examples=30, deadline=None, database=None)
@given(data=st.data())
def test_every_control_record_round_trips(kind: ControlRecordType, data: st.DataObject) -> None:
    body = data.draw(body_strategy(CONTROL_SCHEMAS[kind].fields, 0))
    key, value = encode_control_record(kind.name, body)
    assert decode_control_record(key, value) == (kind.name, body)
    assert encode_control_record(int(kind), body) == (key, value)


@pytest.mark.parametrize("kind", CASES)
def test_truncated_values_are_refused(kind: ControlRecordType) -> None:
    key, value = encode_control_record(kind, {})
    for end in range(len(value)):
        with pytest.raises(DecodeError):
            decode_control_record(key, value[:end])


@pytest.mark.parametrize(
    ("key", "value", "error"),
    [
        (None, b"", "key must hold"),
        (b"\x00\x00\x00", b"", "key must hold"),
        (b"\xff\xff\x00\x02", b"", "invalid control record key version"),
        (b"\x00\x00\x00\x02", None, "no value"),
    ],
)
def test_bad_keys_are_refused(key: bytes | None, value: bytes | None, error: str) -> None:
    with pytest.raises(DecodeError, match=error):
        decode_control_record(key, value)


def test_unknown_types_are_reported_so_readers_can_skip_them() -> None:
    with pytest.raises(UnknownControlRecordType, match="unknown control record type 7") as info:
        decode_control_record(i16(0) + i16(7), b"")
    assert info.value.type_id == 7
    with pytest.raises(ValueError, match="unknown control record type"):
        encode_control_record("NOPE", {})


def test_control_batch_is_a_non_transactional_control_batch_of_the_records() -> None:
    voters: dict[str, Any] = {
        "voters": [
            {
                "voter_id": 1,
                "voter_directory_id": bytes(range(16)),
                "endpoints": [{"name": "CONTROLLER", "host": "127.0.0.1", "port": 9093}],
                "kraft_version_feature": {"min_supported_version": 0, "max_supported_version": 1},
            }
        ]
    }
    batch = control_batch(
        [
            ("SNAPSHOT_HEADER", {"last_contained_log_timestamp": 1000}),
            ("KRAFT_VERSION", {"kraft_version": 1}),
            ("KRAFT_VOTERS", voters),
        ],
        timestamp_ms=1000,
        base_offset=42,
        partition_leader_epoch=5,
    )
    header = read_batch_header(batch)
    assert header.attributes & CONTROL_MASK
    assert not header.attributes & TRANSACTIONAL_MASK
    assert (header.base_offset, header.partition_leader_epoch) == (42, 5)
    assert (header.producer_id, header.producer_epoch) == (-1, -1)
    records = decode_batch(batch, 0, header)
    decoded = [decode_control_record(r.key, r.value) for r in records]
    assert [name for name, _ in decoded] == ["SNAPSHOT_HEADER", "KRAFT_VERSION", "KRAFT_VOTERS"]
    assert decoded[2][1]["voters"][0]["endpoints"][0]["port"] == 9093
    with pytest.raises(ValueError):
        control_batch([], timestamp_ms=0)


@settings(max_examples=300, deadline=None, database=None)
@given(type_id=st.integers(-1, 8), value=st.binary(max_size=80))
def test_arbitrary_values_raise_only_decode_error(type_id: int, value: bytes) -> None:
    try:
        decode_control_record(i16(0) + i16(type_id), value)
    except DecodeError:
        pass
