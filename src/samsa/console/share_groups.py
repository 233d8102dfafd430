"""Share groups (KIP-932): each group with its members, and each share partition
this broker leads with its start offset and in-flight records by state.

The group side comes from this broker's coordinator, the partition side from
the share partitions of the topic partitions it leads, so on a cluster a group
appears on its coordinator's console and its partitions on their leaders'.
With ACLs on, as for consumer groups: the groups the caller may DESCRIBE (all
with DESCRIBE on the cluster), and the topics within them it may DESCRIBE.
"""

from __future__ import annotations

from typing import Any

from samsa.console.context import ConsoleContext
from samsa.console.groups import group_filter
from samsa.console.params import page_window
from samsa.http.messages import Request, Response, json_response


def list_share_groups(ctx: ConsoleContext, request: Request) -> Response:
    offset, limit = page_window(request, 100, 1000)
    partitions: dict[str, list[dict[str, Any]]] = {}
    secured = ctx.broker.authorizer_on
    for sp in ctx.view.share_partitions():
        if secured and not ctx.topic_visible(sp.topic):
            continue
        partitions.setdefault(sp.group_id, []).append(
            {
                "topic": sp.topic,
                "partition": sp.partition,
                "start_offset": sp.start_offset,
                "log_end_offset": ctx.view.high_watermark(sp.topic, sp.partition),
                "in_flight": sp.in_flight,
                "archived_total": sp.archived_total,
            }
        )
    groups = {g.group_id: g for g in ctx.view.share_groups()}
    ids = sorted(set(groups) | set(partitions))
    visible = group_filter(ctx)
    ids = [group_id for group_id in ids if visible(group_id)]
    page = []
    for group_id in ids[offset : offset + limit]:
        group = groups.get(group_id)
        page.append(
            {
                "group": group_id,
                "state": None if group is None else group.state,
                "group_epoch": None if group is None else group.group_epoch,
                "members": []
                if group is None
                else [
                    {
                        "member_id": m.member_id,
                        "client_id": m.client_id,
                        "host": m.client_host,
                        "assignment": {
                            t: ps
                            for t, ps in m.assignment.items()
                            if not secured or ctx.topic_visible(t)
                        },
                    }
                    for m in group.members
                ],
                "partitions": partitions.get(group_id, []),
            }
        )
    return json_response({"total": len(ids), "offset": offset, "limit": limit, "groups": page})
