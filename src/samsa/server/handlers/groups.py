"""Group APIs (8, 9, 11-16, 42, 47, 68, 69, 76, 77, 88, 89, 93): thin adapters onto the
group coordinator.

The coordinator answers each request with the response body for that version;
while ``__consumer_offsets`` is still being created or loaded every call is
answered COORDINATOR_LOAD_IN_PROGRESS (retriable), as Kafka does.  A streams
group heartbeat also has the broker check its topology's topic names and create
the internal topics the coordinator found missing (``streams_topics``).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode
from samsa.server.access.authorized_operations import AUTHORIZED_OPS_UNSET, group_operations
from samsa.server.connections.router import Body, RequestContext, Router
from samsa.server.coordinators import streams_topics

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

APIS = {
    8: "offset_commit",
    9: "offset_fetch",
    11: "join_group",
    12: "heartbeat",
    13: "leave_group",
    14: "sync_group",
    15: "describe_groups",
    16: "list_groups",
    42: "delete_groups",
    47: "offset_delete",
    68: "consumer_group_heartbeat",
    69: "consumer_group_describe",
    76: "share_group_heartbeat",
    77: "share_group_describe",
    88: "streams_group_heartbeat",
    89: "streams_group_describe",
    93: "streams_group_topology_description_update",
}


JOIN_GROUP = 11
DESCRIBE_GROUPS = 15
GROUP_NOT_FOUND_VERSION = 6
CONSUMER_GROUP_DESCRIBE = 69
CONSUMER_MEMBER = 1
CONSUMER_GROUP_HEARTBEAT = 68
SHARE_GROUP_HEARTBEAT = 76
STREAMS_GROUP_HEARTBEAT = 88
STREAMS_GROUP_DESCRIBE = 89
STREAMS_TOPOLOGY_DESCRIPTION_UPDATE = 93
WITH_CLIENT = frozenset({JOIN_GROUP, CONSUMER_GROUP_HEARTBEAT, SHARE_GROUP_HEARTBEAT})


def register(router: Router, broker: BrokerApi) -> None:
    for key, method in APIS.items():
        router.register(key, _adapter(broker, key, method))


def _adapter(broker: BrokerApi, key: int, method: str) -> Any:
    def handle(ctx: RequestContext, req: Body) -> Body | Awaitable[Body]:
        if key == STREAMS_GROUP_HEARTBEAT:
            refused = streams_topics.invalid_topology(req)
            if refused is not None:
                return refused
        error = broker.ensure_group_coordinator()
        if error is not None:
            return loading_response(key, ctx.version, req, error)
        if key == STREAMS_GROUP_HEARTBEAT:
            return _streams_heartbeat(broker, ctx, req)
        if key in WITH_CLIENT:
            caller = ctx.caller
            host = caller.host if caller is not None else ""
            joining: Awaitable[Body] = getattr(broker.groups, method)(
                req, ctx.version, client_id=ctx.header.client_id or "", client_host=f"/{host}"
            )
            return joining
        result: Awaitable[Body] = getattr(broker.groups, method)(req, ctx.version)
        if key == DESCRIBE_GROUPS:
            return _described(result, bool(req.get("include_authorized_operations")), ctx.version)
        if key == CONSUMER_GROUP_DESCRIBE:
            return _typed_members(result)
        return result

    return handle


async def _streams_heartbeat(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    """StreamsGroupHeartbeat, then the internal topics the group still needs."""
    caller = ctx.caller
    host = caller.host if caller is not None else ""
    result = await broker.groups.streams_group_heartbeat(
        req, ctx.version, client_id=ctx.header.client_id or "", client_host=f"/{host}"
    )
    response: Body = result.response
    if result.to_create:
        streams_topics.create_internal_topics(broker, ctx, response, result.to_create)
    return response


async def _typed_members(described: Awaitable[Body]) -> Body:
    """ConsumerGroupDescribe v1 (KIP-1099) tells each member's protocol: the
    coordinator says which members joined with the classic protocol (0, KIP-848's
    online migration); the others speak the consumer protocol (1)."""
    response = await described
    for group in response["groups"]:
        for member in group.get("members") or ():
            member.setdefault("member_type", CONSUMER_MEMBER)
    return response


async def _described(described: Awaitable[Body], asked: bool, version: int) -> Body:
    """DescribeGroups v3+: the group's operations when asked, as Kafka's API layer
    adds them.  v6 (KIP-1043) answers a group that does not exist
    GROUP_ID_NOT_FOUND with Kafka's message, where older versions call it Dead."""
    response = await described
    for group in response["groups"]:
        group["authorized_operations"] = group_operations(asked)
        if (
            version >= GROUP_NOT_FOUND_VERSION
            and not group["error_code"]
            and group["group_state"] == "Dead"
            and not group["members"]
        ):
            group["error_code"] = ErrorCode.GROUP_ID_NOT_FOUND
            group["error_message"] = f"Group {group['group_id']} not found."
    return response


