"""``samsa groups reset-offsets``: move a group's committed offsets, as Kafka's tool does.

A reset is planned first and shown as a table (``--dry-run``, the default);
``--execute`` commits the plan.  As in Kafka, the group must have no members:
a live member would commit its own position over the reset moments later, so
a group that is not Empty (or unknown) is refused with one line.  Targets
outside the log are clamped to its start or end, as Kafka does, and the table
says so.  ``--to-datetime`` takes ISO 8601 (``2026-11-25T10:00:00``,
``...Z`` or ``...+01:00``); a time without a zone is UTC.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from samsa.cli.action_table import Action
from samsa.cli.common import (
    CliError,
    console,
    open_admin,
    print_json,
    print_table,
)
from samsa.client.admin import EARLIEST, LATEST, Admin
from samsa.client.metadata import TopicPartition

INACTIVE_STATES = ("Empty", "Dead")


def _reset_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument("--group", required=True, metavar="GROUP")
    scope = a.add_mutually_exclusive_group(required=True)
    scope.add_argument(
        "--topic", action="append", metavar="TOPIC[:P,P]", help="repeatable; all partitions or some"
    )
    scope.add_argument(
        "--all-topics", action="store_true", help="every partition the group has committed"
    )
    target = a.add_mutually_exclusive_group(required=True)
    target.add_argument("--to-earliest", action="store_true")
    target.add_argument("--to-latest", action="store_true")
    target.add_argument("--to-offset", type=int, metavar="N")
    target.add_argument("--to-datetime", metavar="ISO-8601")
    target.add_argument("--shift-by", type=int, metavar="N", help="may be negative")
    mode = a.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="only show the plan (default)")
    mode.add_argument("--execute", action="store_true", help="commit the plan")


def parse_datetime(value: str) -> int:
    """ISO 8601 -> epoch milliseconds (no zone: UTC)."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise CliError(
            f"invalid --to-datetime {value!r}: expected ISO 8601 such as 2026-11-25T10:00:00Z"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def run_reset(args: argparse.Namespace) -> int:
    timestamp = parse_datetime(args.to_datetime) if args.to_datetime is not None else None
    with open_admin(args) as admin:
        check_inactive(admin, args.group, args.timeout)
        committed = {
            tp: o.offset
            for tp, o in admin.list_consumer_group_offsets(args.group, timeout=args.timeout).items()
        }
        if args.all_topics:
            partitions = sorted(committed)
            if not partitions:
                raise CliError(f"group {args.group!r} has no committed offsets to reset")
        else:
            partitions = resolve_partitions(admin, args.topic, args.timeout)
        plan = plan_reset(admin, args, partitions, committed, timestamp)
        if args.execute:
            admin.alter_consumer_group_offsets(
                args.group, {row["tp"]: row["new"] for row in plan}, timeout=args.timeout
            )
    show_plan(args, plan)
    return 0


def check_inactive(admin: Admin, group: str, timeout: float) -> None:
    desc = admin.describe_groups([group], timeout=timeout).get(group)
    if desc is not None and (desc.members or desc.state not in INACTIVE_STATES):
        raise CliError(
            f"group {group!r} is {desc.state} with {len(desc.members)} members: offsets can "
            "only be reset while the group is inactive (stop its consumers first)"
        )


def plan_reset(
    admin: Admin,
    args: argparse.Namespace,
    partitions: list[TopicPartition],
    committed: dict[TopicPartition, int],
    timestamp: int | None,
) -> list[dict[str, Any]]:
    def offsets(spec: int) -> dict[TopicPartition, int]:
        found = admin.list_offsets(dict.fromkeys(partitions, spec), timeout=args.timeout)
        return {tp: offset for tp, (offset, _ts) in found.items()}

    earliest, latest = offsets(EARLIEST), offsets(LATEST)
    by_time = offsets(timestamp) if timestamp is not None else {}
    plan = []
    for tp in partitions:
        low, high, current = earliest[tp], latest[tp], committed.get(tp)
        if args.to_earliest:
            wanted = low
        elif args.to_latest:
            wanted = high
        elif args.to_offset is not None:
            wanted = args.to_offset
        elif timestamp is not None:
            found = by_time.get(tp, -1)
            wanted = high if found < 0 else found  # no record that late: the end
        else:
            if current is None:
                raise CliError(
                    f"--shift-by needs a committed offset; {tp.topic}-{tp.partition} has none"
                )
            wanted = current + args.shift_by
        new = min(max(wanted, low), high)
        plan.append(
            {"tp": tp, "current": current, "new": new, "clamped": new != wanted, "wanted": wanted}
        )
    return plan


def show_plan(args: argparse.Namespace, plan: list[dict[str, Any]]) -> None:
    if args.output == "json":
        print_json(
            {
                "group": args.group,
                "executed": bool(args.execute),
                "partitions": [
                    {
                        "topic": row["tp"].topic,
                        "partition": row["tp"].partition,
                        "current_offset": row["current"],
                        "new_offset": row["new"],
                        "clamped": row["clamped"],
                    }
                    for row in plan
                ],
            }
        )
        return
    con = console()
    print_table(
        con,
        ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET", "NOTE"),
        [
            (
                args.group,
                row["tp"].topic,
                row["tp"].partition,
                row["current"],
                row["new"],
                f"clamped from {row['wanted']}" if row["clamped"] else "",
            )
            for row in plan
        ],
    )
    if not args.execute:
        con.print("(dry run: nothing changed; add --execute to commit these offsets)")


def resolve_partitions(admin: Admin, specs: list[str], timeout: float) -> list[TopicPartition]:
    """``TOPIC`` (all its partitions) or ``TOPIC:0,2`` -> partitions, checked to exist."""
    wanted: dict[str, list[int] | None] = {}
    for spec in specs:
        topic, sep, listed = spec.partition(":")
        if not topic:
            raise CliError(f"malformed --topic {spec!r}: expected TOPIC or TOPIC:P,P")
        try:
            wanted[topic] = [int(p) for p in listed.split(",")] if sep else None
        except ValueError:
            raise CliError(f"malformed --topic {spec!r}: partitions must be numbers") from None
    described = admin.describe_topics(list(wanted), timeout=timeout)
    out: list[TopicPartition] = []
    for topic, parts in wanted.items():
        count = len(described[topic].partitions)
        for p in parts if parts is not None else range(count):
            if not 0 <= p < count:
                raise CliError(f"partition {p} out of range: {topic} has {count} partitions")
            out.append(TopicPartition(topic, p))
    return out


RESET_ACTION = Action(
    "reset-offsets",
    "plan (--dry-run) or apply (--execute) new committed offsets for an inactive group",
    "samsa groups reset-offsets --group my-group --topic orders --to-earliest --execute",
    run_reset,
    _reset_arguments,
    output=True,
)
"""``samsa groups reset-offsets``, a row of the ``groups`` command's table."""
