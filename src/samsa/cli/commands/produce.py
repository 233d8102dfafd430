"""``samsa produce TOPIC``: Kafka's kafka-console-producer, with a receipt.

Each input line is one record (without its newline).  With
``--key-separator SEP`` the text before the first SEP is the key, as
kafka-console-producer's ``parse.key``/``key.separator`` do; a line without
the separator is an error rather than a silently keyless record.  On exit the
command says what the broker acknowledged (records and offsets per
partition), so a script knows exactly what landed.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

from samsa.cli.common import (
    CliError,
    add_connection_args,
    add_output_arg,
    add_subcommand,
    client_config,
    guarded,
    parse_kv,
    print_json,
)
from samsa.client import Producer, RecordMetadata
from samsa.client.admin import Admin

COMPRESSIONS = ("none", "gzip", "snappy", "lz4", "zstd")


def add_parser(sub: Any) -> None:
    p = add_subcommand(
        sub,
        "produce",
        "send lines from stdin or a file to a topic, one record per line",
        "printf 'k1:hello\\nk2:world\\n' | samsa produce greetings --key-separator :",
    )
    p.add_argument("topic", metavar="TOPIC")
    p.add_argument("--file", metavar="PATH", help="read lines from this file instead of stdin")
    p.add_argument("--key-separator", metavar="SEP", help="split each line into KEY SEP VALUE")
    p.add_argument(
        "--header", action="append", default=[], metavar="KEY=VALUE", help="header on every record"
    )
    p.add_argument("--partition", type=int, help="send every record to this partition")
    p.add_argument("--compression", choices=COMPRESSIONS, default="none")
    p.add_argument("--acks", choices=("0", "1", "all", "-1"), default="all")
    p.add_argument("--linger-ms", type=int, default=5, metavar="MS")
    add_connection_args(p)
    add_output_arg(p)
    p.set_defaults(run=guarded("produce", run))


class Receipt:
    """Acknowledged records per partition: count and first/last offset."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.partitions: dict[int, list[int]] = {}  # partition -> [count, first, last]
        self.errors: list[str] = []

    def on_delivery(self, metadata: RecordMetadata | None, error: BaseException | None) -> None:
        with self._lock:
            if error is not None or metadata is None:
                if len(self.errors) < 5:
                    self.errors.append(str(error))
                return
            entry = self.partitions.get(metadata.partition)
            if entry is None:
                self.partitions[metadata.partition] = [1, metadata.offset, metadata.offset]
            else:
                entry[0] += 1
                entry[1] = min(entry[1], metadata.offset)
                entry[2] = max(entry[2], metadata.offset)

    @property
    def acknowledged(self) -> int:
        return sum(entry[0] for entry in self.partitions.values())


def records(lines: Iterable[bytes], separator: str | None) -> Iterator[tuple[bytes | None, bytes]]:
    """Lines are bytes, passed through as they are: input need not be UTF-8."""
    sep_bytes = None if separator is None else separator.encode()
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip(b"\r\n")
        if sep_bytes is None:
            yield None, line
            continue
        key, sep, value = line.partition(sep_bytes)
        if not sep:
            raise CliError(f"line {number} has no key separator {separator!r}: {line[:40]!r}")
        yield key, value


def run(args: argparse.Namespace) -> int:
    headers = [(k, v.encode()) for k, v in parse_kv(args.header, "--header").items()]
    if args.partition is not None and args.partition < 0:
        raise CliError(f"--partition must not be negative, not {args.partition}")
    config = {
        "client.id": "samsa-cli-producer",
        "acks": args.acks,
        # As Kafka's producer: idempotence only where acks=all allows it.
        "enable.idempotence": args.acks in ("all", "-1"),
        "compression.type": args.compression,
        "linger.ms": args.linger_ms,
        "max.block.ms": int(args.timeout * 1000),
        "delivery.timeout.ms": max(int(args.timeout * 1000), args.linger_ms + 1000),
        "request.timeout.ms": max(int(args.timeout * 1000) // 2, 500),
    }
    check_topic(args)
    receipt = Receipt()
    try:
        source: BinaryIO = open(args.file, "rb") if args.file else sys.stdin.buffer  # noqa: SIM115
    except OSError as exc:
        raise CliError(f"cannot read --file {args.file!r}: {exc.strerror}") from None
    sent = 0
    try:
        with Producer(client_config(args, config)) as producer:
            for key, value in records(source, args.key_separator):
                producer.send(
                    args.topic,
                    value,
                    key=key,
                    headers=headers or None,
                    partition=args.partition,
                    on_delivery=receipt.on_delivery,
                )
                sent += 1
            producer.flush(args.timeout)
    finally:
        if args.file:
            source.close()
    report(args, receipt, sent)
    if receipt.errors or (receipt.acknowledged != sent and args.acks != "0"):
        raise CliError(
            f"{sent - receipt.acknowledged} of {sent} records not acknowledged"
            + (f": {receipt.errors[0]}" if receipt.errors else "")
        )
    return 0


def check_topic(args: argparse.Namespace) -> None:
    """Fail fast, with the partition count, for a partition the topic lacks."""
    if args.partition is None:
        return
    with Admin(client_config(args, {"request.timeout.ms": int(args.timeout * 1000)})) as admin:
        topic = admin.describe_topics([args.topic], timeout=args.timeout)[args.topic]
    if args.partition >= len(topic.partitions):
        raise CliError(
            f"partition {args.partition} out of range: {args.topic} has "
            f"{len(topic.partitions)} partitions"
        )


def report(args: argparse.Namespace, receipt: Receipt, sent: int) -> None:
    summary = {
        "topic": args.topic,
        "sent": sent,
        "acknowledged": receipt.acknowledged,
        "partitions": {
            str(p): {"records": c, "first_offset": first, "last_offset": last}
            for p, (c, first, last) in sorted(receipt.partitions.items())
        },
    }
    if args.output == "json":
        print_json(summary)
        return
    parts = ", ".join(
        f"{args.topic}-{p} offsets {first}..{last}"
        for p, (_c, first, last) in sorted(receipt.partitions.items())
    )
    print(
        f"acknowledged {receipt.acknowledged} of {sent} records" + (f": {parts}" if parts else ""),
        file=sys.stderr,
    )
