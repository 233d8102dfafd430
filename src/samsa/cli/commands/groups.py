"""``samsa groups list|describe|reset-offsets|delete|delete-offsets``: kafka-consumer-groups.

Operators need the same view ``kafka-consumer-groups.sh`` gives them: which
groups exist and in which state, who is a member and what it owns, and how far
behind each partition is.  Everything goes through the Samsa ``Admin`` client
over the wire (never the broker's internals), so the command works the same
against Samsa and against Apache Kafka.

Errors a user can act on (broker unreachable, unknown group, a group that
still has members) print one line and exit 2; no traceback.  Offset resets
live in groups_reset.py.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from samsa.cli.action_table import Action, add_command
from samsa.cli.actions.groups_reset import RESET_ACTION, resolve_partitions
from samsa.cli.common import (
    CliError,
    console,
    open_admin,
    print_json,
    print_table,
)
from samsa.client.admin import LATEST, Admin, GroupDescription
from samsa.client.admin.families.consumer_groups import ConsumerGroupDescription
from samsa.client.metadata import TopicPartition
from samsa.errors import SamsaError


def add_parser(sub: Any) -> None:
    add_command(
        sub,
        "groups",
        "list, describe, reset, delete consumer groups",
        "example:\n  samsa groups describe my-group",
        (
            Action(
                "list", "list every group", "samsa groups list --output json", run_list, output=True
            ),
            Action(
                "describe",
                "members, assignment, committed offsets and lag of a group",
                "samsa groups describe my-group",
                run_describe,
                lambda a: a.add_argument("group", metavar="GROUP", help="the group id"),
                output=True,
            ),
            RESET_ACTION,
            Action(
                "delete",
                "delete groups without members",
                "samsa groups delete old-group",
                run_delete,
                lambda a: a.add_argument("groups", metavar="GROUP", nargs="+"),
            ),
            Action(
                "delete-offsets",
                "delete a group's committed offsets of topics it no longer reads",
                "samsa groups delete-offsets --group my-group --topic old-topic",
                run_delete_offsets,
                _delete_offsets_arguments,
            ),
        ),
    )


def _delete_offsets_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument("--group", required=True, metavar="GROUP")
    a.add_argument(
        "--topic", action="append", required=True, metavar="TOPIC[:P,P]", help="repeatable"
    )


def run_list(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        groups = sorted(admin.list_groups(timeout=args.timeout), key=lambda g: g.group_id)
    if args.output == "json":
        print_json(
            [
                {
                    "group": g.group_id,
                    "state": g.state,
                    "protocol_type": g.protocol_type,
                    "type": g.group_type or None,
                }
                for g in groups
            ]
        )
        return 0
    rows = [
        (g.group_id, g.group_type or "-", g.state or "-", g.protocol_type or "-") for g in groups
    ]
    print_table(console(), ("GROUP", "TYPE", "STATE", "PROTOCOL-TYPE"), rows)
    return 0


def run_describe(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        print_describe(admin, args.group, args.timeout, args.output)
    return 0


def run_delete(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        admin.delete_groups(args.groups, timeout=args.timeout)
    for group in args.groups:
        print(f"Deleted group {group}.")
    return 0


def run_delete_offsets(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        partitions = resolve_partitions(admin, args.topic, args.timeout)
        admin.delete_consumer_group_offsets(args.group, partitions, timeout=args.timeout)
    print(f"Deleted offsets of group {args.group} for {len(partitions)} partitions.")
    return 0


@dataclass(frozen=True, slots=True)
class PartitionLag:
    tp: TopicPartition
    committed: int | None
    log_end: int | None
    member_id: str | None

    @property
    def lag(self) -> int | None:
        # As kafka-consumer-groups.sh: no lag without both ends known.
        if self.log_end is None or self.committed is None:
            return None
        return max(self.log_end - self.committed, 0)


def print_describe(admin: Admin, group: str, timeout: float, output: str) -> None:
    desc = admin.describe_groups([group], timeout=timeout).get(group)
    committed = admin.list_consumer_group_offsets(group, timeout=timeout)
    if desc is None or (desc.state == "Dead" and not desc.members and not committed):
        raise CliError(f"group {group!r} does not exist")
    lags = partition_lags(admin, desc, {tp: o.offset for tp, o in committed.items()}, timeout)
    members = sorted(desc.members, key=lambda m: m.member_id)
    modern = consumer_group(admin, desc, timeout)
    if modern is not None:
        print_consumer_group(modern, lags, output)
        return
    if output == "json":
        print_json(
            {
                "group": desc.group_id,
                "state": desc.state,
                "protocol_type": desc.protocol_type,
                "assignor": desc.protocol,
                "members": [
                    {
                        "member_id": m.member_id,
                        "group_instance_id": m.group_instance_id,
                        "client_id": m.client_id,
                        "host": m.client_host,
                        "assignment": {t: list(ps) for t, ps in sorted(m.assignment.items())},
                    }
                    for m in members
                ],
                "partitions": lags_json(lags),
            }
        )
        return
    con = console()
    con.print(
        f"GROUP {desc.group_id}  STATE {desc.state}  PROTOCOL-TYPE {desc.protocol_type or '-'}"
        f"  ASSIGNOR {desc.protocol or '-'}  MEMBERS {len(desc.members)}\n"
    )
    print_table(
        con,
        ("MEMBER-ID", "INSTANCE-ID", "CLIENT-ID", "HOST", "ASSIGNMENT"),
        [
            (
                m.member_id,
                m.group_instance_id,
                m.client_id,
                m.client_host,
                fmt_assignment(m.assignment),
            )
            for m in members
        ],
    )
    con.print()
    print_lags(con, lags)


def consumer_group(
    admin: Admin, desc: GroupDescription, timeout: float
) -> ConsumerGroupDescription | None:
    """The KIP-848 view of a ``consumer``-protocol group, when the broker has one."""
    if desc.protocol_type != "consumer":
        return None
    try:
        return admin.describe_consumer_groups([desc.group_id], timeout=timeout).get(desc.group_id)
    except SamsaError:
        return None  # a broker without ConsumerGroupDescribe: the classic view will do


def print_consumer_group(
    group: ConsumerGroupDescription, lags: list[PartitionLag], output: str
) -> None:
    """Type, epochs and target assignment of a KIP-848 group, then its partitions' lag."""
    members = sorted(group.members, key=lambda m: m.member_id)
    if output == "json":
        print_json(
            {
                "group": group.group_id,
                "type": "consumer",
                "state": group.state,
                "group_epoch": group.group_epoch,
                "assignment_epoch": group.assignment_epoch,
                "assignor": group.assignor,
                "members": [
                    {
                        "member_id": m.member_id,
                        "group_instance_id": m.instance_id,
                        "member_epoch": m.member_epoch,
                        "client_id": m.client_id,
                        "host": m.client_host,
                        "assignment": {t: list(ps) for t, ps in sorted(m.assignment.items())},
                        "target_assignment": {
                            t: list(ps) for t, ps in sorted(m.target_assignment.items())
                        },
                    }
                    for m in members
                ],
                "partitions": lags_json(lags),
            }
        )
        return
    con = console()
    con.print(
        f"GROUP {group.group_id}  TYPE consumer  STATE {group.state}"
        f"  GROUP-EPOCH {group.group_epoch}  ASSIGNMENT-EPOCH {group.assignment_epoch}"
        f"  ASSIGNOR {group.assignor or '-'}  MEMBERS {len(members)}\n"
    )
    print_table(
        con,
        ("MEMBER-ID", "INSTANCE-ID", "EPOCH", "CLIENT-ID", "HOST", "ASSIGNMENT", "TARGET"),
        [
            (
                m.member_id,
                m.instance_id,
                m.member_epoch,
                m.client_id,
                m.client_host,
                fmt_assignment(m.assignment),
                fmt_assignment(m.target_assignment),
            )
            for m in members
        ],
    )
    con.print()
    print_lags(con, lags)


