"""KRaft metadata records: Kafka's MetadataRecordSerde framing, golden bytes, round trips.

The golden values are assembled by hand from TopicRecord.json and
PartitionRecord.json (field order, flexible encodings, tagged fields) and the
frame of ``AbstractApiMessageSerde`` (frame version 1, api key, version as
unsigned varints), not produced by our encoder.
"""

from __future__ import annotations

import struct
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.errors import DecodeError
from samsa.protocol.metadata_records import (
    METADATA_API_KEYS,
    METADATA_SCHEMAS,
    MetadataRecord,
    decode_metadata_record,
    encode_metadata_record,
    latest_version,
    make_record,
)

from .schema_strategies import body_strategy

TOPIC_ID = bytes.fromhex("5f2a9c3e11d64b0c8a1e2f3a4b5c6d7e")
DIR = bytes.fromhex("00112233445566778899aabbccddeeff")


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def int32_array(values: list[int]) -> bytes:
    """Compact array: unsigned varint count + 1, then the elements."""
    return bytes([len(values) + 1]) + b"".join(i32(v) for v in values)


# ----------------------------------------------------------------------------- golden bytes


def test_topic_record_golden_bytes() -> None:
    record = MetadataRecord("TopicRecord", 0, {"name": "orders", "topic_id": TOPIC_ID})
    expected = (
        b"\x01"  # frame version
        + b"\x02"  # api key: TopicRecord
        + b"\x00"  # version
        + b"\x07orders"  # Name: compact string (length + 1)
        + TOPIC_ID  # TopicId
        + b"\x00"  # no tagged fields
    )
    assert encode_metadata_record(record) == expected
    assert decode_metadata_record(expected) == record


def test_delegation_token_records_golden_bytes() -> None:
    """Assembled from DelegationTokenRecord.json and RemoveDelegationTokenRecord.json
    (api keys 10 and 26, v0, flexible): compact strings and a compact array of them."""
    body = {
        "owner": "User:alice",
        "requester": "User:bob",
        "renewers": ["User:carol"],
        "issue_timestamp": 1,
        "max_timestamp": 3,
        "expiration_timestamp": 2,
        "token_id": "tok",
    }
    expected = (
        b"\x01\x0a\x00"  # frame version, api key 10, version 0
        + b"\x0bUser:alice"  # Owner
        + b"\x09User:bob"  # Requester
        + b"\x02\x0bUser:carol"  # Renewers: one compact string
        + (1).to_bytes(8, "big")  # IssueTimestamp
        + (3).to_bytes(8, "big")  # MaxTimestamp
        + (2).to_bytes(8, "big")  # ExpirationTimestamp
        + b"\x04tok"  # TokenId
        + b"\x00"  # no tagged fields
    )
    record = MetadataRecord("DelegationTokenRecord", 0, body)
    assert encode_metadata_record(record) == expected
    assert decode_metadata_record(expected) == record
    removal = MetadataRecord("RemoveDelegationTokenRecord", 0, {"token_id": "tok"})
    assert encode_metadata_record(removal) == b"\x01\x1a\x00\x04tok\x00"


def _partition_body(**changes: Any) -> dict[str, Any]:
    body = {
        "partition_id": 3,
        "topic_id": TOPIC_ID,
        "replicas": [1, 2, 3],
        "isr": [1, 2],
        "removing_replicas": [],
        "adding_replicas": [3],
        "leader": 1,
        "leader_recovery_state": 0,
        "leader_epoch": 4,
        "partition_epoch": 7,
        "directories": [DIR, DIR, DIR],
        "eligible_leader_replicas": None,
        "last_known_elr": None,
    }
    body.update(changes)
    return body


