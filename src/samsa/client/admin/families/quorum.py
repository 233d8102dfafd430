"""The metadata quorum through Admin: DescribeQuorum, AddRaftVoter, RemoveRaftVoter.

These are Kafka's KRaft admin calls (KIP-595, KIP-836, KIP-853).  A broker
forwards them to the active controller, so any bootstrap address works, and
Kafka's own ``kafka-metadata-quorum`` tool reads the same answers.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from samsa.client.admin.item_errors import item_error
from samsa.client.admin.plumbing import AdminPlumbing

DESCRIBE_QUORUM, ADD_RAFT_VOTER, REMOVE_RAFT_VOTER = 55, 80, 81
METADATA_TOPIC = "__cluster_metadata"


@dataclass(frozen=True, slots=True)
class ReplicaInfo:
    replica_id: int
    directory_id: str | None
    log_end_offset: int
    last_fetch_timestamp: int
    last_caught_up_timestamp: int


@dataclass(frozen=True, slots=True)
class QuorumInfo:
    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[ReplicaInfo, ...]
    observers: tuple[ReplicaInfo, ...]
    endpoints: dict[int, tuple[tuple[str, str, int], ...]]
    """Voter id -> its controller listeners (name, host, port), from v2."""


def _replica(entry: dict[str, Any]) -> ReplicaInfo:
    raw = entry.get("replica_directory_id") or b""
    directory = str(uuid.UUID(bytes=raw)) if raw and any(raw) else None
    return ReplicaInfo(
        entry["replica_id"],
        directory,
        entry["log_end_offset"],
        entry.get("last_fetch_timestamp", -1),
        entry.get("last_caught_up_timestamp", -1),
    )


def describe_quorum(admin: AdminPlumbing, timeout_ms: int) -> QuorumInfo:
    body = {"topics": [{"topic_name": METADATA_TOPIC, "partitions": [{"partition_index": 0}]}]}
    resp = admin._call(None, DESCRIBE_QUORUM, body, timeout_ms)
    for answer in (resp, *(resp["topics"][0]["partitions"] if resp.get("topics") else ())):
        error = item_error(
            answer.get("error_code", 0), answer.get("error_message"), "describe quorum"
        )
        if error is not None:
            raise error
    partition = resp["topics"][0]["partitions"][0]
    endpoints = {
        node["node_id"]: tuple((lst["name"], lst["host"], lst["port"]) for lst in node["listeners"])
        for node in resp.get("nodes", [])
    }
    return QuorumInfo(
        partition["leader_id"],
        partition["leader_epoch"],
        partition["high_watermark"],
        tuple(_replica(v) for v in partition["current_voters"]),
        tuple(_replica(o) for o in partition["observers"]),
        endpoints,
    )


def add_raft_voter(
    admin: AdminPlumbing,
    voter_id: int,
    directory_id: str,
    listeners: list[tuple[str, str, int]],
    timeout_ms: int,
) -> None:
    body = {
        "cluster_id": None,
        "timeout_ms": timeout_ms,
        "voter_id": voter_id,
        "voter_directory_id": uuid.UUID(directory_id).bytes,
        "listeners": [{"name": n, "host": h, "port": p} for n, h, p in listeners],
        "ack_when_committed": True,
    }
    resp = admin._call(None, ADD_RAFT_VOTER, body, timeout_ms)
    error = item_error(resp["error_code"], resp.get("error_message"), f"add voter {voter_id}")
    if error is not None:
        raise error


def remove_raft_voter(
    admin: AdminPlumbing, voter_id: int, directory_id: str, timeout_ms: int
) -> None:
    body = {
        "cluster_id": None,
        "voter_id": voter_id,
        "voter_directory_id": uuid.UUID(directory_id).bytes,
    }
    resp = admin._call(None, REMOVE_RAFT_VOTER, body, timeout_ms)
    error = item_error(resp["error_code"], resp.get("error_message"), f"remove voter {voter_id}")
    if error is not None:
        raise error
