"""Raft messages survive the trip through Kafka's wire bytes, both directions."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from samsa.errors import ErrorCode
from samsa.protocol.api import decode_message, encode_message
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
    RaftRequest,
    RaftResponse,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    VoteRequest,
    VoteResponse,
)
from samsa.raft.records import Endpoint, Entry, LeaderChange, OffsetAndEpoch
from samsa.raft.rpc import wire

DIR = uuid.UUID(int=7)
EP = (Endpoint("CONTROLLER", "127.0.0.1", 9093),)

REQUESTS: list[RaftRequest] = [
    VoteRequest(2, 5, 4, 17, pre_vote=True, replica_directory_id=DIR, voter_id=3),
    VoteRequest(2, 6, 4, 17),
    BeginQuorumEpochRequest(1, 7, voter_id=2, voter_directory_id=DIR, leader_endpoints=EP),
    EndQuorumEpochRequest(1, 7, preferred_successors=(3, 2), leader_endpoints=EP),
    FetchRequest(4, 120, 6, 7, 500, 1 << 20, replica_directory_id=DIR, replica_epoch=88),
    FetchSnapshotRequest(4, 7, OffsetAndEpoch(100, 5), 4096, 1 << 20, replica_directory_id=DIR),
    AddRaftVoterRequest(4, DIR, EP, timeout_ms=5000),
    RemoveRaftVoterRequest(4, DIR),
]


def _through_bytes(
    api_key: int, version: int, body: dict[str, Any], request: bool
) -> dict[str, Any]:
    return decode_message(
        api_key, version, encode_message(api_key, version, body, request), request
    )


@pytest.mark.parametrize("message", REQUESTS, ids=lambda m: type(m).__name__)
def test_requests_round_trip(message: RaftRequest) -> None:
    api_key, version, body = wire.encode_request(message, "cluster-a")
    decoded = _through_bytes(api_key, version, body, True)
    wire.check_cluster_id(decoded, "cluster-a")
    assert wire.decode_request(api_key, version, decoded) == message


def test_a_fetch_carries_the_followers_high_watermark() -> None:
    """KIP-1166: without it the leader cannot answer a parked fetch when only the high
    watermark moved, and every follower learned of a commit one fetch wait (500 ms) late."""
    message = FetchRequest(4, 120, 6, 7, 500, 1 << 20, replica_epoch=88, high_watermark=118)
    api_key, version, body = wire.encode_request(message, "cluster-a")
    assert (
        wire.decode_request(api_key, version, _through_bytes(api_key, version, body, True))
        == message
    )


def test_a_request_for_another_cluster_is_refused() -> None:
    api_key, version, body = wire.encode_request(REQUESTS[0], "cluster-a")
    with pytest.raises(wire.WireError) as info:
        wire.check_cluster_id(_through_bytes(api_key, version, body, True), "cluster-b")
    assert info.value.code == ErrorCode.INCONSISTENT_CLUSTER_ID


def test_a_vote_for_another_topic_is_refused() -> None:
    api_key, version, body = wire.encode_request(REQUESTS[0], "c")
    body["topics"][0]["topic_name"] = "orders"
    with pytest.raises(wire.WireError):
        wire.decode_request(api_key, version, body)


def test_metadata_fetches_are_told_apart_from_client_fetches() -> None:
    _, version, body = wire.encode_request(REQUESTS[4], "c")
    assert wire.is_metadata_fetch(version, body)
    assert not wire.is_metadata_fetch(12, {"topics": [{"topic": "orders", "partitions": []}]})
    assert wire.is_metadata_fetch(12, {"topics": [{"topic": "__cluster_metadata"}]})


RESPONSES: list[tuple[RaftRequest, RaftResponse]] = [
    (REQUESTS[0], VoteResponse(0, 1, 5, True, EP)),
    (REQUESTS[0], VoteResponse(ErrorCode.FENCED_LEADER_EPOCH, None, 9, False)),
    (REQUESTS[2], BeginQuorumEpochResponse(0, 1, 7, EP)),
    (REQUESTS[3], EndQuorumEpochResponse(0, None, 7)),
    (
        REQUESTS[4],
        FetchResponse(
            0,
            1,
            7,
            high_watermark=121,
            log_start_offset=10,
            entries=(
                Entry(120, 6, b"a"),
                Entry(121, 7, LeaderChange(1, (1, 2, 3), ())),
                Entry(122, 7, b"bc"),
            ),
            leader_endpoints=EP,
        ),
    ),
    (REQUESTS[4], FetchResponse(0, 1, 7, 50, 0, diverging_epoch=OffsetAndEpoch(90, 5))),
    (REQUESTS[4], FetchResponse(0, 1, 7, 50, 0, snapshot_id=OffsetAndEpoch(100, 5))),
    (
        REQUESTS[4],
        FetchResponse(ErrorCode.NOT_LEADER_OR_FOLLOWER, 3, 8, leader_endpoints=EP),
    ),
    (REQUESTS[5], FetchSnapshotResponse(0, 1, 7, OffsetAndEpoch(100, 5), 9000, 4096, b"xyz")),
    (REQUESTS[6], AddRaftVoterResponse(0, None)),
    (REQUESTS[7], RemoveRaftVoterResponse(ErrorCode.INVALID_REQUEST, "nope")),
]


@pytest.mark.parametrize(("request_", "message"), RESPONSES, ids=lambda m: type(m).__name__)
def test_responses_round_trip(request_: RaftRequest, message: RaftResponse) -> None:
    api_key, version, _ = wire.encode_request(request_, "c")
    body = wire.encode_response(api_key, version, message, "CONTROLLER")
    decoded = _through_bytes(api_key, version, body, False)
    assert wire.decode_response(api_key, version, decoded, "CONTROLLER", request_) == message


def test_a_fetch_response_sends_the_stored_batches_it_carries_as_they_are() -> None:
    from samsa.raft.messages import FetchResponse
    from samsa.raft.persistence.entry_codec import decode_entries, encode_payloads
    from samsa.raft.records import Entry
    from samsa.raft.rpc.wire_responses import encode_response

    stored = bytes(encode_payloads([b"x", b"y"], base_offset=5, epoch=3, timestamp_ms=42))
    entries = tuple(decode_entries(stored, 5)[0])
    assert entries == (Entry(5, 3, b"x"), Entry(6, 3, b"y"))
    response = FetchResponse(0, 1, 3, 7, 0, entries, raw_records=stored)
    body = encode_response(1, 16, response, "CONTROLLER")
    [topic] = body["responses"]
    [partition] = topic["partitions"]
    assert partition["records"] == stored
