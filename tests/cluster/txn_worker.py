"""One instance of a consume-transform-produce loop, run as its own process.

A fault test must be able to SIGKILL or SIGSTOP the producer itself, so the
loop lives in a process of its own, started with one JSON argument (see
``main``).  It reads the input topic with ``read_committed`` through manually
assigned partitions (the group only stores offsets: a paused zombie then never
holds up a rebalance), and for each batch opens a transaction, writes one
output per input to the same partition number of the output topic, adds the
batch's next offsets with ``send_offsets_to_transaction`` and commits.

Each output value names its input, its transaction and the offset that
transaction commits for the partition (``output_value``), so the checker can
tell from the output log alone what every transaction held.  The worker tells
the test what it did in one line per event on stdout:

* ``ready`` once ``init_transactions`` returned (older instances are fenced);
* ``open TXN SIZE`` once a transaction's outputs are flushed, before its commit;
* ``committed TXN`` once ``commit_transaction`` returned;
* ``aborted TXN ERROR`` after an abortable error and ``abort_transaction``;
* ``fatal TXN ERROR`` when the producer was fenced (then it exits 3);
* ``done`` once its commits cover every input up to ``ends`` (then it exits 0).

``stop_at``: after flushing the outputs of that transaction the worker sends
itself SIGSTOP, so a test breaks things while a transaction is certainly open.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

TIMEOUT_S = 60.0
"""Bound on each client call: a failover takes seconds, never this long."""


def output_value(
    partition: int, offset: int, instance: str, txn: int, size: int, commit: int
) -> bytes:
    return f"{partition}:{offset}|{instance}:{txn}:{size}|{commit}".encode()


def say(*words: object) -> None:
    print(*words, flush=True)


class Worker:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.instance: str = spec["instance"]
        self.ends: dict[int, int] = {int(p): int(e) for p, e in spec["ends"].items()}
        self.partitions = [TopicPartition(spec["input"], p) for p in sorted(self.ends)]
        self.consumer = Consumer(
            {
                "bootstrap.servers": spec["bootstrap"],
                "group.id": spec["group"],
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "socket.timeout.ms": 5000,
                "reconnect.backoff.max.ms": 500,
            }
        )
        self.producer = Producer(
            {
                "bootstrap.servers": spec["bootstrap"],
                "transactional.id": spec["transactional_id"],
                "transaction.timeout.ms": spec["transaction_timeout_ms"],
                "socket.timeout.ms": min(5000, spec["transaction_timeout_ms"]),
                "reconnect.backoff.max.ms": 500,
                "linger.ms": 2,
            }
        )
        self.committed: dict[int, int] = {}
        self.txn = 0

    def run(self) -> int:
        self.producer.init_transactions(TIMEOUT_S)
        say("ready")
        self.rewind()
        while not self.finished():
            batch = [
                m
                for m in self.consumer.consume(self.spec["batch"], timeout=0.2)
                if m.error() is None
            ]
            if batch:
                outcome = self.transaction(batch)
                if outcome is not None:
                    return outcome
        say("done")
        return 0

    def finished(self) -> bool:
        return all(self.committed.get(p, 0) >= end for p, end in self.ends.items())

    def rewind(self) -> None:
        """Start again from the group's committed offsets (what the last committed
        transaction stored), as after an abort nothing later may be kept."""
        stored = self.consumer.committed(self.partitions, TIMEOUT_S)
        self.committed = {tp.partition: max(tp.offset, 0) for tp in stored}
        self.consumer.assign(
            [TopicPartition(tp.topic, tp.partition, self.committed[tp.partition]) for tp in stored]
        )

    def transaction(self, batch: list[Any]) -> int | None:
        """Process one batch in one transaction; an exit code when the instance must end."""
        self.txn += 1
        commits: dict[int, int] = {}
        for m in batch:
            commits[m.partition()] = max(commits.get(m.partition(), 0), m.offset() + 1)
        try:
            self.producer.begin_transaction()
            for m in batch:
                value = output_value(
                    m.partition(),
                    m.offset(),
                    self.instance,
                    self.txn,
                    len(batch),
                    commits[m.partition()],
                )
                self.producer.produce(self.spec["output"], value=value, partition=m.partition())
            self.producer.flush(TIMEOUT_S)
            say("open", self.txn, len(batch))
            if self.txn == self.spec.get("stop_at"):
                os.kill(os.getpid(), signal.SIGSTOP)
            offsets = [TopicPartition(self.spec["input"], p, o) for p, o in commits.items()]
            self.producer.send_offsets_to_transaction(
                offsets, self.consumer.consumer_group_metadata(), TIMEOUT_S
            )
            self.commit()
        except KafkaException as exc:
            error = exc.args[0]
            if error.txn_requires_abort() and not error.fatal():
                return self.abort(error.name())
            say("fatal", self.txn, error.name())
            return 3
        say("committed", self.txn)
        self.committed.update(commits)
        return None

    def abort(self, why: str) -> int | None:
        """Abort after an abortable error and start again from the stored offsets
        (an exit code if the abort itself finds the instance fenced)."""
        try:
            self.producer.abort_transaction(TIMEOUT_S)
        except KafkaException as exc:
            say("fatal", self.txn, exc.args[0].name())
            return 3
        say("aborted", self.txn, why)
        self.rewind()
        return None

    def commit(self) -> None:
        """Commit, retrying while the outcome is only delayed (retriable errors: the
        same commit is asked again, as librdkafka's documentation says to)."""
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            try:
                self.producer.commit_transaction(TIMEOUT_S)
                return
            except KafkaException as exc:
                if not exc.args[0].retriable() or time.monotonic() > deadline:
                    raise

    def close(self) -> None:
        self.consumer.close()


def main(argv: list[str]) -> int:
    worker = Worker(json.loads(argv[1]))
    try:
        return worker.run()
    finally:
        worker.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
