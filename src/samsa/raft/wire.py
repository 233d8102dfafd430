"""Raft messages to and from Kafka's wire bodies.

The machine speaks small dataclasses (``raft/messages.py``); on the wire they
are Kafka's KRaft RPCs: one topic ``__cluster_metadata`` (topic id
``METADATA_TOPIC_ID`` in Fetch v13+) with one partition, a cluster id that a
receiver checks (INCONSISTENT_CLUSTER_ID), leader hints in
``current_leader``/``leader_id`` fields, endpoints in ``node_endpoints``, and
entries as RecordBatches (``entry_codec``).  Everything here is a pure function
of its inputs, so both directions are tested without sockets.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode
from samsa.raft.entry_codec import decode_entries, encode_entries
from samsa.raft.messages import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    QuorumInfo,
    RaftRequest,
    RaftResponse,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    ReplicaDescription,
    VoteRequest,
    VoteResponse,
)
from samsa.raft.records import Endpoint, OffsetAndEpoch

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
    FETCH: 17,
    FETCH_SNAPSHOT: 1,
    ADD_RAFT_VOTER: 1,
    REMOVE_RAFT_VOTER: 0,
}


class WireError(ValueError):
    """A request that is not about the metadata partition, or a malformed one."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


def _uuid_bytes(value: uuid.UUID | None) -> bytes:
    return ZERO_UUID if value is None else value.bytes


def _uuid(value: bytes | None) -> uuid.UUID | None:
    return None if not value or value == ZERO_UUID else uuid.UUID(bytes=bytes(value))


def _leader(leader_id: int | None) -> int:
    return -1 if leader_id is None else leader_id


def _hint(leader_id: int) -> int | None:
    return None if leader_id < 0 else leader_id