def test_partition_record_v2_golden_bytes() -> None:
    record = MetadataRecord("PartitionRecord", 2, _partition_body(eligible_leader_replicas=[2]))
    expected = (
        b"\x01\x03\x02"  # frame version 1, api key 3, version 2
        + i32(3)  # PartitionId
        + TOPIC_ID  # TopicId
        + int32_array([1, 2, 3])  # Replicas
        + int32_array([1, 2])  # Isr
        + int32_array([])  # RemovingReplicas
        + int32_array([3])  # AddingReplicas
        + i32(1)  # Leader
        # LeaderRecoveryState is tagged (tag 0) and at its default 0: not written
        + i32(4)  # LeaderEpoch
        + i32(7)  # PartitionEpoch
        + b"\x04"
        + DIR * 3  # Directories (v1+)
        + b"\x01"  # one tagged field:
        + b"\x01"  # tag 1, EligibleLeaderReplicas
        + b"\x05"  # its size: 1 (count) + 4
        + int32_array([2])
        # LastKnownElr (tag 2) is null, its default: not written
    )
    assert encode_metadata_record(record) == expected
    assert decode_metadata_record(expected) == record


def test_partition_record_v0_is_read_without_directories() -> None:
    """A log written by Kafka before KIP-858 replays; the absent field takes its default."""
    data = (
        b"\x01\x03\x00"
        + i32(0)
        + TOPIC_ID
        + int32_array([1])
        + int32_array([1])
        + int32_array([])
        + int32_array([])
        + i32(1)
        + i32(0)
        + i32(0)
        + b"\x01"  # one tagged field: LeaderRecoveryState = 1 (recovering)
        + b"\x00\x01\x01"
    )
    record = decode_metadata_record(data)
    assert record.version == 0
    assert record.body["leader_recovery_state"] == 1
    assert record.body["directories"] == []


def test_partition_change_record_writes_only_what_changed() -> None:
    record = make_record("PartitionChangeRecord", partition_id=3, topic_id=TOPIC_ID, isr=[1])
    expected = (
        b"\x01\x05\x02"
        + i32(3)
        + TOPIC_ID
        + b"\x01"  # one tagged field: Isr (tag 0); Leader -2 etc. are the defaults
        + b"\x00\x05"
        + int32_array([1])
    )
    assert encode_metadata_record(record) == expected
    decoded = decode_metadata_record(expected).body
    assert decoded["leader"] == -2
    assert decoded["replicas"] is None
    assert decoded["leader_recovery_state"] == -1


def test_frame_uses_multi_byte_varints_when_needed() -> None:
    """Readers must not assume one-byte varints: Kafka writes whatever size they need."""
    padded = b"\x81\x00" + b"\x82\x00" + b"\x80\x00" + b"\x07orders" + TOPIC_ID + b"\x00"
    assert decode_metadata_record(padded).body["name"] == "orders"


# ----------------------------------------------------------------------------- the API


def test_make_record_uses_latest_version_and_schema_defaults() -> None:
    record = make_record("PartitionRecord", topic_id=TOPIC_ID, replicas=[1])
    assert record.version == latest_version("PartitionRecord") == 2
    assert record.body["leader"] == -1
    assert record.body["partition_epoch"] == -1
    assert record.body["isr"] == []
    assert record.body["eligible_leader_replicas"] is None
    assert decode_metadata_record(encode_metadata_record(record)) == record


def test_make_record_takes_a_field_called_name() -> None:
    record = make_record("TopicRecord", name="orders", topic_id=TOPIC_ID)
    assert record == MetadataRecord("TopicRecord", 0, {"name": "orders", "topic_id": TOPIC_ID})


def test_make_record_rejects_unknown_names() -> None:
    with pytest.raises(ValueError, match="no field"):
        make_record("TopicRecord", name="t", topicid=TOPIC_ID)
    with pytest.raises(ValueError, match="unknown metadata record"):
        make_record("NoSuchRecord")


def test_default_lists_are_not_shared_between_records() -> None:
    first = make_record("PartitionRecord")
    first.body["replicas"].append(9)
    assert make_record("PartitionRecord").body["replicas"] == []


def test_encode_rejects_a_version_the_record_does_not_have() -> None:
    with pytest.raises(ValueError, match="no version 1"):
        encode_metadata_record(MetadataRecord("TopicRecord", 1, {"name": "t"}))


