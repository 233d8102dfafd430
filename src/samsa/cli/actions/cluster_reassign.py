"""``samsa cluster reassign``: move partition replicas, as kafka-reassign-partitions.

The plan is Kafka's reassignment JSON, so plans written for Kafka's tool work
unchanged::

    {"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [2, 3, 4]}]}

A plan's ``log_dirs`` move replicas between their broker's log dirs too
(cluster_log_dir_moves).

Without ``--execute`` nothing changes: the current and proposed replicas are
shown side by side (a dry run), so a typo in a plan costs nothing.
``--execute`` starts the reassignment (AlterPartitionReassignments) and prints
the current assignment as a plan that rolls it back; ``--wait`` then follows
it (ListPartitionReassignments and Metadata) until every partition has exactly
its target replicas, or ``--timeout`` runs out.  ``--cancel`` stops the
reassignments of the plan's partitions (replicas are ignored), putting them
back on their original replicas; ``--list`` shows what is moving now.

The controller checks each partition alone and its refusal (a broker that is
not registered: INVALID_REPLICA_ASSIGNMENT) is shown as Kafka's error, one
line, exit status 2.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from samsa.cli.actions.cluster_log_dir_moves import (
    Moves,
    moves_pending,
    parse_log_dirs,
    start_moves,
)
from samsa.cli.common import CliError, console, open_admin, print_json, print_table
from samsa.client.admin import Admin, PartitionReassignment
from samsa.client.metadata import TopicPartition
from samsa.errors import ErrorCode, KafkaError

Plan = dict[TopicPartition, list[int]]
POLL_S = 0.5


def load_plan(path: str) -> tuple[Plan, Moves]:
    """Kafka's reassignment JSON -> target replicas per partition, and the log
    dirs it names; any mistake is a CliError naming the file and the place."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise CliError(f"cannot read plan {path}: {exc.strerror}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"malformed plan {path}: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None

    def bad(where: str, why: str) -> CliError:
        return CliError(f"malformed plan {path}: {where} {why}")

    if not isinstance(doc, dict):
        raise bad("the document", 'must be an object like {"version": 1, "partitions": [...]}')
    if doc.get("version", 1) != 1:
        raise bad("version", f"must be 1, not {doc.get('version')!r}")
    entries = doc.get("partitions")
    if not isinstance(entries, list) or not entries:
        raise bad('"partitions"', "must be a non-empty list")
    plan: Plan = {}
    moves: Moves = {}
    for i, entry in enumerate(entries):
        where = f"partitions[{i}]"
        if not isinstance(entry, dict):
            raise bad(where, "must be an object with topic, partition and replicas")
        topic, partition, replicas = (
            entry.get("topic"),
            entry.get("partition"),
            entry.get("replicas"),
        )
        if not isinstance(topic, str) or not topic:
            raise bad(f"{where}.topic", "must be a topic name")
        if not isinstance(partition, int) or isinstance(partition, bool) or partition < 0:
            raise bad(f"{where}.partition", "must be a partition number (0 or more)")
        if not isinstance(replicas, list) or not replicas:
            raise bad(f"{where}.replicas", "must be a non-empty list of broker ids")
        if not all(_is_int(r) and r >= 0 for r in replicas):
            raise bad(f"{where}.replicas", "must hold broker ids (0 or more)")
        if len(set(replicas)) != len(replicas):
            raise bad(f"{where}.replicas", f"lists a broker twice: {replicas}")
        tp = TopicPartition(topic, partition)
        if tp in plan:
            raise bad(where, f"names {topic}-{partition} a second time")
        plan[tp] = list(replicas)
        for broker, log_dir in parse_log_dirs(entry, replicas, where, bad).items():
            moves[(tp, broker)] = log_dir
    return plan, moves


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def as_kafka_plan(assignment: dict[TopicPartition, list[int]]) -> dict[str, Any]:
    return {
        "version": 1,
        "partitions": [
            {"topic": tp.topic, "partition": tp.partition, "replicas": replicas}
            for tp, replicas in sorted(assignment.items())
        ],
    }


def current_assignment(admin: Admin, plan: Plan, timeout: float) -> dict[TopicPartition, list[int]]:
    """The plan's partitions' replicas now; an unknown topic or partition is a CliError."""
    topics = sorted({tp.topic for tp in plan})
    existing = admin.list_topics(timeout=timeout, include_internal=True)
    missing = [t for t in topics if t not in existing]
    if missing:
        raise CliError(f"unknown topic {missing[0]!r}")
    described = admin.describe_topics(topics, timeout=timeout)
    out: dict[TopicPartition, list[int]] = {}
    for tp in plan:
        partitions = {p.partition: p for p in described[tp.topic].partitions}
        if tp.partition not in partitions:
            raise CliError(
                f"unknown partition {tp.topic}-{tp.partition}: {tp.topic} has "
                f"{len(partitions)} partitions"
            )
        out[tp] = list(partitions[tp.partition].replicas)
    return out


