"""Absorbing one new member: the KIP-848 consumer protocol vs the classic protocol.

One Samsa broker, one 30-partition topic fed continuously (a record per
partition every 20 ms).  Per protocol: 10 librdkafka members of one group
consume, each polling in its own thread; once every partition is held and
every member is reading, an 11th member subscribes.  Two numbers:

* **absorb**: seconds from the 11th ``subscribe()`` until every partition is
  held by exactly one member, the newcomer included, with no member holding
  more than one partition above another's.
* **longest gap**: the longest stretch without a record in any of the 10
  existing members' streams, from 1 s before the join until 1 s after the
  group absorbed it.  Steady reading at 50 records/s per partition shows gaps
  of tens of milliseconds; a stop-the-world rebalance shows as seconds.

``classic`` uses librdkafka's default assignors (``range,roundrobin``, eager:
every member revokes everything at each rebalance); ``classic-cooperative``
uses ``cooperative-sticky`` (KIP-429); ``consumer`` is KIP-848, where the broker
assigns and only the moved partitions pause.  The broker heartbeats KIP-848
members every 500 ms (``group.consumer.heartbeat.interval.ms``); classic
members use heartbeat.interval.ms=500 and session.timeout.ms=6000 to match.
Runs alternate the protocol order; medians over ``--runs`` are printed last.

    .venv/bin/python -m bench.groups.groups_protocols [--runs 3]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
import threading
import time
from pathlib import Path

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.testing import BrokerProcess

MEMBERS, PARTITIONS = 10, 30
BROKER = {"group.consumer.heartbeat.interval.ms": "500"}
PROTOCOLS: dict[str, dict[str, object]] = {
    "classic": {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500},
    "classic-cooperative": {
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 500,
        "partition.assignment.strategy": "cooperative-sticky",
    },
    "consumer": {"group.protocol": "consumer"},
}


class Member:
    """One consumer on its own thread, noting when each record arrived."""

    def __init__(self, bootstrap: str, group: str, topic: str, settings: dict[str, object]):
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "auto.offset.reset": "latest",
                "enable.auto.commit": False,
                **settings,
            }
        )
        self.topic = topic
        self.arrivals: list[float] = []
        self.held: set[int] = set()
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> float:
        self.consumer.subscribe([self.topic])
        subscribed = time.monotonic()
        self.thread.start()
        return subscribed

    def _run(self) -> None:
        while not self._stop.is_set():
            msg = self.consumer.poll(0.01)
            if msg is not None and not msg.error():
                self.arrivals.append(time.monotonic())
            self.held = {tp.partition for tp in self.consumer.assignment()}

    def longest_gap(self, start: float, end: float) -> float:
        times = [start, *[t for t in self.arrivals if start < t < end], end]
        return max(b - a for a, b in itertools.pairwise(times))

    def close(self) -> None:
        self._stop.set()
        self.thread.join(10)
        self.consumer.close()


class Feeder:
    def __init__(self, bootstrap: str, topic: str) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        self.topic = topic
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for p in range(PARTITIONS):
                self.producer.produce(self.topic, b"x", partition=p)
            self.producer.poll(0)
            self._stop.wait(0.02)

    def close(self) -> None:
        self._stop.set()
        self.thread.join(10)
        self.producer.flush(10)


def balanced(members: list[Member]) -> bool:
    held = [m.held for m in members]
    sizes = [len(h) for h in held]
    return (
        sorted(p for h in held for p in h) == list(range(PARTITIONS))
        and max(sizes) - min(sizes) <= 1
    )


def wait_for(check, timeout: float, what: str) -> float:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return time.monotonic()
        time.sleep(0.005)
    raise RuntimeError(f"timed out waiting for {what}")


def measure(bootstrap: str, protocol: str, run: int) -> tuple[float, float]:
    """(absorb seconds, longest gap seconds in the existing members' streams)."""
    topic = f"absorb-{protocol}-{run}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(20)
    feeder = Feeder(bootstrap, topic)
    settings = PROTOCOLS[protocol]
    members = [Member(bootstrap, f"{topic}-g", topic, settings) for _ in range(MEMBERS)]
    try:
        for m in members:
            m.start()
        wait_for(lambda: balanced(members), 120, "10 members holding every partition")
        wait_for(
            lambda: all(m.arrivals and m.arrivals[-1] > time.monotonic() - 0.5 for m in members),
            60,
            "every member reading",
        )
        time.sleep(1.0)  # a second of steady state before the join, to measure from
        newcomer = Member(bootstrap, f"{topic}-g", topic, settings)
        joined = newcomer.start()
        absorbed = wait_for(lambda: balanced([*members, newcomer]), 120, "the 11th member in")
        time.sleep(1.0)
        gap = max(m.longest_gap(joined - 1.0, absorbed + 1.0) for m in members)
        members.append(newcomer)
        return absorbed - joined, gap
    finally:
        feeder.close()
        closers = [threading.Thread(target=m.close) for m in members]
        for t in closers:
            t.start()
        for t in closers:
            t.join(30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    results: dict[str, list[tuple[float, float]]] = {p: [] for p in PROTOCOLS}
    with tempfile.TemporaryDirectory(prefix="samsa-protocols-bench-") as tmp:
        broker = BrokerProcess(Path(tmp) / "data", BROKER)
        bootstrap = broker.start()
        try:
            for run in range(args.runs):
                order = list(PROTOCOLS) if run % 2 == 0 else list(reversed(PROTOCOLS))
                for protocol in order:
                    absorb, gap = measure(bootstrap, protocol, run)
                    results[protocol].append((absorb, gap))
                    print(
                        f"run {run + 1} {protocol:20s} absorb {absorb:6.2f} s"
                        f"  longest gap {gap:6.2f} s",
                        flush=True,
                    )
        finally:
            broker.stop()
            broker.kill()
    print("\nmedians over", args.runs, "runs (10 members absorbing an 11th, 30 partitions):")
    for protocol, rows in results.items():
        absorb = statistics.median(r[0] for r in rows)
        gap = statistics.median(r[1] for r in rows)
        print(
            f"  {protocol:20s} absorb {absorb:6.2f} s  longest gap in a member's stream {gap:6.2f} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
