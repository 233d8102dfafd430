"""``__consumer_offsets`` keys and values in Kafka's byte layout."""

from __future__ import annotations

import struct

import pytest

from samsa.errors import DecodeError
from samsa.protocol.internal_records.group_records import (
    GroupKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetKey,
    UnknownRecordKey,
    decode_group_metadata_value,
    decode_key,
    decode_offset_commit_value,
    encode_group_metadata_key,
    encode_group_metadata_value,
    encode_offset_commit_key,
    encode_offset_commit_value,
)


def _str(s: str) -> bytes:
    raw = s.encode()
    return struct.pack(">h", len(raw)) + raw


MEMBERS = (
    MemberMetadata(
        member_id="consumer-1-4f2c",
        group_instance_id="pod-3",
        client_id="consumer-1",
        client_host="/10.0.0.7",
        rebalance_timeout=300_000,
        session_timeout=45_000,
        subscription=b"\x00\x03sub",
        assignment=b"\x00\x03asg",
    ),
    MemberMetadata("consumer-2-9a01", None, "consumer-2", "/10.0.0.8", 60_000, 10_000, b"", b""),
)


def test_offset_commit_key_layout_is_kafkas() -> None:
    key = encode_offset_commit_key("orders-app", "orders", 3)
    assert key == b"\x00\x01" + _str("orders-app") + _str("orders") + b"\x00\x00\x00\x03"
    assert decode_key(key) == OffsetKey("orders-app", "orders", 3)


def test_offset_commit_key_version_0_reads_the_same() -> None:
    key = b"\x00\x00" + encode_offset_commit_key("g", "t", 0)[2:]
    assert decode_key(key) == OffsetKey("g", "t", 0)


def test_group_metadata_key_layout_is_kafkas() -> None:
    key = encode_group_metadata_key("orders-app")
    assert key == b"\x00\x02" + _str("orders-app")
    assert decode_key(key) == GroupKey("orders-app")


def test_other_record_types_are_reported_for_skipping() -> None:
    with pytest.raises(UnknownRecordKey) as info:
        decode_key(b"\x00\x03" + _str("a-kip-848-group"))
    assert info.value.key_version == 3


@pytest.mark.parametrize("data", [b"", b"\x00", b"\xff\xff\x00", b"\x00\x01\x00\x05ab"])
def test_malformed_keys_raise_decode_error(data: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_key(data)


def test_offset_commit_value_v3_layout_is_kafkas() -> None:
    value = encode_offset_commit_value(1042, 3, "", 1_700_000_000_000)
    assert value == struct.pack(">hqi", 3, 1042, 3) + _str("") + struct.pack(
        ">q", 1_700_000_000_000
    )


def test_expire_timestamp_selects_v1_the_only_version_that_stores_it() -> None:
    value = encode_offset_commit_value(7, 5, "m", 1000, expire_timestamp=2000)
    assert value[:2] == b"\x00\x01"
    decoded = decode_offset_commit_value(value)
    assert (decoded.expire_timestamp, decoded.leader_epoch) == (2000, -1)


@pytest.mark.parametrize("version", range(5))
def test_offset_commit_value_round_trips_at_every_version(version: int) -> None:
    value = encode_offset_commit_value(99, 4, "meta", 1234, 5678, version=version)
    decoded = decode_offset_commit_value(value)
    assert decoded.version == version
    assert (decoded.offset, decoded.metadata, decoded.commit_timestamp) == (99, "meta", 1234)
    assert decoded.leader_epoch == (4 if version >= 3 else -1)
    assert decoded.expire_timestamp == (5678 if version == 1 else -1)


def test_offset_commit_value_v4_is_flexible() -> None:
    value = encode_offset_commit_value(1, 2, "x", 3, version=4)
    # compact string "x" (length + 1) and a trailing empty tag section
    assert value == struct.pack(">hqi", 4, 1, 2) + b"\x02x" + struct.pack(">q", 3) + b"\x00"


@pytest.mark.parametrize("version", range(5))
def test_group_metadata_value_round_trips_at_every_version(version: int) -> None:
    value = encode_group_metadata_value(
        "consumer", 8, "range", "consumer-1-4f2c", MEMBERS, 1_700_000_000_000, version=version
    )
    decoded = decode_group_metadata_value(value)
    members = tuple(
        MemberMetadata(
            m.member_id,
            m.group_instance_id if version >= 3 else None,
            m.client_id,
            m.client_host,
            m.rebalance_timeout if version >= 1 else 0,
            m.session_timeout,
            m.subscription,
            m.assignment,
        )
        for m in MEMBERS
    )
    assert decoded == GroupMetadataValue(
        "consumer",
        8,
        "range",
        "consumer-1-4f2c",
        1_700_000_000_000 if version >= 2 else -1,
        members,
        version,
    )


def test_empty_group_metadata_has_null_protocol_and_leader() -> None:
    value = encode_group_metadata_value("consumer", 9, None, None)
    # int16 strings: a null one is length -1
    expected = b"\x00\x03" + _str("consumer") + struct.pack(">i", 9) + b"\xff\xff" * 2
    assert value == expected + struct.pack(">qi", -1, 0)
    decoded = decode_group_metadata_value(value)
    assert (decoded.protocol, decoded.leader, decoded.members) == (None, None, ())


def test_newer_value_versions_are_read_with_the_v4_layout() -> None:
    v4 = encode_offset_commit_value(10, 1, "", 5, version=4)
    assert decode_offset_commit_value(b"\x00\x05" + v4[2:]).offset == 10
