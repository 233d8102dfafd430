"""Groups through Admin: ListGroups (16), DescribeGroups (15) and DeleteGroups (42).

ListGroups asks every broker (each lists the groups it coordinates);
describing and deleting a group go to its coordinator.  A classic consumer
group's member assignments are decoded from the consumer protocol, as
Kafka's tools show them; KIP-848 groups have their own describe
(consumer_groups), share groups theirs (share_groups).
"""

from __future__ import annotations

from collections.abc import Iterable

from samsa.client.admin.item_errors import check_item
from samsa.client.admin.plumbing import AdminPlumbing
from samsa.client.admin.results import GroupDescription, GroupListing, MemberDescription
from samsa.protocol.consumer_protocol import decode_assignment

DESCRIBE_GROUPS, LIST_GROUPS, DELETE_GROUPS = 15, 16, 42


def list_groups(
    admin: AdminPlumbing, node_ids: Iterable[int], timeout_ms: int
) -> list[GroupListing]:
    """The groups each of ``node_ids`` coordinates."""
    out: list[GroupListing] = []
    for node_id in node_ids:
        resp = admin._call(
            node_id, LIST_GROUPS, {"states_filter": [], "types_filter": []}, timeout_ms
        )
        check_item(resp["error_code"], None, "list groups")
        out += [
            GroupListing(
                g["group_id"],
                g["protocol_type"],
                g.get("group_state"),
                g.get("group_type") or "",
            )
            for g in resp["groups"]
        ]
    return out


def describe_groups(
    admin: AdminPlumbing, group_ids: Iterable[str], timeout_ms: int
) -> dict[str, GroupDescription]:
    out: dict[str, GroupDescription] = {}
    for group_id in group_ids:
        node = admin._coordinator(group_id, timeout_ms)
        body = {"groups": [group_id], "include_authorized_operations": False}
        resp = admin._call(node, DESCRIBE_GROUPS, body, timeout_ms)
        for g in resp["groups"]:
            check_item(g["error_code"], None, f"describe group {group_id!r}")
            members = []
            for m in g["members"]:
                raw = m.get("member_assignment") or b""
                assignment: dict[str, tuple[int, ...]] = {}
                if raw and g["protocol_type"] == "consumer":
                    try:
                        assignment = dict(decode_assignment(raw).partitions)
                    except Exception:  # a non-standard assignment payload
                        assignment = {}
                members.append(
                    MemberDescription(
                        m["member_id"], m.get("group_instance_id"), m["client_id"],
                        m["client_host"], assignment,
                    )
                )  # fmt: skip
            out[g["group_id"]] = GroupDescription(
                g["group_id"], g["group_state"], g["protocol_type"], g["protocol_data"],
                tuple(members),
            )  # fmt: skip
    return out


def delete_groups(admin: AdminPlumbing, group_ids: Iterable[str], timeout_ms: int) -> None:
    for group_id in group_ids:
        node = admin._coordinator(group_id, timeout_ms)
        resp = admin._call(node, DELETE_GROUPS, {"groups_names": [group_id]}, timeout_ms)
        for r in resp["results"]:
            check_item(r["error_code"], None, f"delete group {r['group_id']!r}")
