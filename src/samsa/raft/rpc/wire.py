"""Raft messages to and from Kafka's wire bodies.

The machine speaks small dataclasses (``raft/messages.py``); on the wire they
are Kafka's KRaft RPCs: one topic ``__cluster_metadata`` (topic id
``METADATA_TOPIC_ID`` in Fetch v13+) with one partition, a cluster id that a
receiver checks (INCONSISTENT_CLUSTER_ID), leader hints in
``current_leader``/``leader_id`` fields, endpoints in ``node_endpoints``, and
entries as RecordBatches (``entry_codec``).  Everything here is a pure function
of its inputs, so both directions are tested without sockets.  Requests are
mapped here, responses in ``wire_responses`` (re-exported), and what both share
in ``wire_common``.
"""

from __future__ import annotations

from typing import Any

from samsa.errors import ErrorCode
from samsa.raft.messages import (
    HIGH_WATERMARK_NOT_SENT,
    AddRaftVoterRequest,
    BeginQuorumEpochRequest,
    EndQuorumEpochRequest,
    FetchRequest,
    FetchSnapshotRequest,
    RaftRequest,
    RemoveRaftVoterRequest,
    VoteRequest,
)
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
    RAFT_API_KEYS,
    REMOVE_RAFT_VOTER,
    SEND_VERSIONS,
    VOTE,
    ZERO_UUID,
    WireError,
    from_listeners,
    listeners_field,
    one_partition,
    request_timeout_ms,
    to_uuid,
    uuid_bytes,
)
from samsa.raft.rpc.wire_responses import (
    decode_response,
    describe_quorum_response,
    encode_response,
    error_response,
)

__all__ = [
    "ADD_RAFT_VOTER",
    "BEGIN_QUORUM_EPOCH",
    "DESCRIBE_QUORUM",
    "END_QUORUM_EPOCH",
    "FETCH",
    "FETCH_SNAPSHOT",
    "METADATA_TOPIC",
    "METADATA_TOPIC_ID",
    "RAFT_API_KEYS",
    "REMOVE_RAFT_VOTER",
    "VOTE",
    "WireError",
    "check_cluster_id",
    "decode_request",
    "decode_response",
    "describe_quorum_response",
    "encode_request",
    "encode_response",
    "error_response",
    "is_metadata_fetch",
    "request_timeout_ms",
]

# -- requests: machine -> wire ----------------------------------------------------


def encode_request(message: RaftRequest, cluster_id: str) -> tuple[int, int, dict[str, Any]]:
    if isinstance(message, VoteRequest):
        partition = {
            "partition_index": METADATA_PARTITION,
            "replica_epoch": message.replica_epoch,
            "replica_id": message.replica_id,
            "replica_directory_id": uuid_bytes(message.replica_directory_id),
            "voter_directory_id": uuid_bytes(message.voter_directory_id),
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
            "voter_directory_id": uuid_bytes(message.voter_directory_id),
            "leader_id": message.leader_id,
            "leader_epoch": message.leader_epoch,
        }
        body = {
            "cluster_id": cluster_id,
            "voter_id": message.voter_id,
            "topics": [{"topic_name": METADATA_TOPIC, "partitions": [partition]}],
            "leader_endpoints": listeners_field(message.leader_endpoints),
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
            "leader_endpoints": listeners_field(message.leader_endpoints),
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
            "replica_directory_id": uuid_bytes(message.replica_directory_id),
            "high_watermark": message.high_watermark,
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
            "replica_directory_id": uuid_bytes(message.replica_directory_id),
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
            "voter_directory_id": uuid_bytes(message.voter_directory_id),
            "listeners": listeners_field(message.listeners),
            "ack_when_committed": True,
        }
        return ADD_RAFT_VOTER, SEND_VERSIONS[ADD_RAFT_VOTER], body
    if isinstance(message, RemoveRaftVoterRequest):
        body = {
            "cluster_id": cluster_id,
            "voter_id": message.voter_id,
            "voter_directory_id": uuid_bytes(message.voter_directory_id),
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
        p = one_partition(body)
        return VoteRequest(
            replica_id=p["replica_id"],
            replica_epoch=p["replica_epoch"],
            last_offset_epoch=p["last_offset_epoch"],
            last_offset=p["last_offset"],
            pre_vote=bool(p.get("pre_vote", False)),
            replica_directory_id=to_uuid(p.get("replica_directory_id")),
            voter_id=body.get("voter_id", -1),
            voter_directory_id=to_uuid(p.get("voter_directory_id")),
        )
    if api_key == BEGIN_QUORUM_EPOCH:
        p = one_partition(body)
        return BeginQuorumEpochRequest(
            leader_id=p["leader_id"],
            leader_epoch=p["leader_epoch"],
            voter_id=body.get("voter_id", -1),
            voter_directory_id=to_uuid(p.get("voter_directory_id")),
            leader_endpoints=from_listeners(body.get("leader_endpoints")),
        )
    if api_key == END_QUORUM_EPOCH:
        p = one_partition(body)
        successors = tuple(p.get("preferred_successors") or ()) or tuple(
            c["candidate_id"] for c in p.get("preferred_candidates") or ()
        )
        return EndQuorumEpochRequest(
            leader_id=p["leader_id"],
            leader_epoch=p["leader_epoch"],
            preferred_successors=successors,
            leader_endpoints=from_listeners(body.get("leader_endpoints")),
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
            replica_directory_id=to_uuid(p.get("replica_directory_id")),
            replica_epoch=int(state.get("replica_epoch", -1)),
            high_watermark=p.get("high_watermark", HIGH_WATERMARK_NOT_SENT),
        )
    if api_key == FETCH_SNAPSHOT:
        p = one_partition(body, "name")
        return FetchSnapshotRequest(
            replica_id=body["replica_id"],
            current_leader_epoch=p["current_leader_epoch"],
            snapshot_id=OffsetAndEpoch(p["snapshot_id"]["end_offset"], p["snapshot_id"]["epoch"]),
            position=p["position"],
            max_bytes=body["max_bytes"],
            replica_directory_id=to_uuid(p.get("replica_directory_id")),
        )
    if api_key == ADD_RAFT_VOTER:
        return AddRaftVoterRequest(
            voter_id=body["voter_id"],
            voter_directory_id=to_uuid(body.get("voter_directory_id")),
            listeners=from_listeners(body.get("listeners")),
            timeout_ms=body.get("timeout_ms", -1),
        )
    if api_key == REMOVE_RAFT_VOTER:
        return RemoveRaftVoterRequest(
            voter_id=body["voter_id"], voter_directory_id=to_uuid(body.get("voter_directory_id"))
        )
    raise WireError(ErrorCode.INVALID_REQUEST, f"api key {api_key} is not a Raft request")
