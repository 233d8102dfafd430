"""The metadata quorum's RPCs on a controller listener.

Vote, BeginQuorumEpoch, EndQuorumEpoch, FetchSnapshot and the metadata Fetch
go straight to the Raft driver; the answer comes from the Raft machine.  The
cluster id of every request is checked first (INCONSISTENT_CLUSTER_ID), so two
clusters that share hosts never mix their logs.  DescribeQuorum, AddRaftVoter
and RemoveRaftVoter are answered by the leader (a voter that does not lead
says so with NOT_LEADER_OR_FOLLOWER and the leader hint).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from samsa.errors import ErrorCode
from samsa.raft.driver import RaftDriver
from samsa.raft.messages import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
)
from samsa.raft.rpc import wire
from samsa.server.connections.router import Body, RequestContext, Router
from samsa.server.connections.socket_server import CloseConnection

FETCH = 1
PASS_THROUGH = (wire.VOTE, wire.BEGIN_QUORUM_EPOCH, wire.END_QUORUM_EPOCH, wire.FETCH_SNAPSHOT)


class QuorumNodes(Protocol):
    """Where the voters listen, for DescribeQuorum v2's ``nodes``."""

    def voter_nodes(self) -> list[dict[str, Any]]: ...


def _source(api_key: int, body: Body) -> int:
    if api_key == FETCH:
        state = body.get("replica_state") or {}
        return int(state.get("replica_id", body.get("replica_id", -1)) or -1)
    if api_key == wire.VOTE:
        partitions = (body.get("topics") or [{}])[0].get("partitions") or [{}]
        return int(partitions[0].get("replica_id", -1))
    return int(body.get("replica_id", -1))


async def handle_raft_request(
    raft: RaftDriver, ctx: RequestContext, api_key: int, body: Body
) -> Body:
    version = ctx.version
    try:
        wire.check_cluster_id(body, raft.cluster_id)
        request = wire.decode_request(api_key, version, body)
    except wire.WireError as exc:
        return wire.error_response(api_key, version, exc.code, str(exc))
    response = await raft.handle_request(_source(api_key, body), request)
    return wire.encode_response(api_key, version, response, raft.listener_name)


def describe_quorum(raft: RaftDriver, nodes: QuorumNodes) -> Body:
    return wire.describe_quorum_response(raft.describe_quorum(), nodes.voter_nodes())


async def add_voter(raft: RaftDriver, ctx: RequestContext, body: Body) -> Body:
    try:
        wire.check_cluster_id(body, raft.cluster_id)
        request = wire.decode_request(wire.ADD_RAFT_VOTER, ctx.version, body)
    except wire.WireError as exc:
        return wire.error_response(wire.ADD_RAFT_VOTER, ctx.version, exc.code, str(exc))
    assert isinstance(request, AddRaftVoterRequest)
    response = await raft.add_voter(
        request.voter_id, request.voter_directory_id, request.listeners, request.timeout_ms
    )
    assert isinstance(response, AddRaftVoterResponse)
    return wire.encode_response(wire.ADD_RAFT_VOTER, ctx.version, response, raft.listener_name)


async def remove_voter(raft: RaftDriver, ctx: RequestContext, body: Body) -> Body:
    try:
        wire.check_cluster_id(body, raft.cluster_id)
        request = wire.decode_request(wire.REMOVE_RAFT_VOTER, ctx.version, body)
    except wire.WireError as exc:
        return wire.error_response(wire.REMOVE_RAFT_VOTER, ctx.version, exc.code, str(exc))
    assert isinstance(request, RemoveRaftVoterRequest)
    response = await raft.remove_voter(request.voter_id, request.voter_directory_id)
    assert isinstance(response, RemoveRaftVoterResponse)
    return wire.encode_response(wire.REMOVE_RAFT_VOTER, ctx.version, response, raft.listener_name)


def register(router: Router, raft: RaftDriver, nodes: QuorumNodes, *, fetch: bool) -> None:
    """The Raft RPCs; ``fetch`` registers Fetch too (a controller-only listener,
    where no broker Fetch handler tells metadata fetches from client fetches)."""
    for api_key in PASS_THROUGH:
        router.register(
            api_key,
            lambda ctx, req, key=api_key: handle_raft_request(raft, ctx, key, req),  # type: ignore[misc]
        )
    if fetch:
        router.register(FETCH, lambda ctx, req: _controller_fetch(raft, ctx, req))
    router.register(wire.DESCRIBE_QUORUM, lambda ctx, req: describe_quorum(raft, nodes))
    router.register(wire.ADD_RAFT_VOTER, lambda ctx, req: add_voter(raft, ctx, req))
    router.register(wire.REMOVE_RAFT_VOTER, lambda ctx, req: remove_voter(raft, ctx, req))


async def _controller_fetch(raft: RaftDriver, ctx: RequestContext, body: Body) -> Body:
    if not wire.is_metadata_fetch(ctx.version, body):
        return wire.error_response(
            FETCH,
            ctx.version,
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            "a controller serves only __cluster_metadata",
        )
    return await handle_raft_request(raft, ctx, FETCH, body)


def register_starting_fetch(
    router: Router, raft: RaftDriver, clients_router: Callable[[], Awaitable[Router]]
) -> None:
    """Fetch on a listener the quorum shares with clients, while the broker starts:
    a peer's metadata Fetch is answered now (the quorum cannot wait for this
    broker, which waits for the quorum), a client's once ``clients_router``,
    the listener's complete router, is installed."""

    async def fetch(ctx: RequestContext, body: Body) -> Body | None:
        if wire.is_metadata_fetch(ctx.version, body):
            return await handle_raft_request(raft, ctx, FETCH, body)
        handler = (await clients_router()).handler(FETCH)
        if handler is None:
            raise CloseConnection("Fetch is not served on this listener")
        result = handler(ctx, body)
        return await result if inspect.isawaitable(result) else result

    router.register(FETCH, fetch)
