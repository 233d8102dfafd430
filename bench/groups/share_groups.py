"""Share-group throughput against a classic group reading the same partitions.

One Samsa broker, one topic of ``--partitions`` partitions preloaded with
``--records`` records of 100 bytes.  Then, in one run:

* **classic**: a group of 5 librdkafka consumers (``auto.offset.reset=earliest``)
  reads every record; with 2 partitions only 2 of them get a partition;
* **share**: a share group of 5 librdkafka share consumers (implicit
  acknowledgement: the records of each poll are accepted with the next poll,
  so every batch is acknowledged) reads every record once.

Each consumer polls in its own thread; the clock runs from the first
``subscribe()`` until the last record arrived.  Printed: records/s of each and
the share/classic ratio (the target is >= 0.5).  Runs alternate the order.

    .venv/bin/python -m bench.groups.share_groups [--records 200000] [--runs 2]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from confluent_kafka import Consumer, Producer, ShareConsumer
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.testing import BrokerProcess

CONSUMERS = 5
BROKER = {
    "share.auto.offset.reset": "earliest",
    "share.coordinator.state.topic.num.partitions": "4",
}


def preload(bootstrap: str, topic: str, partitions: int, records: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 256 * 1024})
    value = b"x" * 100
    for i in range(records):
        while True:
            try:
                producer.produce(topic, value, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(120) == 0


def run_group(make: Callable[[], object], topic: str, records: int, timeout: float) -> float:
    """Seconds for CONSUMERS consumers made by ``make`` to receive ``records`` records."""
    counted = [0]
    lock = threading.Lock()
    done = threading.Event()
    consumers = [make() for _ in range(CONSUMERS)]

    def poll_loop(consumer: object) -> None:
        while not done.is_set():
            if isinstance(consumer, ShareConsumer):
                batch = list(consumer.poll(0.2))
            else:
                assert isinstance(consumer, Consumer)
                batch = consumer.consume(500, 0.2)
            got = sum(1 for m in batch if m.error() is None)
            if got:
                with lock:
                    counted[0] += got
                    if counted[0] >= records:
                        done.set()

    started = time.monotonic()
    for c in consumers:
        c.subscribe([topic])  # type: ignore[attr-defined]
    threads = [threading.Thread(target=poll_loop, args=(c,), daemon=True) for c in consumers]
    for t in threads:
        t.start()
    finished = done.wait(timeout)
    elapsed = time.monotonic() - started
    done.set()
    for t in threads:
        t.join(10)
    for c in consumers:
        c.close()  # type: ignore[attr-defined]
    if not finished:
        raise RuntimeError(f"only {counted[0]} of {records} records within {timeout}s")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        broker = BrokerProcess(Path(tmp) / "data", BROKER)
        bootstrap = broker.start()
        try:
            topic = "share-bench"
            preload(bootstrap, topic, args.partitions, args.records)
            rates: dict[str, list[float]] = {"classic": [], "share": []}
            for run in range(args.runs):
                order = ["classic", "share"] if run % 2 == 0 else ["share", "classic"]
                for kind in order:
                    group = f"{kind}-{run}"
                    if kind == "classic":

                        def make(group: str = group) -> object:
                            return Consumer(
                                {
                                    "bootstrap.servers": bootstrap,
                                    "group.id": group,
                                    "auto.offset.reset": "earliest",
                                    "enable.auto.commit": True,
                                }
                            )
                    else:

                        def make(group: str = group) -> object:
                            return ShareConsumer(
                                {"bootstrap.servers": bootstrap, "group.id": group}
                            )

                    seconds = run_group(make, topic, args.records, timeout=600)
                    rates[kind].append(args.records / seconds)
                    print(
                        f"run {run} {kind:8s} {args.records / seconds:10.0f} records/s"
                        f" ({seconds:.2f} s)",
                        flush=True,
                    )
            classic = statistics.median(rates["classic"])
            share = statistics.median(rates["share"])
            print(
                f"median: classic {classic:.0f} records/s, share {share:.0f} records/s,"
                f" share/classic = {share / classic:.2f} (target >= 0.5)"
            )
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
