"""Group and transaction APIs: realistic bodies at every version, checked against kafka-python.

The generic round-trip test feeds synthetic bodies to every API; this one uses
bodies shaped like real traffic (consumer-protocol metadata inside JoinGroup,
null committed metadata, static members, error codes) and compares our bytes
with two independent encoders in kafka-python 3.0.12: the hand-written classes
of ``kafka.protocol.old`` (older versions) and the JSON-driven
``kafka.protocol.*`` messages (all versions).
"""

from __future__ import annotations

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
    8: ("OffsetCommit", (2, 9), 8),
    9: ("OffsetFetch", (1, 9), 6),
    10: ("FindCoordinator", (0, 4), 3),
    11: ("JoinGroup", (0, 9), 6),
    12: ("Heartbeat", (0, 4), 4),
    13: ("LeaveGroup", (0, 5), 4),
    14: ("SyncGroup", (0, 5), 4),
    15: ("DescribeGroups", (0, 5), 5),
    16: ("ListGroups", (0, 5), 3),
    42: ("DeleteGroups", (0, 2), 2),
    47: ("OffsetDelete", (0, 0), None),
    24: ("AddPartitionsToTxn", (0, 3), 3),
    25: ("AddOffsetsToTxn", (0, 3), 3),
    26: ("EndTxn", (0, 3), 3),
    28: ("TxnOffsetCommit", (0, 3), 3),
    27: ("WriteTxnMarkers", (0, 1), 1),
    66: ("ListTransactions", (0, 0), 0),
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