def run_reassign(args: argparse.Namespace) -> int:
    if args.list:
        if args.plan or args.wait:
            raise CliError("--list takes neither --plan nor --wait")
        return list_ongoing(args)
    if not args.plan:
        raise CliError("reassign needs --plan FILE (or --list)")
    if args.wait and not (args.execute or args.cancel):
        raise CliError("--wait follows a reassignment: give --execute or --cancel too")
    plan, moves = load_plan(args.plan)
    with open_admin(args) as admin:
        current = current_assignment(admin, plan, args.timeout)
        if args.cancel:
            return cancel(admin, args, plan)
        if not args.execute:
            return dry_run(admin, args, plan, current, moves)
        execute(admin, args, plan, current)
        for line in start_moves(admin, moves, args.timeout):
            if args.output != "json":
                print(line)
        if args.wait:
            return wait(admin, args, {tp: list(r) for tp, r in plan.items()}, moves)
    return 0


def dry_run(
    admin: Admin,
    args: argparse.Namespace,
    plan: Plan,
    current: dict[TopicPartition, list[int]],
    moves: Moves,
) -> int:
    live = {b.node_id for b in admin.describe_cluster(timeout=args.timeout).brokers}
    rows = []
    for tp, target in sorted(plan.items()):
        now = current[tp]
        rows.append(
            {
                "topic": tp.topic,
                "partition": tp.partition,
                "current": now,
                "proposed": target,
                "adding": [r for r in target if r not in now],
                "removing": [r for r in now if r not in target],
            }
        )
    unknown = sorted({r for target in plan.values() for r in target} - live)
    dirs = [
        {"topic": tp.topic, "partition": tp.partition, "broker": broker, "log_dir": log_dir}
        for (tp, broker), log_dir in sorted(moves.items())
    ]
    if args.output == "json":
        print_json(
            {"executed": False, "partitions": rows, "not_live_brokers": unknown, "log_dirs": dirs}
        )
        return 0
    con = console()
    print_table(
        con,
        ("TOPIC", "PARTITION", "CURRENT", "PROPOSED", "ADDING", "REMOVING"),
        [
            (
                r["topic"],
                r["partition"],
                _ids(r["current"]),
                _ids(r["proposed"]),
                _ids(r["adding"]),
                _ids(r["removing"]),
            )
            for r in rows
        ],
    )
    for d in dirs:
        con.print(f"{d['topic']}-{d['partition']} on broker {d['broker']} goes to {d['log_dir']}")
    if unknown:
        con.print(
            f"Note: broker(s) {_ids(unknown)} are not live brokers now; the controller will refuse them if they are not registered."
        )
    con.print("Dry run: nothing changed. Give --execute to start this reassignment.")
    return 0


def execute(
    admin: Admin, args: argparse.Namespace, plan: Plan, current: dict[TopicPartition, list[int]]
) -> None:
    targets: dict[TopicPartition, list[int] | None] = {tp: list(r) for tp, r in plan.items()}
    results = admin.alter_partition_reassignments(targets, timeout=args.timeout)
    started = sorted(tp for tp in plan if results.get(tp) is None)
    failed = [(tp, results[tp]) for tp in sorted(plan) if results.get(tp) is not None]
    if args.output != "json":
        print(
            f"Rollback plan (the current assignment): {json.dumps(as_kafka_plan({tp: current[tp] for tp in plan}))}"
        )
        for tp in started:
            print(
                f"Started reassignment of {tp.topic}-{tp.partition}: {_ids(current[tp])} -> {_ids(plan[tp])}"
            )
    elif not args.wait:
        print_json(
            {
                "executed": True,
                "rollback": as_kafka_plan({tp: current[tp] for tp in plan}),
                "partitions": [
                    {
                        "topic": tp.topic,
                        "partition": tp.partition,
                        "error": str(results.get(tp) or "") or None,
                    }
                    for tp in sorted(plan)
                ],
            }
        )
    if failed:
        more = f" (and {len(failed) - 1} more partitions refused)" if len(failed) > 1 else ""
        raise CliError(f"{failed[0][1]}{more}")


