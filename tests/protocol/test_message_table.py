"""The registry declares the version ranges Samsa promises to clients.

The table is the contract with real clients (kafka-protocol-facts.md §5): a
wrong minimum silently disables librdkafka features, a wrong flexible version
breaks every frame.  Spot checks below pin the defaults and nullability that
clients depend on.
"""

from __future__ import annotations

import pytest

from samsa.errors import DecodeError
from samsa.protocol.api import decode_message, encode_message
from samsa.protocol.messages import APIS
from samsa.protocol.schema import Field

# key: (name, valid, advertised, first flexible version)
TABLE = {
    0: ("Produce", (0, 13), (0, 13), 9),
    1: ("Fetch", (4, 18), (4, 18), 12),
    2: ("ListOffsets", (1, 11), (1, 11), 6),
    3: ("Metadata", (0, 13), (0, 13), 9),
    17: ("SaslHandshake", (0, 1), (0, 1), None),
    19: ("CreateTopics", (2, 7), (2, 7), 5),
    20: ("DeleteTopics", (1, 6), (1, 6), 4),
    21: ("DeleteRecords", (0, 2), (0, 2), 2),
    22: ("InitProducerId", (0, 5), (0, 5), 2),
    23: ("OffsetForLeaderEpoch", (2, 4), (2, 4), 4),
    29: ("DescribeAcls", (1, 3), (1, 3), 2),
    30: ("CreateAcls", (1, 3), (1, 3), 2),
    31: ("DeleteAcls", (1, 3), (1, 3), 2),
    32: ("DescribeConfigs", (1, 4), (1, 4), 4),
    33: ("AlterConfigs", (0, 2), (0, 2), 2),
    35: ("DescribeLogDirs", (1, 5), (1, 5), 2),
    36: ("SaslAuthenticate", (0, 2), (0, 2), 2),
    37: ("CreatePartitions", (0, 3), (0, 3), 2),
    43: ("ElectLeaders", (0, 2), (0, 2), 2),
    44: ("IncrementalAlterConfigs", (0, 1), (0, 1), 1),
    60: ("DescribeCluster", (0, 2), (0, 2), 0),
    61: ("DescribeProducers", (0, 0), (0, 0), 0),
}


@pytest.mark.parametrize("key", sorted(TABLE))
def test_registry_matches_the_table(key: int) -> None:
    name, valid, advertised, flexible = TABLE[key]
    api = APIS[key]
    assert (api.name, api.valid, api.advertised_range, api.flexible) == (
        name,
        valid,
        advertised,
        flexible,
    )


def _field(fields: tuple[Field, ...], path: str) -> Field:
    head, _, rest = path.partition(".")
    (found,) = [f for f in fields if f.name == head]
    return _field(found.fields, rest) if rest else found


@pytest.mark.parametrize(
    ("key", "side", "path", "default"),
    [
        (1, "request", "isolation_level", 0),
        (1, "request", "replica_id", -1),
        (1, "request", "session_epoch", -1),
        (1, "request", "max_bytes", 0x7FFFFFFF),
        (1, "response", "responses.partitions.preferred_read_replica", -1),
        (2, "response", "topics.partitions.leader_epoch", -1),
        (3, "request", "allow_auto_topic_creation", True),
        (3, "response", "controller_id", -1),
        (3, "response", "topics.partitions.leader_epoch", -1),
        (3, "response", "topics.topic_authorized_operations", -(2**31)),
        (3, "response", "cluster_authorized_operations", -(2**31)),
        (19, "request", "timeout_ms", 60000),
        (22, "request", "producer_id", -1),
        (22, "response", "producer_id", -1),
        (23, "request", "replica_id", -2),
    ],
)
def test_defaults_follow_kafka(key: int, side: str, path: str, default: object) -> None:
    assert _field(getattr(APIS[key], side), path).default_value() == default


@pytest.mark.parametrize("version", range(1, 13))
def test_metadata_topics_null_means_all_topics_from_v1(version: int) -> None:
    encoded = encode_message(3, version, {"topics": None}, True)
    assert decode_message(3, version, encoded, True)["topics"] is None


def test_metadata_v0_has_no_null_topics() -> None:
    """v0 asks for all topics with an empty array; a null one is malformed."""
    with pytest.raises(DecodeError):
        decode_message(3, 0, b"\xff\xff\xff\xff", True)


@pytest.mark.parametrize("version", range(0, 10))
def test_produce_records_and_transactional_id_are_nullable(version: int) -> None:
    body = {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 30000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": None}]}],
    }
    decoded = decode_message(0, version, encode_message(0, version, body, True), True)
    assert decoded["transactional_id"] is None
    assert decoded["topic_data"][0]["partition_data"][0]["records"] is None
