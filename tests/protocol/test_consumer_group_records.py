"""KIP-848 ``__consumer_offsets`` records: Kafka's key versions and value layouts."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from samsa.errors import DecodeError
from samsa.protocol.internal_records.consumer_group_records import (
    CURRENT_MEMBER_ASSIGNMENT,
    GROUP_METADATA,
    MEMBER_METADATA,
    PARTITION_METADATA,
    TARGET_ASSIGNMENT_MEMBER,
    TARGET_ASSIGNMENT_METADATA,
    ConsumerGroupKey,
    assignment_from_wire,
    assignment_to_wire,
    decode_consumer_group_key,
    decode_consumer_group_value,
    encode_consumer_group_value,
)
from samsa.protocol.internal_records.group_records import UnknownRecordKey, decode_key

T = bytes(range(16))


def test_keys_start_with_the_record_type_and_round_trip() -> None:
    group_key = ConsumerGroupKey(GROUP_METADATA, "g")
    assert group_key.encode() == b"\x00\x03\x00\x01g"
    member_key = ConsumerGroupKey(CURRENT_MEMBER_ASSIGNMENT, "g", "m")
    assert member_key.encode() == b"\x00\x08\x00\x01g\x00\x01m"
    for key in (group_key, member_key):
        assert decode_consumer_group_key(key.encode()) == key
        with pytest.raises(UnknownRecordKey):  # the classic loader hands them on
            decode_key(key.encode())


def test_group_metadata_value_is_flexible_v0_with_tagged_hash() -> None:
    value = encode_consumer_group_value(GROUP_METADATA, {"epoch": 5, "metadata_hash": 0})
    assert value == b"\x00\x00" + b"\x00\x00\x00\x05" + b"\x00"
    assert decode_consumer_group_value(GROUP_METADATA, value)["epoch"] == 5


@pytest.mark.parametrize(
    ("record_type", "body"),
    [
        (
            PARTITION_METADATA,
            {
                "topics": [
                    {"topic_id": T, "topic_name": "t", "num_partitions": 3, "partition_racks": []}
                ]
            },
        ),
        (
            MEMBER_METADATA,
            {
                "instance_id": None,
                "rack_id": "r1",
                "client_id": "c",
                "client_host": "/127.0.0.1",
                "subscribed_topic_names": ["t"],
                "subscribed_topic_regex": None,
                "rebalance_timeout_ms": 30000,
                "server_assignor": "uniform",
            },
        ),
        (TARGET_ASSIGNMENT_METADATA, {"assignment_epoch": 4}),
        (TARGET_ASSIGNMENT_MEMBER, {"topic_partitions": [{"topic_id": T, "partitions": [0, 2]}]}),
        (
            CURRENT_MEMBER_ASSIGNMENT,
            {
                "member_epoch": 4,
                "previous_member_epoch": 3,
                "state": 1,
                "assigned_partitions": [{"topic_id": T, "partitions": [0]}],
                "partitions_pending_revocation": [{"topic_id": T, "partitions": [2]}],
            },
        ),
    ],
)
def test_values_round_trip(record_type: int, body: dict[str, object]) -> None:
    value = encode_consumer_group_value(record_type, body)
    assert value[:2] == b"\x00\x00"
    decoded = decode_consumer_group_value(record_type, value)
    assert {k: decoded[k] for k in body} == body


def test_truncated_key_is_a_decode_error() -> None:
    with pytest.raises(DecodeError):
        decode_consumer_group_key(b"\x00")
    with pytest.raises(DecodeError):
        decode_consumer_group_key(b"\x00\x02\x00\x01g")


def test_assignment_wire_form_is_sorted_and_drops_empty_topics() -> None:
    assignment = {T: frozenset({2, 0}), b"\x00" * 16: frozenset()}
    wire = assignment_to_wire(assignment)
    assert wire == [{"topic_id": T, "partitions": [0, 2]}]
    assert assignment_from_wire(wire) == {T: frozenset({0, 2})}


def member_metadata(classic: dict[str, object] | None) -> dict[str, object]:
    return {
        "instance_id": "i-1",
        "rack_id": None,
        "client_id": "c",
        "client_host": "/127.0.0.1",
        "subscribed_topic_names": ["t"],
        "subscribed_topic_regex": None,
        "rebalance_timeout_ms": 30000,
        "server_assignor": None,
        "classic_member_metadata": classic,
    }


def test_a_classic_members_metadata_round_trips_and_is_absent_for_others() -> None:
    classic = {
        "session_timeout_ms": 6000,
        "supported_protocols": [
            {"name": "range", "metadata": b"\x00\x03sub"},
            {"name": "roundrobin", "metadata": b""},
        ],
    }
    for value in (member_metadata(classic), member_metadata(None)):
        encoded = encode_consumer_group_value(MEMBER_METADATA, value)
        assert decode_consumer_group_value(MEMBER_METADATA, encoded) == value


def test_kafka_reads_and_writes_the_classic_member_metadata_as_we_do(
    kafka_reference: Any, tmp_path: Path
) -> None:
    """Kafka's generated ConsumerGroupMemberMetadataValue reads our bytes (tagged
    ClassicMemberMetadata with its session timeout and protocols) and writes the
    same bytes back: a data dir is readable by Kafka's own tools."""
    from tests.kafka_tools.conftest import compile_java

    source = Path(__file__).with_name("java") / "MemberMetadataOracle.java"
    classes = compile_java(
        kafka_reference,
        source,
        tmp_path,
        ("kafka-clients", "kafka-group-coordinator", "jackson-databind", "jackson-core"),
    )
    classic = {
        "session_timeout_ms": 6000,
        "supported_protocols": [{"name": "range", "metadata": b"\x00\x01"}],
    }
    encoded = encode_consumer_group_value(MEMBER_METADATA, member_metadata(classic))
    done = subprocess.run(
        kafka_reference.java_command(
            "MemberMetadataOracle",
            encoded.hex(),
            quick_start=True,
            classpath=f"{classes}:{kafka_reference.kafka_classpath}",
        ),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    as_json, written = done.stdout.splitlines()
    parsed = json.loads(as_json)
    assert parsed["classicMemberMetadata"]["sessionTimeoutMs"] == 6000
    assert parsed["classicMemberMetadata"]["supportedProtocols"][0]["name"] == "range"
    assert written == encoded.hex()
