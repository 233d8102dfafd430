"""Group and transaction APIs: realistic bodies at every version, checked against kafka-python.

The generic round-trip test feeds synthetic bodies to every API; this one uses
bodies shaped like real traffic (consumer-protocol metadata inside JoinGroup,
null committed metadata, static members, error codes) and compares our bytes
with two independent encoders in kafka-python 3.0.12: the hand-written classes
of ``kafka.protocol.old`` (older versions) and the JSON-driven
``kafka.protocol.*`` messages (all versions).
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest

from samsa.errors import DecodeError
from samsa.protocol.api import (
    decode_message,
    decode_request,
    decode_response,
    encode_message,
    encode_request,
    encode_response,
)
from samsa.protocol.consumer_protocol import encode_assignment, encode_subscription
from samsa.protocol.messages import APIS
from samsa.protocol.schema import Field

SUB_1 = encode_subscription(["orders", "audit"], rack_id="eu-west-1a")
SUB_2 = encode_subscription(
    ["orders"], owned_partitions={"orders": [2]}, generation_id=7, version=2
)
ASSIGN_1 = encode_assignment({"orders": [0, 1], "audit": [0]})
ASSIGN_2 = encode_assignment({"orders": [2]}, user_data=b"sticky")

PARTITION_OFFSETS = [
    {
        "partition_index": 0,
        "committed_offset": 1042,
        "committed_leader_epoch": 3,
        "metadata": "",
        "error_code": 0,
    },
    {
        "partition_index": 1,
        "committed_offset": -1,
        "committed_leader_epoch": -1,
        "metadata": None,
        "error_code": 0,
    },
]

# api key -> (request body, response body); each holds every field of every version.
BODIES: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {
    8: (
        {
            "group_id": "orders-app",
            "generation_id_or_member_epoch": 7,
            "member_id": "consumer-1-4f2c",
            "group_instance_id": "pod-3",
            "retention_time_ms": 86_400_000,
            "topics": [
                {
                    "name": "orders",
                    "partitions": [
                        {
                            "partition_index": 0,
                            "committed_offset": 1042,
                            "committed_leader_epoch": 3,
                            "commit_timestamp": -1,
                            "committed_metadata": "",
                        },
                        {
                            "partition_index": 1,
                            "committed_offset": 99,
                            "committed_leader_epoch": -1,
                            "commit_timestamp": -1,
                            "committed_metadata": None,
                        },
                    ],
                }
            ],
        },
        {
            "throttle_time_ms": 0,
            "topics": [
                {
                    "name": "orders",
                    "partitions": [
                        {"partition_index": 0, "error_code": 0},
                        {"partition_index": 1, "error_code": 22},
                    ],
                }
            ],
        },
    ),
    9: (
        {
            "group_id": "orders-app",
            "topics": [{"name": "orders", "partition_indexes": [0, 1, 2]}],
            "groups": [
                {
                    "group_id": "orders-app",
                    "member_id": "consumer-1-4f2c",
                    "member_epoch": 5,
                    "topics": [{"name": "orders", "partition_indexes": [0, 1]}],
                },
                {"group_id": "audit", "member_id": None, "member_epoch": -1, "topics": None},
            ],
            "require_stable": True,
        },
        {
            "throttle_time_ms": 5,
            "topics": [{"name": "orders", "partitions": PARTITION_OFFSETS}],
            "error_code": 0,
            "groups": [
                {
                    "group_id": "orders-app",
                    "topics": [{"name": "orders", "partitions": PARTITION_OFFSETS}],
                    "error_code": 0,
                },
                {"group_id": "gone", "topics": [], "error_code": 69},
            ],
        },
    ),
    10: (
        {"key": "orders-app", "key_type": 0, "coordinator_keys": ["orders-app", "audit"]},
        {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "node_id": 1,
            "host": "broker-1.samsa.local",
            "port": 9092,
            "coordinators": [
                {
                    "key": "orders-app",
                    "node_id": 1,
                    "host": "broker-1.samsa.local",
                    "port": 9092,
                    "error_code": 0,
                    "error_message": None,
                },
                {
                    "key": "audit",
                    "node_id": -1,
                    "host": "",
                    "port": -1,
                    "error_code": 15,
                    "error_message": "The coordinator is not available.",
                },
            ],
        },
    ),
    11: (
        {
            "group_id": "orders-app",
            "session_timeout_ms": 45_000,
            "rebalance_timeout_ms": 300_000,
            "member_id": "",
            "group_instance_id": "pod-3",
            "protocol_type": "consumer",
            "protocols": [
                {"name": "range", "metadata": SUB_1},
                {"name": "cooperative-sticky", "metadata": SUB_2},
            ],
            "reason": "rebalance after metadata change",
        },
        {
            "throttle_time_ms": 0,
            "error_code": 0,
            "generation_id": 8,
            "protocol_type": "consumer",
            "protocol_name": "range",
            "leader": "consumer-1-4f2c",
            "skip_assignment": False,
            "member_id": "consumer-1-4f2c",
            "members": [
                {"member_id": "consumer-1-4f2c", "group_instance_id": "pod-3", "metadata": SUB_1},
                {"member_id": "consumer-2-9a01", "group_instance_id": None, "metadata": SUB_2},
            ],
        },
    ),
    12: (
        {
            "group_id": "orders-app",
            "generation_id": 8,
            "member_id": "consumer-1-4f2c",
            "group_instance_id": "pod-3",
        },
        {"throttle_time_ms": 0, "error_code": 27},
    ),
    13: (
        {
            "group_id": "orders-app",
            "member_id": "consumer-1-4f2c",
            "members": [
                {
                    "member_id": "consumer-1-4f2c",
                    "group_instance_id": None,
                    "reason": "the consumer is being closed",
                },
                {"member_id": "", "group_instance_id": "pod-3", "reason": None},
            ],
        },
        {
            "throttle_time_ms": 0,
            "error_code": 0,
            "members": [
                {"member_id": "consumer-1-4f2c", "group_instance_id": None, "error_code": 0},
                {"member_id": "", "group_instance_id": "pod-3", "error_code": 25},
            ],
        },
    ),
    14: (
        {
            "group_id": "orders-app",
            "generation_id": 8,
            "member_id": "consumer-1-4f2c",
            "group_instance_id": "pod-3",
            "protocol_type": "consumer",
            "protocol_name": "range",
            "assignments": [
                {"member_id": "consumer-1-4f2c", "assignment": ASSIGN_1},
                {"member_id": "consumer-2-9a01", "assignment": ASSIGN_2},
            ],
        },
        {
            "throttle_time_ms": 0,
            "error_code": 0,
            "protocol_type": "consumer",
            "protocol_name": "range",
            "assignment": ASSIGN_1,
        },
    ),
    15: (
        {"groups": ["orders-app", "audit"], "include_authorized_operations": True},
        {
            "throttle_time_ms": 0,
            "groups": [
                {
                    "error_code": 0,
                    "group_id": "orders-app",
                    "group_state": "Stable",
                    "protocol_type": "consumer",
                    "protocol_data": "range",
                    "members": [
                        {
                            "member_id": "consumer-1-4f2c",
                            "group_instance_id": "pod-3",
                            "client_id": "consumer-1",
                            "client_host": "/10.0.0.7",
                            "member_metadata": SUB_1,
                            "member_assignment": ASSIGN_1,
                        }
                    ],
                    "authorized_operations": 0b1_0000_1010,
                },
                {
                    "error_code": 0,
                    "group_id": "audit",
                    "group_state": "Dead",
                    "protocol_type": "",
                    "protocol_data": "",
                    "members": [],
                    "authorized_operations": -(2**31),
                },
            ],
        },
    ),
    16: (
        {"states_filter": ["Stable", "Empty"], "types_filter": ["classic"]},
        {
            "throttle_time_ms": 0,
            "error_code": 0,
            "groups": [
                {
                    "group_id": "orders-app",
                    "protocol_type": "consumer",
                    "group_state": "Stable",
                    "group_type": "classic",
                }
            ],
        },
    ),
    42: (
        {"groups_names": ["orders-app", "audit"]},
        {
            "throttle_time_ms": 0,
            "results": [
                {"group_id": "orders-app", "error_code": 0},
                {"group_id": "audit", "error_code": 68},
            ],
        },
    ),
    47: (
        {
            "group_id": "orders-app",
            "topics": [
                {"name": "orders", "partitions": [{"partition_index": 0}, {"partition_index": 1}]}
            ],
        },
        {
            "error_code": 0,
            "throttle_time_ms": 0,
            "topics": [
                {
                    "name": "orders",
                    "partitions": [
                        {"partition_index": 0, "error_code": 0},
                        {"partition_index": 1, "error_code": 86},
                    ],
                }
            ],
        },
    ),
    24: (
        {
            "v3_and_below_transactional_id": "payments-tx",
            "v3_and_below_producer_id": 4001,
            "v3_and_below_producer_epoch": 2,
            "v3_and_below_topics": [{"name": "payments", "partitions": [0, 3]}],
        },
        {
            "throttle_time_ms": 0,
            "results_by_topic_v3_and_below": [
                {
                    "name": "payments",
                    "results_by_partition": [
                        {"partition_index": 0, "partition_error_code": 0},
                        {"partition_index": 3, "partition_error_code": 0},
                    ],
                }
            ],
        },
    ),
    25: (
        {
            "transactional_id": "payments-tx",
            "producer_id": 4001,
            "producer_epoch": 2,
            "group_id": "orders-app",
        },
        {"throttle_time_ms": 0, "error_code": 0},
    ),
    26: (
        {
            "transactional_id": "payments-tx",
            "producer_id": 4001,
            "producer_epoch": 2,
            "committed": True,
        },
        {"throttle_time_ms": 0, "error_code": 47},
    ),
    28: (
        {
            "transactional_id": "payments-tx",
            "group_id": "orders-app",
            "producer_id": 4001,
            "producer_epoch": 2,
            "generation_id": 8,
            "member_id": "consumer-1-4f2c",
            "group_instance_id": "pod-3",
            "topics": [
                {
                    "name": "orders",
                    "partitions": [
                        {
                            "partition_index": 0,
                            "committed_offset": 1043,
                            "committed_leader_epoch": 3,
                            "committed_metadata": None,
                        }
                    ],
                }
            ],
        },
        {
            "throttle_time_ms": 0,
            "topics": [{"name": "orders", "partitions": [{"partition_index": 0, "error_code": 0}]}],
        },
    ),
    27: (
        {
            "markers": [
                {
                    "producer_id": 4001,
                    "producer_epoch": 2,
                    "transaction_result": True,
                    "topics": [{"name": "payments", "partition_indexes": [0, 3]}],
                    "coordinator_epoch": 1,
                }
            ]
        },
        {
            "markers": [
                {
                    "producer_id": 4001,
                    "topics": [
                        {
                            "name": "payments",
                            "partitions": [
                                {"partition_index": 0, "error_code": 0},
                                {"partition_index": 3, "error_code": 0},
                            ],
                        }
                    ],
                }
            ]
        },
    ),
    66: (
        {"state_filters": ["Ongoing"], "producer_id_filters": [4001]},
        {
            "throttle_time_ms": 0,
            "error_code": 0,
            "unknown_state_filters": ["Sleeping"],
            "transaction_states": [
                {
                    "transactional_id": "payments-tx",
                    "producer_id": 4001,
                    "transaction_state": "Ongoing",
                }
            ],
        },
    ),
    65: (
        {"transactional_ids": ["payments-tx"]},
        {
            "throttle_time_ms": 0,
            "transaction_states": [
                {
                    "error_code": 0,
                    "transactional_id": "payments-tx",
                    "transaction_state": "Ongoing",
                    "transaction_timeout_ms": 60_000,
                    "transaction_start_time_ms": 1_700_000_000_000,
                    "producer_id": 4001,
                    "producer_epoch": 2,
                    "topics": [{"topic": "payments", "partitions": [0, 3]}],
                }
            ],
        },
    ),
}

# key -> (name, valid, first flexible version) as assigned in the design table.
EXPECTED = {
    8: ("OffsetCommit", (2, 10), 8),
    9: ("OffsetFetch", (1, 10), 6),
    10: ("FindCoordinator", (0, 6), 3),
    11: ("JoinGroup", (0, 9), 6),
    12: ("Heartbeat", (0, 4), 4),
    13: ("LeaveGroup", (0, 5), 4),
    14: ("SyncGroup", (0, 5), 4),
    15: ("DescribeGroups", (0, 6), 5),
    16: ("ListGroups", (0, 5), 3),
    42: ("DeleteGroups", (0, 3), 2),
    47: ("OffsetDelete", (0, 0), None),
    24: ("AddPartitionsToTxn", (0, 5), 3),
    25: ("AddOffsetsToTxn", (0, 4), 3),
    26: ("EndTxn", (0, 5), 3),
    28: ("TxnOffsetCommit", (0, 6), 3),
    27: ("WriteTxnMarkers", (1, 2), 1),
    66: ("ListTransactions", (0, 2), 0),
    65: ("DescribeTransactions", (0, 0), 0),
}


def project(fields: tuple[Field, ...], version: int, body: dict[str, Any]) -> dict[str, Any]:
    """What a decoder returns for ``body`` at ``version``: absent fields get defaults."""
    out: dict[str, Any] = {}
    for f in fields:
        if version not in f.versions and version not in f.tagged:
            out[f.name] = f.default_value()
            continue
        value = body.get(f.name, f.default_value())
        if value is not None and f.type == "[]struct":
            value = [project(f.fields, version, v) for v in value]
        elif value is not None and f.type == "struct":
            value = project(f.fields, version, value)
        out[f.name] = value
    return out


def cases() -> list[tuple[int, int, bool]]:
    return [
        (key, version, request)
        for key in BODIES
        for version in range(APIS[key].valid[0], APIS[key].valid[1] + 1)
        for request in (True, False)
    ]


def body_at(key: int, version: int, request: bool) -> dict[str, Any]:
    api = APIS[key]
    return project(api.request if request else api.response, version, BODIES[key][not request])


def case_id(case: tuple[int, int, bool]) -> str:
    key, version, request = case
    return f"{APIS[key].name}-v{version}-{'request' if request else 'response'}"


# ----------------------------------------------------------------------------- registry


def test_every_assigned_api_is_registered_with_its_version_ranges() -> None:
    for key, (name, valid, flexible) in EXPECTED.items():
        api = APIS[key]
        assert (api.name, api.valid, api.flexible) == (name, valid, flexible)
    assert set(BODIES) == set(EXPECTED)


# ----------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("case", cases(), ids=case_id)
def test_realistic_body_round_trips_at_every_version(case: tuple[int, int, bool]) -> None:
    key, version, request = case
    body = body_at(key, version, request)
    encoded = encode_message(key, version, body, request)
    assert decode_message(key, version, encoded, request) == body
    # Fields absent at this version are dropped, not written: the full body encodes the same.
    assert encode_message(key, version, BODIES[key][not request], request) == encoded


@pytest.mark.parametrize("case", [c for c in cases() if c[2]], ids=case_id)
def test_request_frame_round_trips_through_the_header(case: tuple[int, int, bool]) -> None:
    key, version, _ = case
    body = body_at(key, version, True)
    frame = encode_request(key, version, 1234, "samsa-test", body)
    header, decoded = decode_request(memoryview(frame)[4:])
    assert (header.api_key, header.api_version, header.correlation_id) == (key, version, 1234)
    assert header.client_id == "samsa-test"
    assert decoded == body


@pytest.mark.parametrize("case", [c for c in cases() if not c[2]], ids=case_id)
def test_response_frame_round_trips_through_the_header(case: tuple[int, int, bool]) -> None:
    key, version, _ = case
    body = body_at(key, version, False)
    frame = b"".join(bytes(c) for c in encode_response(key, version, 99, body))
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    assert decode_response(key, version, memoryview(frame)[4:]) == (99, body)


# ----------------------------------------------------------------------------- layout details


@pytest.mark.parametrize("version", range(2, 8))
def test_offset_fetch_null_topics_means_all_partitions(version: int) -> None:
    body = body_at(9, version, True) | {"topics": None}
    encoded = encode_message(9, version, body, request=True)
    assert decode_message(9, version, encoded, request=True)["topics"] is None


def test_offset_fetch_v1_rejects_null_topics() -> None:
    encoded = encode_message(9, 1, {"group_id": "g", "topics": None}, request=True)
    with pytest.raises(DecodeError):
        decode_message(9, 1, encoded, request=True)


@pytest.mark.parametrize("version", [8, 9])
def test_offset_fetch_v8_asks_many_groups_with_nullable_topics(version: int) -> None:
    decoded = decode_message(9, version, encode_message(9, version, BODIES[9][0], True), True)
    assert [g["group_id"] for g in decoded["groups"]] == ["orders-app", "audit"]
    assert decoded["groups"][1]["topics"] is None
    assert decoded["group_id"] == "" and decoded["topics"] == []


def test_join_group_static_member_id_is_nullable_from_v5() -> None:
    body = body_at(11, 5, True) | {"group_instance_id": None}
    assert decode_message(11, 5, encode_message(11, 5, body, True), True) == body
    v4 = encode_message(11, 4, BODIES[11][0], True)
    assert b"pod-3" not in v4


def test_find_coordinator_v4_batches_keys() -> None:
    request = decode_message(10, 4, encode_message(10, 4, BODIES[10][0], True), True)
    assert request["coordinator_keys"] == ["orders-app", "audit"]
    assert request["key"] == ""
    response = decode_message(10, 4, encode_message(10, 4, BODIES[10][1], False), False)
    assert [c["key"] for c in response["coordinators"]] == ["orders-app", "audit"]
    assert response["host"] == ""


def test_heartbeat_bytes_match_a_hand_written_frame() -> None:
    body = {"group_id": "g", "generation_id": 3, "member_id": "m", "group_instance_id": None}
    assert encode_message(12, 0, body, True) == b"\x00\x01g\x00\x00\x00\x03\x00\x01m"
    # v4: compact strings (length + 1), a null compact string is 0, then an empty tag section.
    assert encode_message(12, 4, body, True) == b"\x02g\x00\x00\x00\x03\x02m\x00\x00"


# ----------------------------------------------------------------------------- kafka-python oracles

kp_consumer = pytest.importorskip("kafka.protocol.consumer")
kp_metadata = pytest.importorskip("kafka.protocol.metadata")
kp_producer = pytest.importorskip("kafka.protocol.producer")
kp_admin = pytest.importorskip("kafka.protocol.admin")
kp_old_group = pytest.importorskip("kafka.protocol.old.group")
kp_old_commit = pytest.importorskip("kafka.protocol.old.commit")
kp_old_find = pytest.importorskip("kafka.protocol.old.find_coordinator")

# Our API key -> kafka-python's JSON-driven (request, response) message classes.
KP_MESSAGES: dict[int, tuple[Any, Any]] = {
    8: (kp_consumer.OffsetCommitRequest, kp_consumer.OffsetCommitResponse),
    9: (kp_consumer.OffsetFetchRequest, kp_consumer.OffsetFetchResponse),
    10: (kp_metadata.FindCoordinatorRequest, kp_metadata.FindCoordinatorResponse),
    11: (kp_consumer.JoinGroupRequest, kp_consumer.JoinGroupResponse),
    12: (kp_consumer.HeartbeatRequest, kp_consumer.HeartbeatResponse),
    13: (kp_consumer.LeaveGroupRequest, kp_consumer.LeaveGroupResponse),
    14: (kp_consumer.SyncGroupRequest, kp_consumer.SyncGroupResponse),
    15: (kp_admin.DescribeGroupsRequest, kp_admin.DescribeGroupsResponse),
    16: (kp_admin.ListGroupsRequest, kp_admin.ListGroupsResponse),
    42: (kp_admin.DeleteGroupsRequest, kp_admin.DeleteGroupsResponse),
    47: (kp_consumer.OffsetDeleteRequest, kp_consumer.OffsetDeleteResponse),
    24: (kp_producer.AddPartitionsToTxnRequest, kp_producer.AddPartitionsToTxnResponse),
    25: (kp_producer.AddOffsetsToTxnRequest, kp_producer.AddOffsetsToTxnResponse),
    26: (kp_producer.EndTxnRequest, kp_producer.EndTxnResponse),
    28: (kp_producer.TxnOffsetCommitRequest, kp_producer.TxnOffsetCommitResponse),
    27: (kp_producer.WriteTxnMarkersRequest, kp_producer.WriteTxnMarkersResponse),
    66: (kp_admin.ListTransactionsRequest, kp_admin.ListTransactionsResponse),
    65: (kp_admin.DescribeTransactionsRequest, kp_admin.DescribeTransactionsResponse),
}

# kafka-python's hand-written classes (indexed by version), independent of Kafka's JSON.
KP_OLD: dict[int, tuple[list[Any], list[Any]]] = {
    8: (kp_old_commit.OffsetCommitRequest, kp_old_commit.OffsetCommitResponse),
    9: (kp_old_commit.OffsetFetchRequest, kp_old_commit.OffsetFetchResponse),
    10: (kp_old_find.FindCoordinatorRequest, kp_old_find.FindCoordinatorResponse),
    11: (kp_old_group.JoinGroupRequest, kp_old_group.JoinGroupResponse),
    12: (kp_old_group.HeartbeatRequest, kp_old_group.HeartbeatResponse),
    13: (kp_old_group.LeaveGroupRequest, kp_old_group.LeaveGroupResponse),
    14: (kp_old_group.SyncGroupRequest, kp_old_group.SyncGroupResponse),
}


# kafka-python shows these int32 bit masks as sets of bit numbers (None = "not asked").
KP_BITFIELDS = frozenset({"authorized_operations"})


def _to_bits(mask: int) -> set[int] | None:
    return None if mask == -(2**31) else {b for b in range(32) if mask >> b & 1}


def _from_kp(value: Any) -> Any:
    """kafka-python's decoded dicts in our shape: bit sets back to int32 masks."""
    if isinstance(value, dict):
        return {k: _from_kp_field(k, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_kp(v) for v in value]
    if isinstance(value, uuid.UUID):
        return value.bytes
    return value


def _from_kp_field(name: str, value: Any) -> Any:
    if name in KP_BITFIELDS:
        return _from_bits(value)
    if name == "topic_id" and value is None:  # kafka-python reads the zero uuid as None
        return bytes(16)
    return _from_kp(value)


def _from_bits(bits: set[int] | None) -> int:
    if bits is None:
        return -(2**31)
    mask = sum(1 << b for b in bits)
    return mask - (1 << 32) if mask >= 1 << 31 else mask


def _snake(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    return re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", s).lower()


def kp_build(top: Any, cls: Any, json_fields: list[dict[str, Any]], body: dict[str, Any]) -> Any:
    """Build a kafka-python message object from one of our bodies, nested classes and all."""
    values: dict[str, Any] = {}
    for jf in json_fields:
        name = _snake(jf["name"])
        if name not in body:
            continue
        value = body[name]
        if name in KP_BITFIELDS:
            value = _to_bits(value)
        if jf["type"] == "uuid" and isinstance(value, bytes):
            value = uuid.UUID(bytes=value)
        type_name = jf["type"].removeprefix("[]")
        if value is not None and type_name[0].isupper():
            nested = getattr(cls, type_name, None) or getattr(top, type_name)
            nested_fields = jf.get("fields") or next(
                s["fields"] for s in top.json.get("commonStructs", []) if s["name"] == type_name
            )
            if jf["type"].startswith("[]"):
                value = [kp_build(top, nested, nested_fields, v) for v in value]
            else:
                value = kp_build(top, nested, nested_fields, value)
        values[name] = value
    return cls(**values)


def present_only(fields: tuple[Field, ...], version: int, body: dict[str, Any]) -> dict[str, Any]:
    """The fields of ``body`` that exist at ``version`` (defaults of absent ones differ by library)."""
    out: dict[str, Any] = {}
    for f in fields:
        if version not in f.versions:
            continue
        value = body[f.name]
        if value is not None and f.type == "[]struct":
            value = [present_only(f.fields, version, v) for v in value]
        out[f.name] = value
    return out


def wire_tuple(fields: tuple[Field, ...], version: int, body: dict[str, Any]) -> tuple[Any, ...]:
    """Our body as positional values in wire order, the form kafka-python's old Structs take."""
    out = []
    for f in fields:
        if version not in f.versions:
            continue
        value = body[f.name]
        if value is not None and f.type == "[]struct":
            value = [wire_tuple(f.fields, version, v) for v in value]
        out.append(value)
    return tuple(out)


def _kp_knows(case: tuple[int, int, bool]) -> bool:
    """kafka-python's classes stop at Kafka 4.1's versions (the oracle for the
    newer ones is Kafka's own codec, test_kafka_codec_oracle.py)."""
    key, version, request = case
    return key in KP_MESSAGES and version <= KP_MESSAGES[key][0 if request else 1].max_version


@pytest.mark.parametrize("case", [c for c in cases() if _kp_knows(c)], ids=case_id)
def test_bytes_match_kafka_python_messages(case: tuple[int, int, bool]) -> None:
    key, version, request = case
    cls = KP_MESSAGES[key][0 if request else 1]
    body = body_at(key, version, request)
    ours = encode_message(key, version, body, request)
    theirs = kp_build(cls, cls, cls.json["fields"], body)
    assert bytes(theirs.encode(version=version)) == ours
    api = APIS[key]
    fields = api.request if request else api.response
    decoded = _from_kp(cls.decode(ours, version=version).to_dict(json=False))
    assert present_only(fields, version, decoded) == present_only(fields, version, body)


OLD_CASES = [c for c in cases() if c[0] in KP_OLD and c[1] < len(KP_OLD[c[0]][0 if c[2] else 1])]


@pytest.mark.parametrize("case", OLD_CASES, ids=case_id)
def test_bytes_match_kafka_python_hand_written_structs(case: tuple[int, int, bool]) -> None:
    key, version, request = case
    cls = KP_OLD[key][0 if request else 1][version]
    api = APIS[key]
    body = body_at(key, version, request)
    theirs = cls(*wire_tuple(api.request if request else api.response, version, body)).encode()
    assert encode_message(key, version, body, request) == bytes(theirs)
