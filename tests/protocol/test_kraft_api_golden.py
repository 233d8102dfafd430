"""Golden bytes of KRaft-era requests, written out by hand from Kafka's JSON layouts.

Each expected frame body is assembled field by field with ``struct`` from the
order and types in VoteRequest.json / FetchRequest.json, not by our encoder, so a
transcription slip in the schema (a field out of place, a wrong tag, a missing
tagged section) shows up as a byte difference.
"""

from __future__ import annotations

import struct

from samsa.protocol.api import decode_message, encode_message
from samsa.protocol.messages import APIS

TOPIC_ID = bytes(range(16))
DIR_A = bytes(range(16, 32))
DIR_B = bytes(range(32, 48))


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def compact_string(s: str | None) -> bytes:
    """Flexible-version string: unsigned varint length + 1 (0 = null), then UTF-8."""
    if s is None:
        return b"\x00"
    data = s.encode()
    assert len(data) < 127
    return bytes([len(data) + 1]) + data


def compact_count(n: int) -> bytes:
    assert n < 127
    return bytes([n + 1])


NO_TAGS = b"\x00"


def test_vote_request_v2_matches_kafka_layout() -> None:
    body = {
        "cluster_id": "kraft",
        "voter_id": 2,
        "topics": [
            {
                "topic_name": "__cluster_metadata",
                "partitions": [
                    {
                        "partition_index": 0,
                        "replica_epoch": 5,
                        "replica_id": 1,
                        "replica_directory_id": DIR_A,
                        "voter_directory_id": DIR_B,
                        "last_offset_epoch": 4,
                        "last_offset": 100,
                        "pre_vote": True,
                    }
                ],
            }
        ],
    }
    expected = (
        compact_string("kraft")  # ClusterId (nullable)
        + i32(2)  # VoterId (v1+)
        + compact_count(1)  # Topics
        + compact_string("__cluster_metadata")  # TopicName
        + compact_count(1)  # Partitions
        + i32(0)  # PartitionIndex
        + i32(5)  # ReplicaEpoch
        + i32(1)  # ReplicaId
        + DIR_A  # ReplicaDirectoryId (v1+)
        + DIR_B  # VoterDirectoryId (v1+)
        + i32(4)  # LastOffsetEpoch
        + i64(100)  # LastOffset
        + b"\x01"  # PreVote (v2+)
        + NO_TAGS  # partition
        + NO_TAGS  # topic
        + NO_TAGS  # request
    )
    assert encode_message(52, 2, body, True) == expected
    decoded = decode_message(52, 2, expected, True)
    assert decoded["topics"][0]["partitions"][0]["pre_vote"] is True
    assert decoded["voter_id"] == 2


def test_vote_request_v0_has_neither_directory_ids_nor_pre_vote() -> None:
    partition = {
        "partition_index": 0,
        "replica_epoch": 5,
        "replica_id": 1,
        "replica_directory_id": DIR_A,
        "voter_directory_id": DIR_B,
        "last_offset_epoch": 4,
        "last_offset": 100,
        "pre_vote": True,
    }
    body = {"cluster_id": None, "topics": [{"topic_name": "t", "partitions": [partition]}]}
    expected = (
        compact_string(None)
        + compact_count(1)
        + compact_string("t")
        + compact_count(1)
        + i32(0)
        + i32(5)
        + i32(1)
        + i32(4)
        + i64(100)
        + NO_TAGS
        + NO_TAGS
        + NO_TAGS
    )
    assert encode_message(52, 0, body, True) == expected


def _fetch_partition() -> dict[str, object]:
    return {
        "partition": 0,
        "current_leader_epoch": 7,
        "fetch_offset": 1234,
        "last_fetched_epoch": 6,
        "log_start_offset": 0,
        "partition_max_bytes": 1048576,
    }