def _node_endpoints(
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


def _endpoints_from(
    body: dict[str, Any], leader_id: int | None, listener: str
) -> tuple[Endpoint, ...]:
    if leader_id is None:
        return ()
    return tuple(
        Endpoint(listener, n["host"], int(n["port"]))
        for n in body.get("node_endpoints") or ()
        if n["node_id"] == leader_id
    )


def _listeners(endpoints: tuple[Endpoint, ...]) -> list[dict[str, Any]]:
    return [{"name": e.listener, "host": e.host, "port": e.port} for e in endpoints]


def _from_listeners(items: list[dict[str, Any]] | None) -> tuple[Endpoint, ...]:
    return tuple(Endpoint(i["name"], i["host"], int(i["port"])) for i in items or ())


def _one_partition(body: dict[str, Any], topic_key: str = "topic_name") -> dict[str, Any]:
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


# -- requests: machine -> wire ----------------------------------------------------


def encode_request(message: RaftRequest, cluster_id: str) -> tuple[int, int, dict[str, Any]]:
    if isinstance(message, VoteRequest):
        partition = {
            "partition_index": METADATA_PARTITION,
            "replica_epoch": message.replica_epoch,
            "replica_id": message.replica_id,
            "replica_directory_id": _uuid_bytes(message.replica_directory_id),
            "voter_directory_id": _uuid_bytes(message.voter_directory_id),
            "last_offset_epoch": message.last_offset_epoch,
            "last_offset": message.last_offset,
            "pre_vote": message.pre_vote,
        }
        body = {
            "cluster_id": cluster_id,
            "voter_id": message.voter_id,
            "topics": [{"topic_name": METADATA_TOPIC, "partitions": [partition]}],
        }
        return VOTE, SEND_VERSIONS[VOTE], body
    if isinstance(message, BeginQuorumEpochRequest):
        partition = {
            "partition_index": METADATA_PARTITION,
            "voter_directory_id": _uuid_bytes(message.voter_directory_id),
            "leader_id": message.leader_id,
            "leader_epoch": message.leader_epoch,
        }
        body = {
            "cluster_id": cluster_id,
            "voter_id": message.voter_id,
            "topics": [{"topic_name": METADATA_TOPIC, "partitions": [partition]}],
            "leader_endpoints": _listeners(message.leader_endpoints),
        }
        return BEGIN_QUORUM_EPOCH, SEND_VERSIONS[BEGIN_QUORUM_EPOCH], body
    if isinstance(message, EndQuorumEpochRequest):
        partition = {
            "partition_index": METADATA_PARTITION,
            "leader_id": message.leader_id,
            "leader_epoch": message.leader_epoch,
            "preferred_successors": list(message.preferred_successors),
            "preferred_candidates": [
                {"candidate_id": c, "candidate_directory_id": ZERO_UUID}
                for c in message.preferred_successors
            ],
        }
        body = {
            "cluster_id": cluster_id,
            "topics": [{"topic_name": METADATA_TOPIC, "partitions": [partition]}],
            "leader_endpoints": _listeners(message.leader_endpoints),
        }
        return END_QUORUM_EPOCH, SEND_VERSIONS[END_QUORUM_EPOCH], body
    if isinstance(message, FetchRequest):
        partition = {
            "partition": METADATA_PARTITION,
            "current_leader_epoch": message.current_leader_epoch,
            "fetch_offset": message.fetch_offset,
            "last_fetched_epoch": message.last_fetched_epoch,
            "log_start_offset": -1,
            "partition_max_bytes": message.max_bytes,
            "replica_directory_id": _uuid_bytes(message.replica_directory_id),
        }
        body = {
            "cluster_id": cluster_id,
            "replica_state": {
                "replica_id": message.replica_id,
                "replica_epoch": message.replica_epoch,
            },
            "max_wait_ms": message.max_wait_ms,
            "min_bytes": 0,
            "max_bytes": message.max_bytes,
            "isolation_level": 0,
            "session_id": 0,
            "session_epoch": -1,
            "topics": [{"topic_id": METADATA_TOPIC_ID, "partitions": [partition]}],
            "forgotten_topics_data": [],
            "rack_id": "",
        }
        return FETCH, SEND_VERSIONS[FETCH], body
    if isinstance(message, FetchSnapshotRequest):
        partition = {
            "partition": METADATA_PARTITION,
            "current_leader_epoch": message.current_leader_epoch,
            "snapshot_id": {
                "end_offset": message.snapshot_id.offset,
                "epoch": message.snapshot_id.epoch,
            },
            "position": message.position,
            "replica_directory_id": _uuid_bytes(message.replica_directory_id),
        }
        body = {
            "cluster_id": cluster_id,
            "replica_id": message.replica_id,
            "max_bytes": message.max_bytes,
            "topics": [{"name": METADATA_TOPIC, "partitions": [partition]}],
        }
        return FETCH_SNAPSHOT, SEND_VERSIONS[FETCH_SNAPSHOT], body
    if isinstance(message, AddRaftVoterRequest):
        body = {
            "cluster_id": cluster_id,
            "timeout_ms": message.timeout_ms,
            "voter_id": message.voter_id,
            "voter_directory_id": _uuid_bytes(message.voter_directory_id),
            "listeners": _listeners(message.listeners),
            "ack_when_committed": True,
        }
        return ADD_RAFT_VOTER, SEND_VERSIONS[ADD_RAFT_VOTER], body
    if isinstance(message, RemoveRaftVoterRequest):
        body = {
            "cluster_id": cluster_id,
            "voter_id": message.voter_id,
            "voter_directory_id": _uuid_bytes(message.voter_directory_id),
        }
        return REMOVE_RAFT_VOTER, SEND_VERSIONS[REMOVE_RAFT_VOTER], body
    raise TypeError(f"not a Raft request: {type(message).__name__}")


# -- requests: wire -> machine ------------------------------------------------------


def check_cluster_id(body: dict[str, Any], cluster_id: str) -> None:
    sent = body.get("cluster_id")
    if sent is not None and sent != cluster_id:
        raise WireError(
            ErrorCode.INCONSISTENT_CLUSTER_ID,
            f"request for cluster {sent!r} reached cluster {cluster_id!r}",
        )


def is_metadata_fetch(version: int, body: dict[str, Any]) -> bool:
    """Whether a Fetch is for the metadata partition (and so for Raft)."""
    for topic in body.get("topics") or ():
        if version >= 13:
            if topic.get("topic_id") == METADATA_TOPIC_ID:
                return True
        elif topic.get("topic") == METADATA_TOPIC:
            return True
    return False


def decode_request(api_key: int, version: int, body: dict[str, Any]) -> RaftRequest:
    """The machine's view of an inbound request; WireError when it is not one."""
    if api_key == VOTE:
        p = _one_partition(body)
        return VoteRequest(
            replica_id=p["replica_id"],
            replica_epoch=p["replica_epoch"],
            last_offset_epoch=p["last_offset_epoch"],
            last_offset=p["last_offset"],
            pre_vote=bool(p.get("pre_vote", False)),
            replica_directory_id=_uuid(p.get("replica_directory_id")),
            voter_id=body.get("voter_id", -1),
            voter_directory_id=_uuid(p.get("voter_directory_id")),
        )
    if api_key == BEGIN_QUORUM_EPOCH:
        p = _one_partition(body)
        return BeginQuorumEpochRequest(
            leader_id=p["leader_id"],
            leader_epoch=p["leader_epoch"],
            voter_id=body.get("voter_id", -1),
            voter_directory_id=_uuid(p.get("voter_directory_id")),
            leader_endpoints=_from_listeners(body.get("leader_endpoints")),
        )
    if api_key == END_QUORUM_EPOCH:
        p = _one_partition(body)
        successors = tuple(p.get("preferred_successors") or ()) or tuple(
            c["candidate_id"] for c in p.get("preferred_candidates") or ()
        )
        return EndQuorumEpochRequest(
            leader_id=p["leader_id"],
            leader_epoch=p["leader_epoch"],
            preferred_successors=successors,
            leader_endpoints=_from_listeners(body.get("leader_endpoints")),
        )
    if api_key == FETCH:
        topics = body.get("topics") or []
        if len(topics) != 1 or len(topics[0]["partitions"]) != 1:
            raise WireError(ErrorCode.INVALID_REQUEST, "a Raft fetch names exactly one partition")
        p = topics[0]["partitions"][0]
        if p["partition"] != METADATA_PARTITION:
            raise WireError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "the metadata topic has one partition"
            )
        state = body.get("replica_state") or {}
        replica_id = state.get("replica_id", -1) if version >= 15 else body.get("replica_id", -1)
        return FetchRequest(
            replica_id=replica_id,
            fetch_offset=p["fetch_offset"],
            last_fetched_epoch=p.get("last_fetched_epoch", -1),
            current_leader_epoch=p.get("current_leader_epoch", -1),
            max_wait_ms=body["max_wait_ms"],
            max_bytes=min(body.get("max_bytes", 0x7FFFFFFF), p["partition_max_bytes"]),
            replica_directory_id=_uuid(p.get("replica_directory_id")),
            replica_epoch=int(state.get("replica_epoch", -1)),
        )
    if api_key == FETCH_SNAPSHOT:
        p = _one_partition(body, "name")
        return FetchSnapshotRequest(
            replica_id=body["replica_id"],
            current_leader_epoch=p["current_leader_epoch"],
            snapshot_id=OffsetAndEpoch(p["snapshot_id"]["end_offset"], p["snapshot_id"]["epoch"]),
            position=p["position"],
            max_bytes=body["max_bytes"],
            replica_directory_id=_uuid(p.get("replica_directory_id")),
        )
    if api_key == ADD_RAFT_VOTER:
        return AddRaftVoterRequest(
            voter_id=body["voter_id"],
            voter_directory_id=_uuid(body.get("voter_directory_id")),
            listeners=_from_listeners(body.get("listeners")),
            timeout_ms=body.get("timeout_ms", -1),
        )
    if api_key == REMOVE_RAFT_VOTER:
        return RemoveRaftVoterRequest(
            voter_id=body["voter_id"], voter_directory_id=_uuid(body.get("voter_directory_id"))
        )
    raise WireError(ErrorCode.INVALID_REQUEST, f"api key {api_key} is not a Raft request")


