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

from samsa.cli.common import (
    CliError,
    add_connection_args,
    add_output_arg,
    add_subcommand,
    console,
    guarded,
    open_admin,
    print_json,
    print_table,
)
from samsa.cli.groups_reset import add_reset_parser, resolve_partitions
from samsa.client.admin import LATEST, Admin, GroupDescription
from samsa.client.metadata import TopicPartition
from samsa.errors import SamsaError


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "groups",
        help="list, describe, reset, delete consumer groups",
        epilog="example:\n  samsa groups describe my-group",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="groups_action", required=True, metavar="ACTION")

    a = add_subcommand(actions, "list", "list every group", "samsa groups list --output json")
    add_connection_args(a)
    add_output_arg(a)
    a.set_defaults(run=guarded("groups", run_list))

    a = add_subcommand(
        actions,
        "describe",
        "members, assignment, committed offsets and lag of a group",
        "samsa groups describe my-group",
    )
    a.add_argument("group", metavar="GROUP", help="the group id")
    add_connection_args(a)
    add_output_arg(a)
    a.set_defaults(run=guarded("groups", run_describe))

    add_reset_parser(actions)

    a = add_subcommand(
        actions, "delete", "delete groups without members", "samsa groups delete old-group"
    )
    a.add_argument("groups", metavar="GROUP", nargs="+")
    add_connection_args(a)
    a.set_defaults(run=guarded("groups", run_delete))

    a = add_subcommand(
        actions,
        "delete-offsets",
        "delete a group's committed offsets of topics it no longer reads",
        "samsa groups delete-offsets --group my-group --topic old-topic",
    )
    a.add_argument("--group", required=True, metavar="GROUP")
    a.add_argument(
        "--topic", action="append", required=True, metavar="TOPIC[:P,P]", help="repeatable"
    )
    add_connection_args(a)
    a.set_defaults(run=guarded("groups", run_delete_offsets))


def run_list(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        groups = sorted(admin.list_groups(timeout=args.timeout), key=lambda g: g.group_id)
    if args.output == "json":
        print_json(
            [
                {"group": g.group_id, "state": g.state, "protocol_type": g.protocol_type}
                for g in groups
            ]
        )
        return 0
    rows = [(g.group_id, g.state or "-", g.protocol_type or "-") for g in groups]
    print_table(console(), ("GROUP", "STATE", "PROTOCOL-TYPE"), rows)
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
                "partitions": [
                    {
                        "topic": p.tp.topic,
                        "partition": p.tp.partition,
                        "committed_offset": p.committed,
                        "log_end_offset": p.log_end,
                        "lag": p.lag,
                        "member_id": p.member_id,
                    }
                    for p in lags
                ],
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
    print_table(
        con,
        ("TOPIC", "PARTITION", "COMMITTED-OFFSET", "LOG-END-OFFSET", "LAG", "MEMBER-ID"),
        [(p.tp.topic, p.tp.partition, p.committed, p.log_end, p.lag, p.member_id) for p in lags],
    )


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


def fmt_assignment(assignment: dict[str, tuple[int, ...]]) -> str:
    if not assignment:
        return "-"
    return " ".join(
        f"{topic}:{','.join(str(p) for p in sorted(parts))}"
        for topic, parts in sorted(assignment.items())
    )
