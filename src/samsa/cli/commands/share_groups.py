"""``samsa share-groups list|describe|reset-offsets|delete-offsets``: kafka-share-groups.

A share group's progress per partition is its start offset (every record below
it is acknowledged or archived); ``describe`` shows it beside the log end
offset, whose difference bounds what is still to be delivered, and each
member's partitions (several members share a partition).  Everything goes
through the ``Admin`` client over the wire.  Resetting is refused while the
group has members, as Kafka does; without ``--execute`` it only prints the plan.
"""

from __future__ import annotations

import argparse
from typing import Any

from samsa.cli.action_table import Action, add_command
from samsa.cli.actions.groups_reset import resolve_partitions
from samsa.cli.commands.groups import fmt_assignment
from samsa.cli.common import (
    CliError,
    console,
    open_admin,
    print_json,
    print_table,
)
from samsa.client.admin import EARLIEST, LATEST


def add_parser(sub: Any) -> None:
    add_command(
        sub,
        "share-groups",
        "list, describe, reset share groups (KIP-932)",
        "example:\n  samsa share-groups describe my-share-group",
        (
            Action("list", "list share groups", "samsa share-groups list", run_list, output=True),
            Action(
                "describe",
                "members, assignment and start offsets of a share group",
                "samsa share-groups describe my-share-group",
                run_describe,
                lambda a: a.add_argument("group", metavar="GROUP"),
                output=True,
            ),
            Action(
                "reset-offsets",
                "plan (default) or apply (--execute) new start offsets of a share group "
                "without members",
                "samsa share-groups reset-offsets --group g --topic orders --to-earliest --execute",
                run_reset,
                _reset_arguments,
            ),
            Action(
                "delete-offsets",
                "forget a share group's state of topics (the group must have no members)",
                "samsa share-groups delete-offsets --group g --topic old-topic",
                run_delete_offsets,
                _delete_offsets_arguments,
            ),
        ),
    )


def _reset_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument("--group", required=True, metavar="GROUP")
    a.add_argument(
        "--topic", action="append", required=True, metavar="TOPIC[:P,P]", help="repeatable"
    )
    target = a.add_mutually_exclusive_group(required=True)
    target.add_argument("--to-earliest", action="store_true")
    target.add_argument("--to-latest", action="store_true")
    target.add_argument("--to-offset", type=int, metavar="N")
    a.add_argument("--execute", action="store_true", help="apply the plan")


def _delete_offsets_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument("--group", required=True, metavar="GROUP")
    a.add_argument("--topic", action="append", required=True, metavar="TOPIC")


def run_list(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        groups = sorted(
            (g for g in admin.list_groups(timeout=args.timeout) if g.group_type == "share"),
            key=lambda g: g.group_id,
        )
    if args.output == "json":
        print_json([{"group": g.group_id, "state": g.state} for g in groups])
        return 0
    print_table(console(), ("GROUP", "STATE"), [(g.group_id, g.state or "-") for g in groups])
    return 0


def run_describe(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        desc = admin.describe_share_group(args.group, timeout=args.timeout)
        starts = admin.list_share_group_offsets(args.group, timeout=args.timeout)
        ends = admin.list_offsets(dict.fromkeys(starts, LATEST), timeout=args.timeout)
    if desc is None and not starts:
        raise CliError(f"share group {args.group!r} does not exist")
    rows = []
    for tp in sorted(starts, key=lambda t: (t.topic, t.partition)):
        start, end = starts[tp], ends.get(tp, (None, None))[0]
        lag = None if end is None or start < 0 else max(end - start, 0)
        rows.append((tp.topic, tp.partition, start, end, lag))
    members = [] if desc is None else sorted(desc.members, key=lambda m: m.member_id)
    if args.output == "json":
        print_json(
            {
                "group": args.group,
                "state": "Dead" if desc is None else desc.state,
                "group_epoch": None if desc is None else desc.group_epoch,
                "members": [
                    {
                        "member_id": m.member_id,
                        "member_epoch": m.member_epoch,
                        "client_id": m.client_id,
                        "host": m.client_host,
                        "assignment": {t: list(ps) for t, ps in sorted(m.assignment.items())},
                    }
                    for m in members
                ],
                "partitions": [
                    {"topic": t, "partition": p, "start_offset": s, "log_end_offset": e, "lag": lag}
                    for t, p, s, e, lag in rows
                ],
            }
        )
        return 0
    con = console()
    if desc is not None:
        con.print(
            f"GROUP {desc.group_id}  STATE {desc.state}  GROUP-EPOCH {desc.group_epoch}"
            f"  ASSIGNOR {desc.assignor}  MEMBERS {len(members)}\n"
        )
        print_table(
            con,
            ("MEMBER-ID", "MEMBER-EPOCH", "CLIENT-ID", "HOST", "ASSIGNMENT"),
            [
                (
                    m.member_id,
                    m.member_epoch,
                    m.client_id,
                    m.client_host,
                    fmt_assignment(m.assignment),
                )
                for m in members
            ],
        )
        con.print()
    print_table(con, ("TOPIC", "PARTITION", "START-OFFSET", "LOG-END-OFFSET", "LAG"), rows)
    return 0


def run_reset(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        partitions = resolve_partitions(admin, args.topic, args.timeout)
        if args.to_offset is not None:
            if args.to_offset < 0:
                raise CliError("--to-offset must not be negative")
            plan = dict.fromkeys(partitions, args.to_offset)
        else:
            spec = EARLIEST if args.to_earliest else LATEST
            found = admin.list_offsets(dict.fromkeys(partitions, spec), timeout=args.timeout)
            plan = {tp: found[tp][0] for tp in partitions}
        if args.execute:
            desc = admin.describe_share_group(args.group, timeout=args.timeout)
            if desc is not None and desc.members:
                raise CliError(
                    f"share group {args.group!r} has {len(desc.members)} members;"
                    " stop them before resetting its offsets"
                )
            admin.alter_share_group_offsets(args.group, plan, timeout=args.timeout)
    rows = [(tp.topic, tp.partition, offset) for tp, offset in sorted(plan.items())]
    print_table(console(), ("TOPIC", "PARTITION", "NEW-START-OFFSET"), rows)
    if not args.execute:
        print("Dry run: nothing changed (add --execute to apply).")
    return 0


def run_delete_offsets(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        admin.delete_share_group_offsets(args.group, args.topic, timeout=args.timeout)
    print(f"Deleted the state of share group {args.group} for {', '.join(args.topic)}.")
    return 0