# -- responses: machine -> wire -----------------------------------------------------


def _partition_header(error_code: int, leader_id: int | None, epoch: int) -> dict[str, Any]:
    return {
        "partition_index": METADATA_PARTITION,
        "error_code": error_code,
        "leader_id": _leader(leader_id),
        "leader_epoch": epoch,
    }


def encode_response(
    api_key: int, version: int, message: RaftResponse, listener: str
) -> dict[str, Any]:
    partition: dict[str, Any]
    if isinstance(message, VoteResponse):
        partition = _partition_header(message.error_code, message.leader_id, message.leader_epoch)
        partition["vote_granted"] = message.vote_granted
        return {
            "error_code": 0,
            "topics": [{"topic_name": METADATA_TOPIC, "partitions": [partition]}],
            "node_endpoints": _node_endpoints(
                message.leader_id, message.leader_endpoints, listener
            ),
        }
    if isinstance(message, (BeginQuorumEpochResponse, EndQuorumEpochResponse)):
        partition = _partition_header(message.error_code, message.leader_id, message.leader_epoch)
        return {
            "error_code": 0,
            "topics": [{"topic_name": METADATA_TOPIC, "partitions": [partition]}],
            "node_endpoints": _node_endpoints(
                message.leader_id, message.leader_endpoints, listener
            ),
        }
    if isinstance(message, FetchResponse):
        partition = {
            "partition_index": METADATA_PARTITION,
            "error_code": message.error_code,
            "high_watermark": message.high_watermark,
            "last_stable_offset": message.high_watermark,
            "log_start_offset": message.log_start_offset,
            "current_leader": {
                "leader_id": _leader(message.leader_id),
                "leader_epoch": message.leader_epoch,
            },
            "aborted_transactions": None,
            "preferred_read_replica": -1,
            "records": bytes(encode_entries(message.entries, timestamp_ms=_wall_ms()))
            if message.entries
            else b"",
        }
        if message.diverging_epoch is not None:
            partition["diverging_epoch"] = {
                "epoch": message.diverging_epoch.epoch,
                "end_offset": message.diverging_epoch.offset,
            }
        if message.snapshot_id is not None:
            partition["snapshot_id"] = {
                "end_offset": message.snapshot_id.offset,
                "epoch": message.snapshot_id.epoch,
            }
        topic: dict[str, Any] = {"partitions": [partition]}
        if version >= 13:
            topic["topic_id"] = METADATA_TOPIC_ID
        else:
            topic["topic"] = METADATA_TOPIC
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "session_id": 0,
            "responses": [topic],
            "node_endpoints": _node_endpoints(
                message.leader_id, message.leader_endpoints, listener
            ),
        }
    if isinstance(message, FetchSnapshotResponse):
        snapshot = message.snapshot_id or OffsetAndEpoch(-1, -1)
        partition = {
            "index": METADATA_PARTITION,
            "error_code": message.error_code,
            "snapshot_id": {"end_offset": snapshot.offset, "epoch": snapshot.epoch},
            "current_leader": {
                "leader_id": _leader(message.leader_id),
                "leader_epoch": message.leader_epoch,
            },
            "size": message.size,
            "position": message.position,
            "unaligned_records": message.chunk,
        }
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "topics": [{"name": METADATA_TOPIC, "partitions": [partition]}],
            "node_endpoints": _node_endpoints(
                message.leader_id, message.leader_endpoints, listener
            ),
        }
    if isinstance(message, (AddRaftVoterResponse, RemoveRaftVoterResponse)):
        return {
            "throttle_time_ms": 0,
            "error_code": message.error_code,
            "error_message": message.error_message,
        }
    raise TypeError(f"not a Raft response: {type(message).__name__}")