def partition_lags(
    admin: Admin, desc: GroupDescription, committed: dict[TopicPartition, int], timeout: float
) -> list[PartitionLag]:
    """Every partition the group owns or has committed, with its log end and lag."""
    owner: dict[TopicPartition, str] = {}
    for m in desc.members:
        for topic, parts in m.assignment.items():
            for p in parts:
                owner[TopicPartition(topic, p)] = m.member_id
    wanted = sorted(set(owner) | set(committed))
    ends: dict[TopicPartition, int] = {}
    if wanted:
        try:
            found = admin.list_offsets({tp: LATEST for tp in wanted}, timeout=timeout)
            ends = {tp: offset for tp, (offset, _ts) in found.items()}
        except SamsaError:
            # A deleted topic still has commits: show them without a log end.
            for tp in wanted:
                try:
                    found = admin.list_offsets({tp: LATEST}, timeout=timeout)
                    ends.update({k: off for k, (off, _ts) in found.items()})
                except SamsaError:
                    continue
    return [PartitionLag(tp, committed.get(tp), ends.get(tp), owner.get(tp)) for tp in wanted]


# -- formatting ------------------------------------------------------------------------


def lags_json(lags: list[PartitionLag]) -> list[dict[str, Any]]:
    return [
        {
            "topic": p.tp.topic,
            "partition": p.tp.partition,
            "committed_offset": p.committed,
            "log_end_offset": p.log_end,
            "lag": p.lag,
            "member_id": p.member_id,
        }
        for p in lags
    ]


def print_lags(con: Any, lags: list[PartitionLag]) -> None:
    print_table(
        con,
        ("TOPIC", "PARTITION", "COMMITTED-OFFSET", "LOG-END-OFFSET", "LAG", "MEMBER-ID"),
        [(p.tp.topic, p.tp.partition, p.committed, p.log_end, p.lag, p.member_id) for p in lags],
    )


def fmt_assignment(assignment: dict[str, tuple[int, ...]]) -> str:
    if not assignment:
        return "-"
    return " ".join(
        f"{topic}:{','.join(str(p) for p in sorted(parts))}"
        for topic, parts in sorted(assignment.items())
    )