def cancel(admin: Admin, args: argparse.Namespace, plan: Plan) -> int:
    results = admin.alter_partition_reassignments(dict.fromkeys(plan), timeout=args.timeout)
    lines, errors = [], []
    for tp in sorted(plan):
        error = results.get(tp)
        name = f"{tp.topic}-{tp.partition}"
        if error is None:
            lines.append(f"Cancelled the reassignment of {name}.")
        elif isinstance(error, KafkaError) and error.code == ErrorCode.NO_REASSIGNMENT_IN_PROGRESS:
            lines.append(f"No reassignment of {name} is in progress.")
        else:
            errors.append(error)
    if args.output == "json" and not args.wait:
        print_json(
            [
                {
                    "topic": tp.topic,
                    "partition": tp.partition,
                    "result": str(results.get(tp) or "CANCELLED"),
                }
                for tp in sorted(plan)
            ]
        )
    elif args.output != "json":
        for line in lines:
            print(line)
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise CliError(f"{errors[0]}{more}")
    if args.wait:
        return wait(admin, args, dict.fromkeys(plan))
    return 0


def wait(
    admin: Admin,
    args: argparse.Namespace,
    targets: dict[TopicPartition, list[int] | None],
    moves: Moves | None = None,
) -> int:
    """Follow the reassignments until each partition has its target replicas (or, after a
    cancel, is no longer reassigning) and each replica of ``moves`` is in its log
    dir; progress lines as they change."""
    deadline = time.monotonic() + args.timeout
    shown: dict[TopicPartition, str] = {}
    shown_moves: dict[tuple[TopicPartition, int], str] = {}
    topics = sorted({tp.topic for tp in targets})
    while True:
        ongoing = admin.list_partition_reassignments(list(targets), timeout=args.timeout)
        described = admin.describe_topics(topics, timeout=args.timeout)
        pending: dict[TopicPartition, str] = {}
        for tp, target in targets.items():
            part = next(p for p in described[tp.topic].partitions if p.partition == tp.partition)
            moving = ongoing.get(tp)
            done = moving is None and (target is None or list(part.replicas) == target)
            state = _progress(tp, part.replicas, part.isr, moving, done)
            if not done:
                pending[tp] = state
            if args.output != "json" and shown.get(tp) != state:
                print(state, flush=True)
                shown[tp] = state
        if moves and not pending:
            for key, state in moves_pending(admin, moves, args.timeout).items():
                pending[key[0]] = state
                if args.output != "json" and shown_moves.get(key) != state:
                    print(state, flush=True)
                    shown_moves[key] = state
        if not pending:
            if args.output == "json":
                print_json(
                    {
                        "complete": True,
                        "partitions": [
                            {"topic": tp.topic, "partition": tp.partition} for tp in sorted(targets)
                        ],
                    }
                )
            else:
                print(f"Reassignment of {len(targets)} partition(s) complete.")
            return 0
        if time.monotonic() + POLL_S > deadline:
            first = pending[min(pending)]
            raise CliError(f"not complete after {args.timeout:g} s: {first}")
        time.sleep(POLL_S)


def _progress(
    tp: TopicPartition, replicas: tuple[int, ...], isr: tuple[int, ...],
    moving: PartitionReassignment | None, done: bool,
) -> str:  # fmt: skip
    text = f"{tp.topic}-{tp.partition}: replicas {_ids(replicas)} isr {_ids(isr)}"
    if moving is not None:
        text += f" adding {_ids(moving.adding_replicas)} removing {_ids(moving.removing_replicas)}"
    return text + (" done" if done else "")


def list_ongoing(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        ongoing = admin.list_partition_reassignments(timeout=args.timeout)
    rows = [
        {
            "topic": tp.topic,
            "partition": tp.partition,
            "replicas": list(r.replicas),
            "adding": list(r.adding_replicas),
            "removing": list(r.removing_replicas),
        }
        for tp, r in sorted(ongoing.items())
    ]
    if args.output == "json":
        print_json(rows)
    elif not rows:
        print("No partition reassignments in progress.")
    else:
        print_table(
            console(),
            ("TOPIC", "PARTITION", "REPLICAS", "ADDING", "REMOVING"),
            [
                (
                    r["topic"],
                    r["partition"],
                    _ids(r["replicas"]),
                    _ids(r["adding"]),
                    _ids(r["removing"]),
                )
                for r in rows
            ],
        )
    return 0


def _ids(ids: Any) -> str:
    return ",".join(str(i) for i in ids) or "-"