def error_response(api_key: int, version: int, code: int, message: str) -> dict[str, Any]:
    """A top-level refusal of a Raft request that never reached the machine."""
    if api_key in (ADD_RAFT_VOTER, REMOVE_RAFT_VOTER):
        return {"throttle_time_ms": 0, "error_code": code, "error_message": message}
    if api_key == FETCH:
        return {"throttle_time_ms": 0, "error_code": code, "session_id": 0, "responses": []}
    if api_key == FETCH_SNAPSHOT:
        return {"throttle_time_ms": 0, "error_code": code, "topics": []}
    if api_key == DESCRIBE_QUORUM:
        return {"error_code": code, "error_message": message, "topics": [], "nodes": []}
    return {"error_code": code, "topics": []}


def describe_quorum_response(info: QuorumInfo, nodes: list[dict[str, Any]]) -> dict[str, Any]:
    def replica(r: ReplicaDescription) -> dict[str, Any]:
        return {
            "replica_id": r.replica_id,
            "replica_directory_id": _uuid_bytes(r.replica_directory_id),
            "log_end_offset": r.log_end_offset,
            "last_fetch_timestamp": r.last_fetch_timestamp,
            "last_caught_up_timestamp": r.last_caught_up_timestamp,
        }

    partition = {
        "partition_index": METADATA_PARTITION,
        "error_code": info.error_code,
        "error_message": None,
        "leader_id": _leader(info.leader_id),
        "leader_epoch": info.leader_epoch,
        "high_watermark": info.high_watermark,
        "current_voters": [replica(v) for v in info.current_voters],
        "observers": [replica(o) for o in info.observers],
    }
    return {
        "error_code": 0,
        "error_message": None,
        "topics": [{"topic_name": METADATA_TOPIC, "partitions": [partition]}],
        "nodes": nodes,
    }


