"""A topic's consumers: the groups this broker coordinates that have committed
offsets on the topic or whose members are assigned its partitions, each with
its lag on this topic (the page of Redpanda Console, AKHQ and Kafka UI that
answers "who reads this?").

What the caller sees follows the groups page's rules: DESCRIBE on the topic,
and the groups it may DESCRIBE (every one with DESCRIBE on the cluster).
Read once per page load, not polled: it walks every group's offsets.
"""

from __future__ import annotations

from typing import Any

from samsa.console.broker_port import Group
from samsa.console.context import ConsoleContext
from samsa.console.groups import group_filter
from samsa.console.params import page_window
from samsa.http.messages import Request, Response, json_response


def _reads(group: Group, topic: str) -> dict[str, Any] | None:
    """The group's view of ``topic``, or None when it does not read it."""
    committed = {p: o for (t, p), o in group.committed.items() if t == topic}
    owners = {p: m.member_id for m in group.members for p in (m.assignment.get(topic) or ())}
    if not committed and not owners:
        return None
    return {"committed": committed, "owners": owners}


def topic_consumers(ctx: ConsoleContext, name: str, request: Request) -> Response:
    ctx.known_topic(name)
    offset, limit = page_window(request, 100, 1000)
    visible = group_filter(ctx)
    found = []
    for group in ctx.view.groups():
        if not visible(group.group_id):
            continue
        reads = _reads(group, name)
        if reads is not None:
            found.append((group, reads))
    found.sort(key=lambda item: item[0].group_id)
    rows = []
    for group, reads in found[offset : offset + limit]:
        committed, owners = reads["committed"], reads["owners"]
        lag = uncounted = 0
        for partition in set(committed) | set(owners):
            end = ctx.view.high_watermark(name, partition)
            at = committed.get(partition)
            if end is None or at is None:
                uncounted += 1
            else:
                lag += max(end - at, 0)
        rows.append(
            {
                "group": group.group_id,
                "state": group.state,
                "members": len(set(owners.values())),
                "partitions": len(set(committed) | set(owners)),
                "committed_partitions": len(committed),
                "lag": lag,
                "lag_uncounted": uncounted,
                "no_offset": len(set(owners) - set(committed)),
            }
        )
    return json_response(
        {"topic": name, "total": len(found), "offset": offset, "limit": limit, "groups": rows}
    )