def loading_response(key: int, version: int, req: Body, error: ErrorCode) -> Body:
    """The response of each group API when the coordinator cannot serve it yet."""
    if key == 8:  # OffsetCommit
        return {
            "throttle_time_ms": 0,
            "topics": [
                {
                    "name": t["name"],
                    "partitions": [
                        {"partition_index": p["partition_index"], "error_code": error}
                        for p in t["partitions"]
                    ],
                }
                for t in req["topics"]
            ],
        }
    if key == 9:  # OffsetFetch
        groups = [
            {"group_id": g["group_id"], "topics": [], "error_code": error}
            for g in req.get("groups", [])
        ]
        return {"throttle_time_ms": 0, "topics": [], "error_code": error, "groups": groups}
    if key == 15:  # DescribeGroups
        return {
            "throttle_time_ms": 0,
            "groups": [
                {
                    "error_code": error,
                    "group_id": g,
                    "group_state": "",
                    "protocol_type": "",
                    "protocol_data": "",
                    "members": [],
                    "authorized_operations": AUTHORIZED_OPS_UNSET,
                }
                for g in req["groups"]
            ],
        }
    if key == 16:  # ListGroups
        return {"throttle_time_ms": 0, "error_code": error, "groups": []}
    if key == 42:  # DeleteGroups
        return {
            "throttle_time_ms": 0,
            "results": [{"group_id": g, "error_code": error} for g in req["groups_names"]],
        }
    if key == 47:  # OffsetDelete
        return {"error_code": error, "throttle_time_ms": 0, "topics": []}
    if key == 11:  # JoinGroup
        return {
            "throttle_time_ms": 0,
            "error_code": error,
            "generation_id": -1,
            "protocol_type": None,
            "protocol_name": None if version >= 7 else "",
            "leader": "",
            "skip_assignment": False,
            "member_id": req.get("member_id", ""),
            "members": [],
        }
    if key == STREAMS_GROUP_HEARTBEAT:
        from samsa.coordinator.streams.heartbeat_request import error_response

        return error_response(error, None)
    if key == STREAMS_GROUP_DESCRIBE:
        return _modern_describe_error(req, error)
    if key in (CONSUMER_GROUP_HEARTBEAT, SHARE_GROUP_HEARTBEAT):
        return {
            "throttle_time_ms": 0,
            "error_code": error,
            "member_epoch": -1,
            "heartbeat_interval_ms": 0,
        }
    if key in (69, 77):  # ConsumerGroupDescribe, ShareGroupDescribe
        return _modern_describe_error(req, error, assignor_name="")
    if key == 13:  # LeaveGroup
        return {"throttle_time_ms": 0, "error_code": error, "members": []}
    if key == 14:  # SyncGroup
        return {
            "throttle_time_ms": 0,
            "error_code": error,
            "protocol_type": None,
            "protocol_name": None,
            "assignment": b"",
        }
    return {"throttle_time_ms": 0, "error_code": error}  # Heartbeat


def _modern_describe_error(req: Body, error: ErrorCode, **fields: Any) -> Body:
    """Consumer, share and streams groups' Describe refused whole: each asked group with
    ``error`` (``fields``: the response's own extra fields, e.g. a consumer group's assignor)."""
    return {
        "throttle_time_ms": 0,
        "groups": [
            {
                "error_code": error,
                "group_id": g,
                "group_state": "",
                "group_epoch": -1,
                "assignment_epoch": -1,
                **fields,
                "members": [],
            }
            for g in req["group_ids"]
        ],
    }
