"""``samsa cluster``: the operator's view and levers of a multi-node cluster.

One command group for what Kafka spreads over three tools:
``kafka-metadata-quorum`` (``status``, ``add-voter``, ``remove-voter``),
``kafka-leader-election`` (``elect-leaders``) and
``kafka-reassign-partitions`` (``reassign``).  Everything goes through
``samsa.client.Admin`` over the wire, so the commands work the same against
Samsa and against Apache Kafka, from any broker address (brokers forward what
only the active controller answers).

Each action lives in its own module: cluster_status.py, cluster_voters.py,
cluster_reassign.py; elections are small enough to live here.
"""

from __future__ import annotations

import argparse
from typing import Any

from samsa.cli.action_table import Action, add_command
from samsa.cli.actions.cluster_reassign import run_reassign
from samsa.cli.actions.cluster_status import run_status
from samsa.cli.actions.cluster_voters import run_add_voter, run_remove_voter
from samsa.cli.common import (
    CliError,
    console,
    open_admin,
    print_json,
    print_table,
)
from samsa.client.admin import Admin, ElectionType
from samsa.client.metadata import TopicPartition
from samsa.errors import ErrorCode, KafkaError


def add_parser(sub: Any) -> None:
    add_command(
        sub,
        "cluster",
        "quorum and broker status, voters, leader elections, replica reassignment",
        "examples:\n  samsa cluster status --bootstrap-server 127.0.0.1:9092\n"
        "  samsa cluster reassign --plan plan.json --execute --wait",
        (
            Action(
                "status",
                "the metadata quorum, the brokers and partition health",
                "samsa cluster status --output json",
                run_status,
                output=True,
            ),
            Action(
                "add-voter",
                "turn a controller that follows the quorum as an observer into a voter (KIP-853)",
                "samsa cluster add-voter --node-config node2/server.properties\n"
                "  samsa cluster add-voter --node-id 2 "
                "--directory-id 0b7e6c1a-6f5e-4c3b-9a1d-2e8f4c6a1b3d "
                "--endpoint CONTROLLER://10.0.0.2:9093",
                run_add_voter,
                _add_voter_arguments,
                timeout=30.0,
            ),
            Action(
                "remove-voter",
                "take a controller out of the voters (it stays an observer while it runs)",
                "samsa cluster remove-voter --node-id 2",
                run_remove_voter,
                _remove_voter_arguments,
                timeout=30.0,
            ),
            Action(
                "elect-leaders",
                "move leadership back to preferred replicas, or elect any replica where none leads",
                "samsa cluster elect-leaders --election-type preferred --all-topic-partitions",
                run_elect_leaders,
                _elect_leaders_arguments,
                output=True,
            ),
            Action(
                "reassign",
                "move partition replicas with Kafka's reassignment JSON (dry run unless --execute)",
                "samsa cluster reassign --plan plan.json --execute --wait --timeout 300\n"
                '  plan.json: {"version":1,"partitions":[{"topic":"t","partition":0,'
                '"replicas":[1,2,3]}]}',
                run_reassign,
                _reassign_arguments,
                output=True,
            ),
        ),
        description="The operator's view and levers of a multi-node cluster.",
    )


def _add_voter_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument(
        "--node-config",
        metavar="FILE",
        help="the new controller's server.properties: node.id, its data dir's directory.id "
        "and its controller listeners are read from it",
    )
    a.add_argument("--node-id", type=int, metavar="ID", help="the controller's node.id")
    a.add_argument(
        "--directory-id",
        metavar="UUID",
        help="directory.id of its metadata log dir (UUID, or the base64 of meta.properties)",
    )
    a.add_argument(
        "--endpoint",
        action="append",
        default=[],
        metavar="NAME://HOST:PORT",
        help="a controller listener of the node (repeatable)",
    )


def _remove_voter_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument("--node-id", type=int, required=True, metavar="ID")
    a.add_argument(
        "--directory-id",
        metavar="UUID",
        help="the voter's directory id (default: as DescribeQuorum reports it)",
    )


def _elect_leaders_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument(
        "--election-type",
        required=True,
        type=str.lower,
        choices=("preferred", "unclean"),
        help="preferred: the first replica, if alive and in sync; unclean: any live replica "
        "of a partition without a leader (may lose records)",
    )
    target = a.add_mutually_exclusive_group(required=True)
    target.add_argument(
        "--topic", metavar="TOPIC", help="a topic (with --partition: one partition)"
    )
    target.add_argument(
        "--all-topic-partitions", action="store_true", help="every partition of every topic"
    )
    a.add_argument(
        "--partition", type=int, action="append", default=[], metavar="P", help="repeatable"
    )


def _reassign_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument("--plan", metavar="FILE", help="Kafka's reassignment JSON")
    mode = a.add_mutually_exclusive_group()
    mode.add_argument("--execute", action="store_true", help="start the reassignment")
    mode.add_argument(
        "--cancel", action="store_true", help="stop the reassignments of the plan's partitions"
    )
    mode.add_argument("--list", action="store_true", help="show reassignments in progress")
    a.add_argument(
        "--wait", action="store_true", help="follow it until done (bounded by --timeout)"
    )


def run_elect_leaders(args: argparse.Namespace) -> int:
    election = ElectionType[args.election_type.upper()]
    if args.partition and not args.topic:
        raise CliError("--partition needs --topic")
    with open_admin(args) as admin:
        partitions: list[TopicPartition] | None = None
        if args.topic:
            partitions = topic_partitions(admin, args.topic, args.partition, args.timeout)
        results = admin.elect_leaders(election, partitions, timeout=args.timeout)
    rows: list[dict[str, Any]] = []
    for tp, error in sorted(results.items()):
        outcome = "ELECTED" if error is None else error.code.name
        rows.append(
            {
                "topic": tp.topic,
                "partition": tp.partition,
                "result": outcome,
                "error_message": None if error is None else str(error),
            }
        )
    failed = [r for r in rows if r["result"] not in ("ELECTED", ErrorCode.ELECTION_NOT_NEEDED.name)]
    if args.output == "json":
        print_json(rows)
    elif not rows:
        print("No partition needed an election.")
    else:
        print_table(
            console(),
            ("TOPIC", "PARTITION", "RESULT", "DETAIL"),
            [(r["topic"], r["partition"], r["result"], _detail(election, r)) for r in rows],
        )
    if failed:
        first = failed[0]
        raise CliError(
            f"{len(failed)} of {len(rows)} elections failed; "
            f"{first['topic']}-{first['partition']}: {first['error_message']}"
        )
    return 0


def _detail(election: ElectionType, row: dict[str, Any]) -> str | None:
    if row["result"] == "ELECTED":
        return "leader elected"
    if row["result"] == ErrorCode.ELECTION_NOT_NEEDED.name:
        if election is ElectionType.PREFERRED:
            return "the preferred replica already leads"
        return "the partition has a leader"
    message: str | None = row["error_message"]
    return message


def topic_partitions(
    admin: Admin, topic: str, partitions: list[int], timeout: float
) -> list[TopicPartition]:
    try:
        described = admin.describe_topics([topic], timeout=timeout)[topic]
    except KafkaError as exc:
        if exc.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
            raise CliError(f"unknown topic {topic!r}") from None
        raise
    existing = {p.partition for p in described.partitions}
    for p in partitions:
        if p not in existing:
            raise CliError(f"unknown partition {topic}-{p}: {topic} has {len(existing)} partitions")
    return [TopicPartition(topic, p) for p in (partitions or sorted(existing))]
