"""``samsa topics create|list|describe|alter|delete``: Kafka's kafka-topics, over the wire.

Everything goes through ``samsa.client.Admin``, so the command works the same
against Samsa and against any Kafka-compatible broker.  ``describe`` joins
what a user needs to see one topic: each partition's leader, replicas, ISR,
log start and end offsets and size on disk (DescribeLogDirs; ``-`` where a
broker does not answer it), and the topic's configs with their source; for a
tiered topic also where the local log starts, the last tiered offset and the
remote size (``topic_tiers``).
"""

from __future__ import annotations

import argparse
from typing import Any

from samsa.cli.common import (
    CONFIG_SOURCES,
    CliError,
    add_connection_args,
    add_output_arg,
    add_subcommand,
    client_config,
    console,
    guarded,
    open_admin,
    parse_kv,
    print_json,
    print_table,
)
from samsa.cli.topic_tiers import tier_details
from samsa.client.admin import EARLIEST, LATEST, Admin, NewTopic
from samsa.client.admin.results import TopicDescription
from samsa.client.metadata import TopicPartition
from samsa.errors import ErrorCode, KafkaError, SamsaError


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "topics",
        help="create, list, describe, alter and delete topics",
        epilog="example:\n  samsa topics describe orders --bootstrap-server 127.0.0.1:9092",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="topics_action", required=True, metavar="ACTION")

    a = add_subcommand(
        actions,
        "create",
        "create a topic",
        "samsa topics create orders --partitions 6 --config cleanup.policy=compact",
    )
    a.add_argument("topic", metavar="TOPIC")
    a.add_argument("--partitions", type=int, default=-1, help="default: the broker's")
    a.add_argument("--replication-factor", type=int, default=-1, help="default: the broker's")
    a.add_argument(
        "--config", action="append", default=[], metavar="KEY=VALUE", help="a topic config"
    )
    a.add_argument("--if-not-exists", action="store_true", help="no error if it exists")
    add_connection_args(a)
    a.set_defaults(run=guarded("topics", create))

    a = add_subcommand(actions, "list", "list topics", "samsa topics list --output json")
    a.add_argument("--internal", action="store_true", help="also list internal topics")
    add_connection_args(a)
    add_output_arg(a)
    a.set_defaults(run=guarded("topics", list_topics))

    a = add_subcommand(
        actions,
        "describe",
        "partitions, leaders, replicas, ISR, offsets, sizes and configs of topics",
        "samsa topics describe orders",
    )
    a.add_argument("topics", metavar="TOPIC", nargs="*", help="default: every topic")
    add_connection_args(a)
    add_output_arg(a)
    a.set_defaults(run=guarded("topics", describe))

    a = add_subcommand(
        actions,
        "alter",
        "change a topic's configs or add partitions",
        "samsa topics alter orders --config retention.ms=3600000 --partitions 12",
    )
    a.add_argument("topic", metavar="TOPIC")
    a.add_argument("--config", action="append", default=[], metavar="KEY=VALUE")
    a.add_argument(
        "--delete-config", action="append", default=[], metavar="KEY", help="back to default"
    )
    a.add_argument("--partitions", type=int, help="new (larger) partition count")
    add_connection_args(a)
    a.set_defaults(run=guarded("topics", alter))

    a = add_subcommand(actions, "delete", "delete topics", "samsa topics delete orders")
    a.add_argument("topics", metavar="TOPIC", nargs="+")
    add_connection_args(a)
    a.set_defaults(run=guarded("topics", delete))


def create(args: argparse.Namespace) -> int:
    configs = parse_kv(args.config, "--config")
    if args.partitions == 0 or args.partitions < -1:
        raise CliError(f"--partitions must be at least 1, not {args.partitions}")
    with open_admin(args) as admin:
        try:
            admin.create_topics(
                [NewTopic(args.topic, args.partitions, args.replication_factor, configs)],
                timeout=args.timeout,
            )
        except KafkaError as exc:
            if exc.code == ErrorCode.TOPIC_ALREADY_EXISTS and args.if_not_exists:
                return 0
            raise
    print(f"Created topic {args.topic}.")
    return 0


