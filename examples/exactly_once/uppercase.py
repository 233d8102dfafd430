"""Consume, transform, produce exactly once: every input record gives exactly one output.

Reads the input topic's partitions (``read_committed``, from the group's
committed offsets), writes each value upper-cased to the output topic, and
commits the consumed offsets *inside the same transaction* as the outputs.
Killed at any point (``kill -9`` of this process or of the broker), a restart
with the same ``--transactional-id`` fences the dead instance, the coordinator
aborts its open transaction, and processing resumes from the last committed
offsets: a read_committed reader of the output sees each input once.

    python uppercase.py --bootstrap 127.0.0.1:9092 --input words --output WORDS
"""

from __future__ import annotations

import argparse
import time

from samsa.client import Consumer, Producer


def run(args: argparse.Namespace) -> int:
    consumer = Consumer(
        {
            "bootstrap.servers": args.bootstrap,
            "group.id": args.group,
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    partitions = [(args.input, p) for p in range(args.partitions)]
    consumer.assign(partitions)  # positions start at the group's committed offsets
    producer = Producer(
        {"bootstrap.servers": args.bootstrap, "transactional.id": args.transactional_id}
    )
    producer.init_transactions(60)
    processed = 0
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
            print(f"committed {processed}", flush=True)
    finally:
        producer.close(10)
        consumer.close()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--input", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--partitions", type=int, default=1, help="of the input topic")
    parser.add_argument("--group", default="uppercase")
    parser.add_argument("--transactional-id", default="uppercase-1")
    parser.add_argument("--idle-exit-s", type=float, default=5.0, help="stop when idle this long")
    return run(parser.parse_args())


if __name__ == "__main__":
    raise SystemExit(main())
