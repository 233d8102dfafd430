"""What both directions of the Raft wire mapping share: names, versions, helpers.

The metadata partition's identity on the wire (``__cluster_metadata``, Kafka's
``METADATA_TOPIC_ID``), the versions Samsa nodes send each other, and the small
conversions (ids, leader hints, endpoints) both requests and responses need.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode
from samsa.raft.messages import (
    FetchRequest,
    RaftRequest,
)
from samsa.raft.records import Endpoint

if TYPE_CHECKING:
    from samsa.raft.machine import RaftMachine


METADATA_TOPIC = "__cluster_metadata"
METADATA_TOPIC_ID = b"\x00" * 15 + b"\x01"
"""Kafka's ``Uuid.METADATA_TOPIC_ID`` (most significant bits 0, least 1)."""
METADATA_PARTITION = 0
ZERO_UUID = b"\x00" * 16

FETCH, VOTE, BEGIN_QUORUM_EPOCH, END_QUORUM_EPOCH = 1, 52, 53, 54
DESCRIBE_QUORUM, FETCH_SNAPSHOT, ADD_RAFT_VOTER, REMOVE_RAFT_VOTER = 55, 59, 80, 81
RAFT_API_KEYS = frozenset(
    {VOTE, BEGIN_QUORUM_EPOCH, END_QUORUM_EPOCH, DESCRIBE_QUORUM, FETCH_SNAPSHOT}
    | {ADD_RAFT_VOTER, REMOVE_RAFT_VOTER}
)

# The versions Samsa nodes send to each other (each node serves every valid one).
SEND_VERSIONS = {
    VOTE: 2,
    BEGIN_QUORUM_EPOCH: 1,
    END_QUORUM_EPOCH: 1,
    FETCH: 18,  # v18 carries the follower's high watermark (KIP-1166)
    FETCH_SNAPSHOT: 1,
    ADD_RAFT_VOTER: 1,
    REMOVE_RAFT_VOTER: 0,
}


class WireError(ValueError):
    """A request that is not about the metadata partition, or a malformed one."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


def uuid_bytes(value: uuid.UUID | None) -> bytes:
    return ZERO_UUID if value is None else value.bytes


def to_uuid(value: bytes | None) -> uuid.UUID | None:
    return None if not value or value == ZERO_UUID else uuid.UUID(bytes=bytes(value))


def leader_field(leader_id: int | None) -> int:
    return -1 if leader_id is None else leader_id


def leader_hint(leader_id: int) -> int | None:
    return None if leader_id < 0 else leader_id


def node_endpoints(
    leader_id: int | None, endpoints: tuple[Endpoint, ...], listener: str
) -> list[dict[str, Any]]:
    if leader_id is None:
        return []
    for endpoint in endpoints:
        if endpoint.listener == listener:
            return [
                {"node_id": leader_id, "host": endpoint.host, "port": endpoint.port, "rack": None}
            ]
    return []


def endpoints_from(
    body: dict[str, Any], leader_id: int | None, listener: str
) -> tuple[Endpoint, ...]:
    if leader_id is None:
        return ()
    return tuple(
        Endpoint(listener, n["host"], int(n["port"]))
        for n in body.get("node_endpoints") or ()
        if n["node_id"] == leader_id
    )


def listeners_field(endpoints: tuple[Endpoint, ...]) -> list[dict[str, Any]]:
    return [{"name": e.listener, "host": e.host, "port": e.port} for e in endpoints]


def from_listeners(items: list[dict[str, Any]] | None) -> tuple[Endpoint, ...]:
    return tuple(Endpoint(i["name"], i["host"], int(i["port"])) for i in items or ())


def one_partition(body: dict[str, Any], topic_key: str = "topic_name") -> dict[str, Any]:
    topics = body.get("topics") or []
    if len(topics) != 1 or len(topics[0].get("partitions") or []) != 1:
        raise WireError(ErrorCode.INVALID_REQUEST, "a Raft request names exactly one partition")
    topic = topics[0]
    if topic_key in topic and topic[topic_key] != METADATA_TOPIC:
        raise WireError(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"not the metadata topic: {topic[topic_key]!r}"
        )
    partition: dict[str, Any] = topic["partitions"][0]
    return partition


def request_timeout_ms(message: RaftRequest, machine: RaftMachine) -> int:
    """A parked Fetch may legitimately take its max wait; give it that on top."""
    base = machine._config.request_timeout_ms
    if isinstance(message, FetchRequest):
        return base + message.max_wait_ms
    return base