def list_topics(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        names = sorted(admin.list_topics(timeout=args.timeout, include_internal=args.internal))
    if args.output == "json":
        print_json(names)
    else:
        for name in names:
            print(name)
    return 0


def describe(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        names = args.topics or sorted(admin.list_topics(timeout=args.timeout))
        topics = admin.describe_topics(names, timeout=args.timeout)
        details = [topic_details(admin, topics[name], args.timeout) for name in names]
        for d in details:
            add_tiers(admin, args, d)
    if args.output == "json":
        print_json(details)
        return 0
    con = console()
    for d in details:
        con.print(
            f"[bold]Topic: {d['topic']}[/bold]  PartitionCount: {len(d['partitions'])}  "
            f"ReplicationFactor: {d['replication_factor']}  TopicId: {d['topic_id'] or '-'}"
        )
        tiered = d["tiered"]
        tier_columns = ("LOCAL-START", "TIERED-END", "REMOTE-SIZE") if tiered else ()
        print_table(
            con,
            (
                "PARTITION",
                "LEADER",
                "REPLICAS",
                "ISR",
                "LOG-START",
                "LOG-END",
                "SIZE",
                *tier_columns,
            ),
            [
                (
                    p["partition"],
                    p["leader"],
                    ",".join(map(str, p["replicas"])),
                    ",".join(map(str, p["isr"])),
                    p["log_start_offset"],
                    p["log_end_offset"],
                    p["size_bytes"],
                    *(
                        (
                            p["local_log_start_offset"],
                            p["tiered_end_offset"],
                            p["remote_size_bytes"],
                        )
                        if tiered
                        else ()
                    ),
                )
                for p in d["partitions"]
            ],
        )
        print_table(
            con,
            ("CONFIG", "VALUE", "SOURCE"),
            [(c["name"], c["value"], c["source"]) for c in d["configs"]],
        )
        con.print()
    return 0


def topic_details(admin: Admin, topic: TopicDescription, timeout: float) -> dict[str, Any]:
    parts = [TopicPartition(topic.name, p.partition) for p in topic.partitions]
    starts = {tp: o for tp, (o, _) in admin.list_offsets(dict.fromkeys(parts, EARLIEST), timeout=timeout).items()}  # fmt: skip
    ends = {tp: o for tp, (o, _) in admin.list_offsets(dict.fromkeys(parts, LATEST), timeout=timeout).items()}  # fmt: skip
    try:
        sizes = admin.describe_log_dirs([topic.name], timeout=timeout)
    except SamsaError:
        sizes = {}  # a broker without DescribeLogDirs: sizes unknown
    configs = admin.describe_configs("topic", topic.name, timeout=timeout)
    return {
        "topic": topic.name,
        "topic_id": topic.topic_id.hex() if topic.topic_id else None,
        "internal": topic.is_internal,
        "replication_factor": max((len(p.replicas) for p in topic.partitions), default=0),
        "partitions": [
            {
                "partition": p.partition,
                "leader": p.leader,
                "leader_epoch": p.leader_epoch,
                "replicas": list(p.replicas),
                "isr": list(p.isr),
                "log_start_offset": starts.get(tp),
                "log_end_offset": ends.get(tp),
                "size_bytes": sizes.get(p.leader, {}).get(tp),
            }
            for p, tp in zip(topic.partitions, parts, strict=True)
        ],
        "configs": [
            {
                "name": c.name,
                "value": "******" if c.is_sensitive else c.value,
                "source": CONFIG_SOURCES.get(c.source, str(c.source)),
                "read_only": c.read_only,
            }
            for c in sorted(configs.values(), key=lambda c: c.name)
        ],
    }


def add_tiers(admin: Admin, args: argparse.Namespace, details: dict[str, Any]) -> None:
    """A topic with remote.storage.enable=true: each partition's local start,
    tiered end and remote size (``topic_tiers``); ``size_bytes`` is local."""
    tiered = any(
        c["name"] == "remote.storage.enable" and c["value"] == "true" for c in details["configs"]
    )
    details["tiered"] = tiered
    if not tiered:
        return
    parts = {TopicPartition(details["topic"], p["partition"]): p for p in details["partitions"]}
    config = client_config(args, {"client.id": "samsa-cli-topics"})
    tiers = tier_details(admin, config, details["topic"], parts, args.timeout)
    for tp, partition in parts.items():
        partition.update(tiers[tp])


def alter(args: argparse.Namespace) -> int:
    changes: dict[str, str | None] = dict(parse_kv(args.config, "--config"))
    changes.update(dict.fromkeys(args.delete_config))
    if not changes and args.partitions is None:
        raise CliError("nothing to alter: give --config, --delete-config or --partitions")
    with open_admin(args) as admin:
        if changes:
            admin.alter_configs("topic", args.topic, changes, timeout=args.timeout)
        if args.partitions is not None:
            admin.create_partitions({args.topic: args.partitions}, timeout=args.timeout)
    print(f"Altered topic {args.topic}.")
    return 0


def delete(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        existing = admin.list_topics(timeout=args.timeout, include_internal=True)
        missing = [t for t in args.topics if t not in existing]
        if missing:
            raise CliError(f"unknown topic {missing[0]!r}")
        admin.delete_topics(args.topics, timeout=args.timeout)
    for topic in args.topics:
        print(f"Deleted topic {topic}.")
    return 0
