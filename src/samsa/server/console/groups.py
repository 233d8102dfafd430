"""Consumer groups: the list, and one group's members, offsets and lag.

Read from the group coordinator of this broker (the groups whose
``__consumer_offsets`` partition it leads).  Lag is the partition's high
watermark minus the committed offset, as ``samsa groups describe`` and
Kafka's tools compute it.
"""

from __future__ import annotations

from typing import Any

from samsa.server.broker_view import GroupState
from samsa.server.console.context import ConsoleContext
from samsa.server.console.params import page_window
from samsa.server.http_endpoint import HttpError, Request, Response, json_response


def group_partitions(ctx: ConsoleContext, group: GroupState) -> list[dict[str, Any]]:
    owners = {
        (topic, partition): m.member_id
        for m in group.members
        for topic, partitions in m.assignment.items()
        for partition in partitions
    }
    keys = sorted(set(group.committed) | set(owners))
    rows = []
    for topic, partition in keys:
        committed = group.committed.get((topic, partition))
        end = ctx.view.high_watermark(topic, partition)
        lag = None if end is None or committed is None else max(end - committed, 0)
        rows.append(
            {
                "topic": topic,
                "partition": partition,
                "committed_offset": committed,
                "log_end_offset": end,
                "lag": lag,
                "member_id": owners.get((topic, partition)),
            }
        )
    return rows


def group_json(
    ctx: ConsoleContext, group: GroupState, window: tuple[int, int] | None = None
) -> dict[str, Any]:
    """The group's summary; with ``window`` (offset, limit) also its members and
    that page of its partitions (the lag total is over all of them)."""
    partitions = group_partitions(ctx, group)
    out: dict[str, Any] = {
        "group": group.group_id,
        "state": group.state,
        "protocol_type": group.protocol_type,
        "protocol": group.protocol,
        "members": len(group.members),
        "lag": sum(p["lag"] or 0 for p in partitions),
    }
    if window is not None:
        offset, limit = window
        out["members"] = [
            {
                "member_id": m.member_id,
                "client_id": m.client_id,
                "host": m.client_host,
                "assignment": m.assignment,
            }
            for m in group.members
        ]
        out["partition_count"] = len(partitions)
        out["offset"], out["limit"] = offset, limit
        out["partitions"] = partitions[offset : offset + limit]
    return out


def list_groups(ctx: ConsoleContext, request: Request) -> Response:
    offset, limit = page_window(request, 100, 1000)
    groups = ctx.view.groups()
    page = [group_json(ctx, g) for g in groups[offset : offset + limit]]
    return json_response({"total": len(groups), "offset": offset, "limit": limit, "groups": page})


def describe_group(ctx: ConsoleContext, group_id: str, request: Request) -> Response:
    window = page_window(request, 100, 1000)
    return json_response(group_json(ctx, find_group(ctx, group_id), window))


def find_group(ctx: ConsoleContext, group_id: str) -> GroupState:
    for group in ctx.view.groups():
        if group.group_id == group_id:
            return group
    raise HttpError(404, f"group {group_id!r} does not exist (on this broker's coordinator)")
