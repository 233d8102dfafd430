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


def _owners(group: GroupState) -> dict[tuple[str, int], str]:
    return {
        (topic, partition): m.member_id
        for m in group.members
        for topic, partitions in m.assignment.items()
        for partition in partitions
    }


def _lag(ctx: ConsoleContext, key: tuple[str, int], committed: int | None) -> int | None:
    end = ctx.view.high_watermark(*key)
    return None if end is None or committed is None else max(end - committed, 0)


def total_lag(ctx: ConsoleContext, group: GroupState) -> int:
    return sum(_lag(ctx, key, offset) or 0 for key, offset in group.committed.items())


def group_partitions(
    ctx: ConsoleContext, group: GroupState, offset: int, limit: int
) -> tuple[int, list[dict[str, Any]]]:
    """How many partitions the group owns or committed, and one page of them
    (rows are built for that page only: a group may span 10,000 partitions)."""
    owners = _owners(group)
    keys = sorted(set(group.committed) | set(owners))
    rows = []
    for key in keys[offset : offset + limit]:
        committed = group.committed.get(key)
        rows.append(
            {
                "topic": key[0],
                "partition": key[1],
                "committed_offset": committed,
                "log_end_offset": ctx.view.high_watermark(*key),
                "lag": _lag(ctx, key, committed),
                "member_id": owners.get(key),
            }
        )
    return len(keys), rows


def group_json(
    ctx: ConsoleContext, group: GroupState, window: tuple[int, int] | None = None
) -> dict[str, Any]:
    """The group's summary; with ``window`` (offset, limit) also its members and
    that page of its partitions (the lag total is over all of them)."""
    out: dict[str, Any] = {
        "group": group.group_id,
        "state": group.state,
        "protocol_type": group.protocol_type,
        "protocol": group.protocol,
        "members": len(group.members),
        "lag": total_lag(ctx, group),
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
        out["partition_count"], out["partitions"] = group_partitions(ctx, group, offset, limit)
        out["offset"], out["limit"] = offset, limit
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