# -- responses: wire -> machine ------------------------------------------------------


def _top_error(body: dict[str, Any]) -> None:
    code = body.get("error_code", 0)
    if code:
        raise WireError(code, f"request refused with error {code}")


def decode_response(
    api_key: int, version: int, body: dict[str, Any], listener: str, request: RaftRequest
) -> RaftResponse:
    if api_key == ADD_RAFT_VOTER:
        return AddRaftVoterResponse(body.get("error_code", 0), body.get("error_message"))
    if api_key == REMOVE_RAFT_VOTER:
        return RemoveRaftVoterResponse(body.get("error_code", 0), body.get("error_message"))
    _top_error(body)
    if api_key == VOTE:
        p = _one_partition(body)
        leader = _hint(p["leader_id"])
        return VoteResponse(
            p["error_code"],
            leader,
            p["leader_epoch"],
            bool(p["vote_granted"]),
            _endpoints_from(body, leader, listener),
        )
    if api_key in (BEGIN_QUORUM_EPOCH, END_QUORUM_EPOCH):
        p = _one_partition(body)
        leader = _hint(p["leader_id"])
        cls = BeginQuorumEpochResponse if api_key == BEGIN_QUORUM_EPOCH else EndQuorumEpochResponse
        return cls(
            p["error_code"], leader, p["leader_epoch"], _endpoints_from(body, leader, listener)
        )
    if api_key == FETCH:
        topics = body.get("responses") or []
        if len(topics) != 1 or len(topics[0]["partitions"]) != 1:
            raise WireError(ErrorCode.INVALID_REQUEST, "a Raft fetch answer has one partition")
        p = topics[0]["partitions"][0]
        current = p.get("current_leader") or {}
        leader = _hint(current.get("leader_id", -1))
        diverging = p.get("diverging_epoch")
        snapshot = p.get("snapshot_id")
        records = p.get("records")
        entries: tuple[Any, ...] = ()
        if records is not None and len(records) > 0:
            raw = records if isinstance(records, (bytes, bytearray, memoryview)) else bytes(records)
            entries = tuple(decode_entries(bytes(raw))[0])
        return FetchResponse(
            error_code=p["error_code"],
            leader_id=leader,
            leader_epoch=current.get("leader_epoch", -1),
            high_watermark=p["high_watermark"],
            log_start_offset=p.get("log_start_offset", 0),
            entries=entries,
            diverging_epoch=None
            if not diverging or diverging.get("epoch", -1) < 0
            else OffsetAndEpoch(diverging["end_offset"], diverging["epoch"]),
            snapshot_id=None
            if not snapshot or snapshot.get("end_offset", -1) < 0
            else OffsetAndEpoch(snapshot["end_offset"], snapshot["epoch"]),
            leader_endpoints=_endpoints_from(body, leader, listener),
        )
    if api_key == FETCH_SNAPSHOT:
        topics = body.get("topics") or []
        if len(topics) != 1 or len(topics[0]["partitions"]) != 1:
            raise WireError(ErrorCode.INVALID_REQUEST, "a snapshot answer has one partition")
        p = topics[0]["partitions"][0]
        current = p.get("current_leader") or {}
        leader = _hint(current.get("leader_id", -1))
        sid = p.get("snapshot_id") or {}
        chunk = p.get("unaligned_records") or b""
        return FetchSnapshotResponse(
            error_code=p["error_code"],
            leader_id=leader,
            leader_epoch=current.get("leader_epoch", -1),
            snapshot_id=None
            if sid.get("end_offset", -1) < 0
            else OffsetAndEpoch(sid["end_offset"], sid["epoch"]),
            size=p.get("size", -1),
            position=p.get("position", -1),
            chunk=bytes(chunk),
            leader_endpoints=_endpoints_from(body, leader, listener),
        )
    raise WireError(ErrorCode.INVALID_REQUEST, f"api key {api_key} is not a Raft response")
