"""``samsa transactions list|describe|describe-producers``: kafka-transactions.sh.

An operator looking at a stuck read_committed consumer needs to see which
transactions are open, who owns them and since when, and which producer holds
a partition's last stable offset back.  Everything goes through the Samsa
``Admin`` client over the wire, so the command works against Samsa and Kafka.
"""

from __future__ import annotations

import argparse
from typing import Any

from samsa.cli.action_table import Action, add_command
from samsa.cli.common import (
    CliError,
    console,
    open_admin,
    print_json,
    print_table,
)
from samsa.client.metadata import TopicPartition


def add_parser(sub: Any) -> None:
    add_command(
        sub,
        "transactions",
        "list and describe transactions and the producers of a partition",
        "example:\n  samsa transactions describe --transactional-id my-app",
        (
            Action(
                "list",
                "every transactional id, its producer and state",
                "samsa transactions list --state Ongoing",
                run_list,
                lambda a: a.add_argument(
                    "--state",
                    action="append",
                    default=[],
                    metavar="STATE",
                    help="e.g. Ongoing (repeatable)",
                ),
                output=True,
            ),
            Action(
                "describe",
                "state, producer, timeout and partitions of one transactional id",
                "samsa transactions describe --transactional-id my-app",
                run_describe,
                lambda a: a.add_argument("--transactional-id", required=True, metavar="ID"),
                output=True,
            ),
            Action(
                "describe-producers",
                "the producers a partition's leader knows, with their open transactions",
                "samsa transactions describe-producers --topic orders --partition 0",
                run_describe_producers,
                _partition_arguments,
                output=True,
            ),
            Action(
                "abort",
                "end a hanging transaction on one partition with an ABORT marker",
                "samsa transactions abort --topic orders --partition 0 --producer-id 7 "
                "--producer-epoch 0 --coordinator-epoch 0",
                run_abort,
                _abort_arguments,
            ),
        ),
    )


def _partition_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument("--topic", required=True, metavar="TOPIC")
    a.add_argument("--partition", required=True, type=int, metavar="N")


def _abort_arguments(a: argparse.ArgumentParser) -> None:
    _partition_arguments(a)
    a.add_argument("--producer-id", required=True, type=int, metavar="ID")
    a.add_argument("--producer-epoch", required=True, type=int, metavar="EPOCH")
    a.add_argument(
        "--coordinator-epoch",
        type=int,
        default=0,
        metavar="EPOCH",
        help="from describe-producers (default 0)",
    )


def run_abort(args: argparse.Namespace) -> int:
    tp = TopicPartition(args.topic, args.partition)
    with open_admin(args) as admin:
        admin.abort_transaction(
            tp, args.producer_id, args.producer_epoch, args.coordinator_epoch, timeout=args.timeout
        )
    print(f"Aborted the transaction of producer {args.producer_id} on {tp.topic}-{tp.partition}.")
    return 0


def run_list(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        found = admin.list_transactions(states=args.state, timeout=args.timeout)
    found.sort(key=lambda t: t.transactional_id)
    if args.output == "json":
        print_json(
            [
                {
                    "transactional_id": t.transactional_id,
                    "coordinator": t.coordinator_id,
                    "producer_id": t.producer_id,
                    "state": t.state,
                }
                for t in found
            ]
        )
        return 0
    rows = [(t.transactional_id, t.coordinator_id, t.producer_id, t.state) for t in found]
    print_table(console(), ("TRANSACTIONAL-ID", "COORDINATOR", "PRODUCER-ID", "STATE"), rows)
    return 0


def run_describe(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        d = admin.describe_transactions([args.transactional_id], timeout=args.timeout)[
            args.transactional_id
        ]
    partitions = ",".join(f"{tp.topic}-{tp.partition}" for tp in sorted(d.partitions))
    if args.output == "json":
        print_json(
            {
                "transactional_id": d.transactional_id,
                "coordinator": d.coordinator_id,
                "state": d.state,
                "producer_id": d.producer_id,
                "producer_epoch": d.producer_epoch,
                "timeout_ms": d.timeout_ms,
                "start_ms": d.start_ms,
                "partitions": [[tp.topic, tp.partition] for tp in sorted(d.partitions)],
            }
        )
        return 0
    print_table(
        console(),
        (
            "COORDINATOR",
            "TRANSACTIONAL-ID",
            "PRODUCER-ID",
            "PRODUCER-EPOCH",
            "STATE",
            "TIMEOUT-MS",
            "START-MS",
            "PARTITIONS",
        ),
        [
            (
                d.coordinator_id,
                d.transactional_id,
                d.producer_id,
                d.producer_epoch,
                d.state,
                d.timeout_ms,
                d.start_ms if d.start_ms >= 0 else None,
                partitions or None,
            )
        ],
    )
    return 0


def run_describe_producers(args: argparse.Namespace) -> int:
    tp = TopicPartition(args.topic, args.partition)
    if args.partition < 0:
        raise CliError(f"--partition must be 0 or more, got {args.partition}")
    with open_admin(args) as admin:
        producers = admin.describe_producers([tp], timeout=args.timeout).get(tp, [])
    producers.sort(key=lambda p: p.producer_id)
    if args.output == "json":
        print_json(
            [
                {
                    "producer_id": p.producer_id,
                    "producer_epoch": p.producer_epoch,
                    "last_sequence": p.last_sequence,
                    "last_timestamp": p.last_timestamp,
                    "coordinator_epoch": p.coordinator_epoch,
                    "current_transaction_start_offset": p.current_txn_start_offset,
                }
                for p in producers
            ]
        )
        return 0
    print_table(
        console(),
        (
            "PRODUCER-ID",
            "PRODUCER-EPOCH",
            "LAST-SEQUENCE",
            "LAST-TIMESTAMP",
            "COORDINATOR-EPOCH",
            "CURRENT-TRANSACTION-START-OFFSET",
        ),
        [
            (
                p.producer_id,
                p.producer_epoch,
                p.last_sequence,
                p.last_timestamp,
                p.coordinator_epoch,
                p.current_txn_start_offset if p.current_txn_start_offset >= 0 else None,
            )
            for p in producers
        ],
    )
    return 0
