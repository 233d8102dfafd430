"""``samsa consume TOPIC``: Kafka's kafka-console-consumer.

Without ``--group`` the command reads every partition (or ``--partition``)
with an assigned consumer and commits nothing; with ``--group`` it joins that
group and commits what it printed, so a second run goes on where the first
stopped.  It runs until Ctrl-C, as a tail does, unless told when to end:
after ``--max-messages`` records, when nothing arrived for ``--idle-timeout``
seconds (kafka-console-consumer's ``--timeout-ms``), or once it has read every
assigned partition to its end (``--exit-at-end`` / ``-e``, kcat's ``-e``),
whichever comes first.  ``--timeout`` bounds each call to the broker, as in
every other command; it never ends the reading by itself.

Formats: ``plain`` prints values, ``kv`` prints ``key<TAB>value``, ``json``
prints one object per record (key, value, topic, partition, offset, timestamp,
timestamp_type, headers).  Bytes that are not UTF-8 are never printed raw: in
plain and kv they appear with Python's backslash escapes (``\\xff``); in JSON a
field that is not UTF-8 is written as ``{"base64": "..."}``.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import time
from typing import Any

from samsa.cli.common import (
    CliError,
    add_connection_args,
    add_subcommand,
    client_config,
    guarded,
    partition_count,
)
from samsa.client import Consumer, ConsumerRecord, TopicPartition

FORMATS = ("plain", "kv", "json")


def add_parser(sub: Any) -> None:
    p = add_subcommand(
        sub,
        "consume",
        "print records of a topic",
        "samsa consume greetings --from-beginning --format json --max-messages 10 --exit-at-end",
    )
    p.add_argument("topic", metavar="TOPIC")
    p.add_argument("--from-beginning", action="store_true", help="start at the earliest offset")
    p.add_argument("--group", metavar="GROUP", help="consume as a member of this group")
    p.add_argument("--partition", type=int, help="read only this partition")
    p.add_argument(
        "--offset",
        metavar="OFFSET",
        help="with --partition: a number, 'earliest' or 'latest' (default: latest)",
    )
    p.add_argument("--max-messages", type=int, metavar="N", help="stop after N records")
    p.add_argument(
        "--idle-timeout",
        type=float,
        metavar="SECONDS",
        help="stop when no record arrived for this long (default: wait until Ctrl-C)",
    )
    p.add_argument(
        "-e",
        "--exit-at-end",
        action="store_true",
        help="stop once every assigned partition is read to its end (its high watermark)",
    )
    p.add_argument("--format", choices=FORMATS, default="plain")
    add_connection_args(p)
    p.set_defaults(run=guarded("consume", run))


def text(data: bytes | None) -> str:
    if data is None:
        return "null"
    return data.decode("utf-8", errors="backslashreplace")


def json_bytes(data: bytes | None) -> Any:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def render(record: ConsumerRecord, fmt: str) -> str:
    if fmt == "plain":
        return text(record.value)
    if fmt == "kv":
        return f"{text(record.key)}\t{text(record.value)}"
    return json.dumps(
        {
            "topic": record.topic,
            "partition": record.partition,
            "offset": record.offset,
            "timestamp": record.timestamp,
            "timestamp_type": "LogAppendTime" if record.timestamp_type == 1 else "CreateTime",
            "key": json_bytes(record.key),
            "value": json_bytes(record.value),
            "headers": [{"key": k, "value": json_bytes(v)} for k, v in record.headers],
        }
    )


def parse_offset(value: str | None) -> int | str:
    if value is None or value in ("earliest", "latest"):
        return value or "latest"
    try:
        offset = int(value)
    except ValueError:
        raise CliError(f"invalid --offset {value!r}: a number, 'earliest' or 'latest'") from None
    if offset < 0:
        raise CliError(f"invalid --offset {value!r}: must not be negative")
    return offset


def run(args: argparse.Namespace) -> int:
    if args.offset is not None and args.partition is None:
        raise CliError("--offset needs --partition")
    if args.group is not None and args.partition is not None:
        raise CliError("--group and --partition cannot be used together")
    if args.idle_timeout is not None and args.idle_timeout <= 0:
        raise CliError(f"invalid --idle-timeout {args.idle_timeout:g}: must be positive")
    offset = parse_offset(args.offset)
    config: dict[str, Any] = {
        "client.id": "samsa-cli-consumer",
        "auto.offset.reset": "earliest" if args.from_beginning else "latest",
        "enable.auto.commit": False,
        "request.timeout.ms": max(int(args.timeout * 1000), 1),
    }
    if args.group is not None:
        config["group.id"] = args.group
    with Consumer(client_config(args, config)) as consumer:
        place(consumer, args, offset)
        count = drain(consumer, args)
        if args.group is not None and count:
            consumer.commit()
    return 0


def place(consumer: Consumer, args: argparse.Namespace, offset: int | str) -> None:
    if args.group is not None:
        consumer.subscribe([args.topic])
        return
    partitions = partition_count(args, args.topic)
    if args.partition is None:
        consumer.assign([TopicPartition(args.topic, p) for p in range(partitions)])
        return
    if not 0 <= args.partition < partitions:
        raise CliError(
            f"partition {args.partition} out of range: {args.topic} has {partitions} partitions"
        )
    tp = TopicPartition(args.topic, args.partition)
    consumer.assign([tp])
    if offset == "earliest" or (offset == "latest" and args.from_beginning):
        consumer.seek_to_beginning([tp])
    elif offset == "latest":
        consumer.seek_to_end([tp])
    else:
        assert isinstance(offset, int)
        consumer.seek(tp, offset)


def drain(consumer: Consumer, args: argparse.Namespace) -> int:
    count = 0
    last_record = time.monotonic()
    out = sys.stdout
    while args.max_messages is None or count < args.max_messages:
        remaining = None if args.max_messages is None else args.max_messages - count
        batch = consumer.poll(0.2, max_records=remaining)
        if not batch:
            idle = args.idle_timeout
            if idle is not None and time.monotonic() - last_record >= idle:
                break
            if args.exit_at_end and at_end(consumer, args.timeout):
                break
            continue
        last_record = time.monotonic()
        out.write("".join(render(r, args.format) + "\n" for r in batch))
        out.flush()
        count += len(batch)
    return count


def at_end(consumer: Consumer, timeout: float) -> bool:
    """Whether every assigned partition has been read to its end.

    Asked only after a poll that returned nothing, so a busy topic costs no
    extra requests; a group member that has no partitions yet is not at the
    end of anything (it may still be joining).
    """
    assigned = consumer.assignment()
    if not assigned:
        return False
    ends = consumer.end_offsets(assigned, timeout=timeout)
    return all(consumer.position(tp, timeout=timeout) >= ends[tp] for tp in assigned)