def test_fetch_v13_request_names_the_topic_by_id() -> None:
    body = {
        "replica_id": 2,
        "max_wait_ms": 500,
        "min_bytes": 1,
        "max_bytes": 8388608,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [{"topic_id": TOPIC_ID, "partitions": [_fetch_partition()]}],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    expected = (
        i32(2)  # ReplicaId (0-14)
        + i32(500)  # MaxWaitMs
        + i32(1)  # MinBytes
        + i32(8388608)  # MaxBytes
        + i8(0)  # IsolationLevel
        + i32(0)  # SessionId
        + i32(-1)  # SessionEpoch
        + compact_count(1)  # Topics
        + TOPIC_ID  # TopicId (13+), in place of Topic
        + compact_count(1)  # Partitions
        + i32(0)  # Partition
        + i32(7)  # CurrentLeaderEpoch
        + i64(1234)  # FetchOffset
        + i32(6)  # LastFetchedEpoch
        + i64(0)  # LogStartOffset
        + i32(1048576)  # PartitionMaxBytes
        + NO_TAGS  # partition
        + NO_TAGS  # topic
        + compact_count(0)  # ForgottenTopicsData
        + compact_string("")  # RackId
        + NO_TAGS  # request: ClusterId is null, so not written
    )
    assert encode_message(1, 13, body, True) == expected
    decoded = decode_message(1, 13, expected, True)
    assert decoded["topics"][0]["topic_id"] == TOPIC_ID
    assert decoded["cluster_id"] is None


def test_fetch_v18_request_carries_replica_state_and_high_watermark_as_tags() -> None:
    partition = dict(_fetch_partition(), replica_directory_id=DIR_A, high_watermark=1200)
    body = {
        "cluster_id": "c",
        "replica_state": {"replica_id": 2, "replica_epoch": 9},
        "max_wait_ms": 500,
        "min_bytes": 1,
        "max_bytes": 8388608,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [{"topic_id": TOPIC_ID, "partitions": [partition]}],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    partition_tags = (
        b"\x02"  # two tagged fields, in tag order
        + b"\x00"
        + bytes([16])
        + DIR_A  # tag 0: ReplicaDirectoryId
        + b"\x01"
        + bytes([8])
        + i64(1200)  # tag 1: HighWatermark
    )
    request_tags = (
        b"\x02"
        + b"\x00"
        + bytes([2])
        + compact_string("c")  # tag 0: ClusterId
        + b"\x01"
        + bytes([13])
        + i32(2)
        + i64(9)
        + NO_TAGS  # tag 1: ReplicaState
    )
    expected = (
        i32(500)  # no ReplicaId from v15
        + i32(1)
        + i32(8388608)
        + i8(0)
        + i32(0)
        + i32(-1)
        + compact_count(1)
        + TOPIC_ID
        + compact_count(1)
        + i32(0)
        + i32(7)
        + i64(1234)
        + i32(6)
        + i64(0)
        + i32(1048576)
        + partition_tags
        + NO_TAGS
        + compact_count(0)
        + compact_string("")
        + request_tags
    )
    assert encode_message(1, 18, body, True) == expected
    decoded = decode_message(1, 18, expected, True)
    assert decoded["replica_state"] == {"replica_id": 2, "replica_epoch": 9}
    assert decoded["topics"][0]["partitions"][0]["high_watermark"] == 1200


def test_fetch_high_watermark_left_at_its_default_is_not_written() -> None:
    """Kafka's default (Long.MAX_VALUE, "not supported") is what an absent tag means."""
    body = {"topics": [{"topic_id": TOPIC_ID, "partitions": [_fetch_partition()]}]}
    encoded = encode_message(1, 18, body, True)
    decoded = decode_message(1, 18, encoded, True)
    assert decoded["topics"][0]["partitions"][0]["high_watermark"] == 2**63 - 1
    assert encoded == encode_message(1, 17, body, True)


def test_fetch_is_advertised_up_to_kafka_4_4s_latest() -> None:
    """Clients fetch by topic id from v13 (the router resolves the ids)."""
    fetch = APIS[1]
    assert fetch.valid == (4, 18)
    assert fetch.advertised_range == (4, 18)


def test_kraft_api_keys_are_kafkas() -> None:
    expected = {
        45: "AlterPartitionReassignments",
        46: "ListPartitionReassignments",
        52: "Vote",
        53: "BeginQuorumEpoch",
        54: "EndQuorumEpoch",
        55: "DescribeQuorum",
        56: "AlterPartition",
        59: "FetchSnapshot",
        62: "BrokerRegistration",
        63: "BrokerHeartbeat",
        64: "UnregisterBroker",
        67: "AllocateProducerIds",
        80: "AddRaftVoter",
        81: "RemoveRaftVoter",
        82: "UpdateRaftVoter",
    }
    assert {key: APIS[key].name for key in expected} == expected
