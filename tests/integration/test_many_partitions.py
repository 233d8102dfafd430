"""A thousand partitions on one broker: created without stalling the event loop,
within the open-file limit, and loaded again quickly after a clean stop.

Before the logs were created off the loop, one CreateTopics of 1,000
partitions stopped every produce for 10-30 s on a loaded machine, each
partition held three files open, and a restart took about 40 s (one fsync'd
checkpoint write, rename and directory fsync per partition).  The bounds here
are several times what the broker now takes on a loaded CI machine, and well
below what it took before.  The 10,000-partition figures come from
``bench/scale/scale_10k.py``.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.testing import BrokerProcess
from samsa.testing.cluster import wait_until

pytestmark = pytest.mark.serial  # bounds a start-up time: not beside another xdist worker

PARTITIONS = 1000
MAX_PRODUCE_STALL_S = 2.0  # was the whole creation (10-30 s)
MAX_CLEAN_START_S = 25.0  # was about 40 s for 1,000 partitions
MAX_OPEN_FILES = 2 * PARTITIONS  # was three per partition


def open_files(broker: BrokerProcess) -> int:
    assert broker.proc is not None
    return len(list(Path(f"/proc/{broker.proc.pid}/fd").iterdir()))


def partition_dirs(data_dir: Path, topic: str) -> int:
    return sum(1 for p in data_dir.iterdir() if p.name.startswith(topic + "-"))


class ProduceProbe:
    """One record at a time to a busy partition; the slowest round trip is how
    long the broker's event loop was unavailable."""

    def __init__(self, bootstrap: str) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": 1})
        self.latencies: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            delivered = threading.Event()
            started = time.monotonic()
            self.producer.produce("busy", b"x", on_delivery=lambda err, msg, d=delivered: d.set())
            while not delivered.is_set():
                self.producer.poll(0.01)
            self.latencies.append(time.monotonic() - started)

    def __enter__(self) -> ProduceProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(60)
        self.producer.flush(10)


def test_creating_a_thousand_partitions_keeps_serving_and_restarts_fast(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    broker = BrokerProcess(data_dir)
    broker.start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("busy", 1, 1)])["busy"].result(30)
        with ProduceProbe(broker.bootstrap) as probe:
            wait_until(lambda: len(probe.latencies) >= 10, 30, "the probe's first records")
            admin.create_topics(
                [NewTopic("many", PARTITIONS, 1)], request_timeout=120, operation_timeout=120
            )["many"].result(120)
            wait_until(lambda: partition_dirs(data_dir, "many") == PARTITIONS, 300, "every log")
            wait_until(lambda: open_files(broker) >= PARTITIONS, 60, "every log opened")
        stall = max(probe.latencies)
        print(f"slowest produce while creating {PARTITIONS} partitions: {stall * 1000:.0f} ms")
        assert stall < MAX_PRODUCE_STALL_S
        assert open_files(broker) < MAX_OPEN_FILES

        broker.stop(120)
        started = time.monotonic()
        broker.start(timeout=120)
        took = time.monotonic() - started
        print(f"ready {took:.1f} s after a clean stop with {PARTITIONS + 1} partitions")
        assert took < MAX_CLEAN_START_S
        assert open_files(broker) < MAX_OPEN_FILES
    finally:
        broker.stop(120)
        broker.kill()
