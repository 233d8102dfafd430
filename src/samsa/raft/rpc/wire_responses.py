"""Raft responses to and from Kafka's wire bodies (see ``wire`` for requests).

Every response carries the responder's leader hint (``current_leader`` or
``leader_id``/``leader_epoch``) and, from the flexible versions on, the
leader's endpoint on the listener the request came in on (``node_endpoints``).
"""

from __future__ import annotations

from typing import Any

from samsa.errors import ErrorCode
from samsa.raft.messages import (
    AddRaftVoterResponse,
    BeginQuorumEpochResponse,
    EndQuorumEpochResponse,
    FetchResponse,
    FetchSnapshotResponse,
    QuorumInfo,
    RaftRequest,
    RaftResponse,
    RemoveRaftVoterResponse,
    ReplicaDescription,
    VoteResponse,
)
from samsa.raft.persistence.entry_codec import decode_entries, encode_entries
from samsa.raft.records import OffsetAndEpoch
from samsa.raft.rpc.wire_common import (
    ADD_RAFT_VOTER,
    BEGIN_QUORUM_EPOCH,
    DESCRIBE_QUORUM,
    END_QUORUM_EPOCH,
    FETCH,
    FETCH_SNAPSHOT,
    METADATA_PARTITION,
    METADATA_TOPIC,
    METADATA_TOPIC_ID,
    REMOVE_RAFT_VOTER,
    VOTE,
    WireError,
    endpoints_from,
    leader_field,
    leader_hint,
    node_endpoints,
    one_partition,
    uuid_bytes,
    wall_ms,
)

# -- responses: machine -> wire -----------------------------------------------------


def _partition_header(error_code: int, leader_id: int | None, epoch: int) -> dict[str, Any]:
    return {
        "partition_index": METADATA_PARTITION,
        "error_code": error_code,
        "leader_id": leader_field(leader_id),
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
            "node_endpoints": node_endpoints(message.leader_id, message.leader_endpoints, listener),
        }
    if isinstance(message, (BeginQuorumEpochResponse, EndQuorumEpochResponse)):
        partition = _partition_header(message.error_code, message.leader_id, message.leader_epoch)
        return {
            "error_code": 0,
            "topics": [{"topic_name": METADATA_TOPIC, "partitions": [partition]}],
            "node_endpoints": node_endpoints(message.leader_id, message.leader_endpoints, listener),
        }
    if isinstance(message, FetchResponse):
        partition = {
            "partition_index": METADATA_PARTITION,
            "error_code": message.error_code,
            "high_watermark": message.high_watermark,
            "last_stable_offset": message.high_watermark,
            "log_start_offset": message.log_start_offset,
            "current_leader": {
                "leader_id": leader_field(message.leader_id),
                "leader_epoch": message.leader_epoch,
            },
            "aborted_transactions": None,
            "preferred_read_replica": -1,
            "records": _records(message),
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
            "node_endpoints": node_endpoints(message.leader_id, message.leader_endpoints, listener),
        }
    if isinstance(message, FetchSnapshotResponse):
        snapshot = message.snapshot_id or OffsetAndEpoch(-1, -1)
        partition = {
            "index": METADATA_PARTITION,
            "error_code": message.error_code,
            "snapshot_id": {"end_offset": snapshot.offset, "epoch": snapshot.epoch},
            "current_leader": {
                "leader_id": leader_field(message.leader_id),
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
            "node_endpoints": node_endpoints(message.leader_id, message.leader_endpoints, listener),
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
            "replica_directory_id": uuid_bytes(r.replica_directory_id),
            "log_end_offset": r.log_end_offset,
            "last_fetch_timestamp": r.last_fetch_timestamp,
            "last_caught_up_timestamp": r.last_caught_up_timestamp,
        }

    partition = {
        "partition_index": METADATA_PARTITION,
        "error_code": info.error_code,
        "error_message": None,
        "leader_id": leader_field(info.leader_id),
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
        p = one_partition(body)
        leader = leader_hint(p["leader_id"])
        return VoteResponse(
            p["error_code"],
            leader,
            p["leader_epoch"],
            bool(p["vote_granted"]),
            endpoints_from(body, leader, listener),
        )
    if api_key in (BEGIN_QUORUM_EPOCH, END_QUORUM_EPOCH):
        p = one_partition(body)
        leader = leader_hint(p["leader_id"])
        cls = BeginQuorumEpochResponse if api_key == BEGIN_QUORUM_EPOCH else EndQuorumEpochResponse
        return cls(
            p["error_code"], leader, p["leader_epoch"], endpoints_from(body, leader, listener)
        )
    if api_key == FETCH:
        topics = body.get("responses") or []
        if len(topics) != 1 or len(topics[0]["partitions"]) != 1:
            raise WireError(ErrorCode.INVALID_REQUEST, "a Raft fetch answer has one partition")
        p = topics[0]["partitions"][0]
        current = p.get("current_leader") or {}
        leader = leader_hint(current.get("leader_id", -1))
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
            leader_endpoints=endpoints_from(body, leader, listener),
        )
    if api_key == FETCH_SNAPSHOT:
        topics = body.get("topics") or []
        if len(topics) != 1 or len(topics[0]["partitions"]) != 1:
            raise WireError(ErrorCode.INVALID_REQUEST, "a snapshot answer has one partition")
        p = topics[0]["partitions"][0]
        current = p.get("current_leader") or {}
        leader = leader_hint(current.get("leader_id", -1))
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
            leader_endpoints=endpoints_from(body, leader, listener),
        )
    raise WireError(ErrorCode.INVALID_REQUEST, f"api key {api_key} is not a Raft response")


def _records(message: FetchResponse) -> bytes:
    """The entries as the leader stored them if it read them whole, else encoded."""
    if not message.entries:
        return b""
    if message.raw_records is not None:
        return message.raw_records
    return bytes(encode_entries(message.entries, timestamp_ms=wall_ms()))
