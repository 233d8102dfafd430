"""Consume, transform, produce exactly once: every input record gives exactly one output.

Reads every partition of the input topic (``read_committed``, from the group's
committed offsets), writes each value upper-cased to the output topic, and
commits the consumed offsets *inside the same transaction* as the outputs.
Killed at any point (``kill -9`` of this process or of the broker), a restart
with the same ``--transactional-id`` fences the dead instance, the coordinator
aborts its open transaction, and processing resumes from the last committed
offsets: a read_committed reader of the output sees each input once.

The input topic must exist (the example refuses to guess its partitions); the
output topic is created on first write if the broker auto-creates topics.  It
says what it reads and writes, one line per committed transaction, and stops
after ``--idle-exit-s`` seconds without input.  With a broker on 127.0.0.1:9092:

    samsa topics create words --partitions 2
    printf 'hello\\nexactly\\nonce\\n' | samsa produce words
    python examples/exactly_once/uppercase.py --input words --output WORDS
    samsa consume WORDS --from-beginning --exit-at-end
"""

from __future__ import annotations

import argparse
import sys
import time

from samsa.client import Admin, Consumer, Producer
from samsa.errors import ErrorCode, KafkaError


def input_partitions(args: argparse.Namespace) -> int:
    """How many partitions the input topic has; 0 when it does not exist."""
    with Admin({"bootstrap.servers": args.bootstrap}) as admin:
        try:
            return len(admin.describe_topics([args.input], timeout=30)[args.input].partitions)
        except KafkaError as exc:
            if exc.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                return 0
            raise


def run(args: argparse.Namespace) -> int:
    partitions = args.partitions or input_partitions(args)
    if not partitions:
        print(
            f"uppercase: the input topic {args.input!r} does not exist on {args.bootstrap}; "
            f"create it and write some lines first, e.g.\n"
            f"  samsa topics create {args.input} && printf 'a\\nb\\n' | samsa produce {args.input}",
            file=sys.stderr,
        )
        return 2
    print(
        f"reading {args.input!r} ({partitions} partitions, read_committed, group "
        f"{args.group!r}) on {args.bootstrap}; writing each value upper-cased to "
        f"{args.output!r} in transactions of transactional.id {args.transactional_id!r}; "
        f"stopping after {args.idle_exit_s:g} s without input",
        flush=True,
    )
    consumer = Consumer(
        {
            "bootstrap.servers": args.bootstrap,
            "group.id": args.group,
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.assign([(args.input, p) for p in range(partitions)])  # from the committed offsets
    producer = Producer(
        {"bootstrap.servers": args.bootstrap, "transactional.id": args.transactional_id}
    )
    producer.init_transactions(60)
    processed = transactions = 0
    idle_since = time.monotonic()
    try:
        while time.monotonic() - idle_since < args.idle_exit_s:
            records = consumer.poll(0.5)
            if not records:
                continue
            idle_since = time.monotonic()
            producer.begin_transaction()
            positions: dict[tuple[str, int], int] = {}
            for r in records:
                producer.send(args.output, r.value.upper(), key=r.key)
                positions[(r.topic, r.partition)] = r.offset + 1
            producer.send_offsets_to_transaction(positions, consumer.group_metadata(), 60)
            producer.commit_transaction(60)
            processed += len(records)
            transactions += 1
            print(f"committed {processed}", flush=True)
    finally:
        producer.close(10)
        consumer.close()
    print(
        f"no input for {args.idle_exit_s:g} s: {processed} records in {transactions} "
        f"transactions this run; stopping",
        flush=True,
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="example:\n  python examples/exactly_once/uppercase.py --input words --output WORDS",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--input", required=True, help="an existing topic to read")
    parser.add_argument("--output", required=True, help="the topic to write")
    parser.add_argument(
        "--partitions", type=int, default=0, help="of the input topic (default: all it has)"
    )
    parser.add_argument("--group", default="uppercase")
    parser.add_argument("--transactional-id", default="uppercase-1")
    parser.add_argument("--idle-exit-s", type=float, default=5.0, help="stop when idle this long")
    return run(parser.parse_args())


if __name__ == "__main__":
    raise SystemExit(main())
