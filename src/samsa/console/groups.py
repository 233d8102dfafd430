"""Consumer groups: the list, and one group's members, offsets and lag.

Read from the group coordinator of this broker (the groups whose
``__consumer_offsets`` partition it leads).  Lag is the partition's high
watermark minus the committed offset, as ``samsa groups describe`` and
Kafka's tools compute it; a partition a member owns without a committed
offset has none (Kafka's tool prints "-"), and the total says how many it
leaves out (``lag_uncounted``, ``no_offset``).  With ACLs on, the caller sees what ListGroups,
DescribeGroups and OffsetFetch would show it: the groups it may DESCRIBE
(all of them with DESCRIBE on the cluster), and within a group only the
topics it may DESCRIBE.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from samsa.console.broker_port import Group
from samsa.console.context import CLUSTER, CLUSTER_NAME, GROUP, ConsoleContext
from samsa.console.params import page_window
from samsa.http.messages import HttpError, Request, Response, json_response
from samsa.protocol.acl import AclOperation

DESCRIBE = AclOperation.DESCRIBE


def _owners(group: Group) -> dict[tuple[str, int], str]:
    return {
        (topic, partition): m.member_id
        for m in group.members
        for topic, partitions in m.assignment.items()
        for partition in partitions
    }


def _lag(ctx: ConsoleContext, key: tuple[str, int], committed: int | None) -> int | None:
    end = ctx.view.high_watermark(*key)
    return None if end is None or committed is None else max(end - committed, 0)


def _committed(ctx: ConsoleContext, group: Group) -> dict[tuple[str, int], int]:
    """The group's committed offsets of the topics the caller may see."""
    committed = dict(group.committed)
    if not ctx.broker.authorizer_on:
        return committed
    return {key: offset for key, offset in committed.items() if ctx.topic_visible(key[0])}


def _owned(ctx: ConsoleContext, group: Group) -> dict[tuple[str, int], str]:
    """Which member owns each partition, of the topics the caller may see."""
    owners = _owners(group)
    if ctx.broker.authorizer_on:
        owners = {key: m for key, m in owners.items() if ctx.topic_visible(key[0])}
    return owners


def lag_totals(ctx: ConsoleContext, group: Group) -> dict[str, int]:
    """The group's total lag over the partitions it owns or committed, and how
    many of them it leaves out: ``no_offset`` (owned with no committed offset,
    which Kafka's tool shows as "-") and the rest of ``lag_uncounted`` (no
    replica on this broker to know the log end)."""
    committed = _committed(ctx, group)
    total = uncounted = no_offset = 0
    for key, offset in committed.items():
        lag = _lag(ctx, key, offset)
        if lag is None:
            uncounted += 1
        else:
            total += lag
    if group.members:
        no_offset = sum(1 for key in _owned(ctx, group) if key not in committed)
    return {"lag": total, "lag_uncounted": uncounted + no_offset, "no_offset": no_offset}


def group_partitions(
    ctx: ConsoleContext, group: Group, offset: int, limit: int
) -> tuple[int, list[dict[str, Any]]]:
    """How many partitions the group owns or committed, and one page of them
    (rows are built for that page only: a group may span 10,000 partitions)."""
    owners = _owned(ctx, group)
    committed_offsets = _committed(ctx, group)
    keys = sorted(set(committed_offsets) | set(owners))
    rows = []
    for key in keys[offset : offset + limit]:
        committed = committed_offsets.get(key)
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


def _assignment(ctx: ConsoleContext, assignment: Any) -> dict[str, list[int]]:
    if not ctx.broker.authorizer_on:
        return dict(assignment)
    return {t: ps for t, ps in assignment.items() if ctx.topic_visible(t)}


def group_json(
    ctx: ConsoleContext, group: Group, window: tuple[int, int] | None = None
) -> dict[str, Any]:
    """The group's summary; with ``window`` (offset, limit) also its members and
    that page of its partitions (the lag total is over all of them)."""
    out: dict[str, Any] = {
        "group": group.group_id,
        "state": group.state,
        "protocol_type": group.protocol_type,
        "protocol": group.protocol,
        "members": len(group.members),
        **lag_totals(ctx, group),
    }
    if window is not None:
        offset, limit = window
        out["members"] = [
            {
                "member_id": m.member_id,
                "client_id": m.client_id,
                "host": m.client_host,
                "assignment": _assignment(ctx, m.assignment),
            }
            for m in group.members
        ]
        out["partition_count"], out["partitions"] = group_partitions(ctx, group, offset, limit)
        out["offset"], out["limit"] = offset, limit
        out["authorized_operations"] = ctx.authorized_operations(GROUP, group.group_id)
    return out


def group_filter(ctx: ConsoleContext) -> Callable[[str], bool]:
    """ListGroups' rule: every group with DESCRIBE on the cluster, else those
    the caller may DESCRIBE."""
    if not ctx.broker.authorizer_on or ctx.may(DESCRIBE, CLUSTER, CLUSTER_NAME):
        return lambda _: True
    return lambda group_id: ctx.may(DESCRIBE, GROUP, group_id)


def list_groups(ctx: ConsoleContext, request: Request) -> Response:
    offset, limit = page_window(request, 100, 1000)
    visible = group_filter(ctx)
    groups = [g for g in ctx.view.groups() if visible(g.group_id)]
    page = [group_json(ctx, g) for g in groups[offset : offset + limit]]
    return json_response({"total": len(groups), "offset": offset, "limit": limit, "groups": page})


def describe_group(ctx: ConsoleContext, group_id: str, request: Request) -> Response:
    window = page_window(request, 100, 1000)
    return json_response(group_json(ctx, find_group(ctx, group_id), window))


def find_group(ctx: ConsoleContext, group_id: str, operation: AclOperation = DESCRIBE) -> Group:
    """The group if the caller may do ``operation`` on it (403 otherwise,
    whether or not it exists), or 404."""
    ctx.require(operation, GROUP, group_id)
    for group in ctx.view.groups():
        if group.group_id == group_id:
            return group
    raise HttpError(404, f"group {group_id!r} does not exist (on this broker's coordinator)")