def test_api_keys_are_kafkas() -> None:
    assert METADATA_API_KEYS == {
        "RegisterBrokerRecord": 0,
        "UnregisterBrokerRecord": 1,
        "TopicRecord": 2,
        "PartitionRecord": 3,
        "ConfigRecord": 4,
        "PartitionChangeRecord": 5,
        "FenceBrokerRecord": 7,
        "UnfenceBrokerRecord": 8,
        "RemoveTopicRecord": 9,
        "FeatureLevelRecord": 12,
        "ClientQuotaRecord": 14,
        "ProducerIdsRecord": 15,
        "BrokerRegistrationChangeRecord": 17,
        "AccessControlEntryRecord": 18,
        "RemoveAccessControlEntryRecord": 19,
        "NoOpRecord": 20,
        "BeginTransactionRecord": 23,
        "EndTransactionRecord": 24,
        "AbortTransactionRecord": 25,
        "UserScramCredentialRecord": 11,
        "RemoveUserScramCredentialRecord": 22,
        "DelegationTokenRecord": 10,
        "RemoveDelegationTokenRecord": 26,
    }


# ----------------------------------------------------------------------------- round trips

CASES = [
    pytest.param(name, version, id=f"{name}-v{version}")
    for name, schema in METADATA_SCHEMAS.items()
    for version in range(schema.valid[0], schema.valid[1] + 1)
]


@pytest.mark.parametrize(("name", "version"), CASES)
@settings(max_examples=40, deadline=None, database=None)
@given(data=st.data())
def test_every_record_round_trips(name: str, version: int, data: st.DataObject) -> None:
    body = data.draw(body_strategy(METADATA_SCHEMAS[name].fields, version))
    record = MetadataRecord(name, version, body)
    encoded = encode_metadata_record(record)
    assert decode_metadata_record(encoded) == record
    assert decode_metadata_record(memoryview(encoded)) == record


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(("name", "version"), CASES)
def test_every_strict_prefix_is_refused(name: str, version: int) -> None:
    record = make_record(name)
    record = MetadataRecord(name, version, record.body)
    encoded = encode_metadata_record(record)
    for end in range(len(encoded)):
        with pytest.raises(DecodeError):
            decode_metadata_record(encoded[:end])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x01\x63\x00", "unknown metadata record api key 99"),
        (b"\x01\x02\x05", "TopicRecord version 5"),
        (b"\x00\x02\x00", "frame version 0"),
        (b"\x02\x02\x00", "unknown metadata record frame version 2"),
        (b"\x01\xff\xff\x03\x00", "too large"),
        (b"\x01\x02\x00\x01" + TOPIC_ID + b"\x00\x00", "garbage after TopicRecord"),
        (b"", "empty"),
    ],
)
def test_bad_frames_are_refused_with_a_readable_message(data: bytes, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        decode_metadata_record(data)


# ----------------------------------------------------------------------------- replay speed


def test_partition_record_decoding_fits_the_replay_budget() -> None:
    """A node replays 100k PartitionRecords in its 2 s start-up budget with room to spare.

    The bound (50 us a record) is generous for a loaded CI machine; a decoder
    that stopped being compiled once would blow through it.
    """
    encoded = encode_metadata_record(
        make_record(
            "PartitionRecord",
            partition_id=1,
            topic_id=TOPIC_ID,
            replicas=[1, 2, 3],
            isr=[1, 2, 3],
            leader=1,
            leader_epoch=1,
            partition_epoch=1,
            directories=[DIR] * 3,
        )
    )
    count = 20_000
    start = time.perf_counter()
    for _ in range(count):
        decode_metadata_record(encoded)
    assert time.perf_counter() - start < count * 50e-6


@settings(max_examples=300, deadline=None, database=None)
@given(
    prefix=st.sampled_from([b"", b"\x01", b"\x01\x03\x02", b"\x01\x11\x02", b"\x01\x00\x03"]),
    tail=st.binary(max_size=80),
)
def test_arbitrary_bytes_raise_only_decode_error(prefix: bytes, tail: bytes) -> None:
    """The metadata log is read from disk and from the network: nothing else may escape."""
    try:
        decode_metadata_record(prefix + tail)
    except DecodeError:
        pass
