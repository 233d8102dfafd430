"""Consumer-group benchmark: Samsa vs the peer broker (tansu or Apache Kafka), side by side in one run.

Two numbers per broker, both through confluent-kafka (librdkafka):

* **rebalance**: 10 members of one group on a 30-partition topic.  Clients are
  created and connected first; the clock starts when the last of the 10
  ``subscribe()`` calls returns and stops at the ``on_assign`` callback that
  completes the final assignment (every member holding 3 partitions, all 30
  owned).  Each member polls in its own thread, as separate applications
  would; librdkafka does the protocol work in its own threads either way.
* **commits/s**: one subscribed consumer per broker doing synchronous
  ``commit()`` of an explicit offset in a loop, ``--seconds`` in all per
  broker, in ``--slices`` turns: the two loops alternate (after a 0.5 s
  warm-up each), so a slow spell of the shared 2-core host lands on both
  brokers instead of on whichever ran then.  The last offset must read back.

Each run starts a fresh Samsa broker (new temp data dir, started as
``samsa.testing`` does, ``group.initial.rebalance.delay.ms=0``) and a fresh
peer (``--peer tansu``, memory://, or ``--peer kafka``, one KRaft node with
``group.initial.rebalance.delay.ms=0`` too) side by side, measures both, and stops them; runs alternate
which broker goes first.  Medians over ``--runs`` and Samsa/peer ratios are
printed last.

Both brokers get identical client settings: session.timeout.ms=6000 (tansu
holds joins for ~half of it) and heartbeat.interval.ms=200, so existing
members learn of a rebalance quickly on both sides.

    .venv/bin/python -m bench.groups.groups_vs_peer [--runs 5] [--seconds 5] [--slices 10] [--peer kafka]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from bench.common.peers import add_peer_argument, peer_broker
from samsa.testing import BrokerProcess

MEMBERS, PARTITIONS = 10, 30
CLIENT = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 200, "enable.auto.commit": False}


@contextmanager
def samsa_broker() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="samsa-groups-bench-") as tmp:
        proc = BrokerProcess(Path(tmp) / "data", {"group.initial.rebalance.delay.ms": "0"})
        bootstrap = proc.start(timeout=120)  # a loaded shared host starts slowly
        try:
            yield bootstrap
        finally:
            proc.stop()
            proc.kill()


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(20)
    # Wait until metadata shows every partition, so no member assigns from a partial view.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        md = admin.list_topics(topic, timeout=5).topics.get(topic)
        if md is not None and md.error is None and len(md.partitions) == partitions:
            return
        time.sleep(0.05)
    raise RuntimeError(f"topic {topic} did not show {partitions} partitions")


def warm_up(bootstrap: str, topic: str) -> None:
    """One member joins a throw-away group and commits once, not timed: the
    broker creates its offsets topic and loads the group coordinator (and a
    JVM broker JITs that path) before anything is measured, on both sides."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-warmup", **CLIENT})
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 120
        while not consumer.assignment():
            if time.monotonic() > deadline:
                raise RuntimeError("warm-up consumer got no assignment")
            consumer.poll(0.05)
        consumer.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)
    finally:
        consumer.close()


def measure_rebalance(bootstrap: str, topic: str) -> float:
    """Seconds from the last subscribe() to the on_assign completing a 3-each split."""
    group = f"{topic}-g"
    lock = threading.Lock()
    held: dict[int, frozenset[int]] = {}
    done = threading.Event()
    finished_at = [0.0]
    stop = threading.Event()

    def on_assign_for(i: int):  # type: ignore[no-untyped-def]
        def on_assign(_c: Consumer, parts: list[TopicPartition]) -> None:
            now = time.monotonic()
            with lock:
                held[i] = frozenset(p.partition for p in parts)
                sizes = [len(held.get(k, ())) for k in range(MEMBERS)]
                union = set().union(*held.values())
                if len(union) == PARTITIONS and sizes == [PARTITIONS // MEMBERS] * MEMBERS:
                    finished_at[0] = now
                    done.set()

        return on_assign

    def on_revoke_for(i: int):  # type: ignore[no-untyped-def]
        def on_revoke(_c: Consumer, _parts: list[TopicPartition]) -> None:
            with lock:
                held[i] = frozenset()

        return on_revoke

    consumers = [
        Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": f"m{i}", **CLIENT})
        for i in range(MEMBERS)
    ]  # fmt: skip
    for c in consumers:  # connect and learn metadata before the clock starts
        c.list_topics(topic, timeout=10)

    def poll_loop(c: Consumer) -> None:
        while not stop.is_set():
            c.poll(0.02)

    threads = [threading.Thread(target=poll_loop, args=(c,), daemon=True) for c in consumers]
    try:
        for i, c in enumerate(consumers):
            c.subscribe([topic], on_assign=on_assign_for(i), on_revoke=on_revoke_for(i))
        started = time.monotonic()
        for t in threads:
            t.start()
        if not done.wait(60):
            raise RuntimeError(f"no full assignment within 60 s: {held}")
        return finished_at[0] - started
    finally:
        stop.set()
        for t in threads:
            t.join(5)
        closers = [threading.Thread(target=c.close) for c in consumers]
        for t in closers:
            t.start()
        for t in closers:
            t.join(30)


class CommitLoop:
    """One subscribed consumer committing synchronously, measured in slices.

    The two brokers' loops take turns slice by slice, so a slow spell of the
    shared host lands on both instead of on whichever broker ran then.
    """

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self.consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": f"{topic}-c", **CLIENT}
        )
        self.consumer.subscribe([topic])
        deadline = time.monotonic() + 30
        while not self.consumer.assignment():
            if time.monotonic() > deadline:
                raise RuntimeError("commit consumer got no assignment")
            self.consumer.poll(0.05)
        self.partition = self.consumer.assignment()[0].partition
        self.commits = 0  # the last committed offset is the commit count
        self.counted_from = 0
        self.elapsed = 0.0

    def run(self, seconds: float) -> None:
        commit, topic, tp = self.consumer.commit, self.topic, self.partition
        n = self.commits
        start = time.monotonic()
        end = start + seconds
        while time.monotonic() < end:
            n += 1
            commit(offsets=[TopicPartition(topic, tp, n)], asynchronous=False)
        self.elapsed += time.monotonic() - start
        self.commits = n

    def start_counting(self) -> None:
        self.counted_from, self.elapsed = self.commits, 0.0

    def rate(self) -> float:
        """Counted commits per second, after checking the last one reads back."""
        [got] = self.consumer.committed([TopicPartition(self.topic, self.partition)], timeout=10)
        assert got.offset == self.commits, f"last commit {self.commits} read back as {got.offset}"
        return (self.commits - self.counted_from) / self.elapsed

    def close(self) -> None:
        self.consumer.close()


def run_one(run: int, seconds: float, slices: int, peer: str) -> dict[str, tuple[float, float]]:
    """Both brokers up side by side: rebalance on each, then commit slices in turn."""
    order = ["samsa", peer] if run % 2 else [peer, "samsa"]
    topic = f"groups-bench-{run}"
    with samsa_broker() as samsa, peer_broker(peer) as other:
        bootstraps = {"samsa": samsa, peer: other.bootstrap}
        rebalance = {}
        for name in order:
            create_topic(bootstraps[name], topic, PARTITIONS)
            warm_up(bootstraps[name], topic)
            rebalance[name] = measure_rebalance(bootstraps[name], topic)
        loops: dict[str, CommitLoop] = {}
        try:
            for name in order:  # inside try: a failed second loop still closes the first
                loops[name] = CommitLoop(bootstraps[name], topic)
            for name in order:  # warm-up, not counted
                loops[name].run(0.5)
                loops[name].start_counting()
            for _ in range(slices):
                for name in order:
                    loops[name].run(seconds / slices)
            result = {}
            for name in order:
                rate = loops[name].rate()
                result[name] = (rebalance[name], rate)
                print(
                    f"run {run} {name:5s} rebalance_s={rebalance[name]:.3f} commits_per_s={rate:.0f}",
                    flush=True,
                )
            return result
        finally:
            for loop in loops.values():
                loop.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0, help="commit time per broker")
    parser.add_argument("--slices", type=int, default=10, help="turns the commit loops take")
    add_peer_argument(parser)
    args = parser.parse_args(argv)

    peer = args.peer
    results: dict[str, list[tuple[float, float]]] = {"samsa": [], peer: []}
    for run in range(1, args.runs + 1):
        for name, result in run_one(run, args.seconds, args.slices, peer).items():
            results[name].append(result)

    med = {
        name: (statistics.median(r for r, _ in rs), statistics.median(c for _, c in rs))
        for name, rs in results.items()
    }
    s_reb, s_com = med["samsa"]
    t_reb, t_com = med[peer]
    print()
    print("Warm-up, the same on both sides and not counted: one member joins a throw-away")
    print("group and commits once per fresh broker; each commit loop runs 0.5 s first.\n")
    print(f"| metric ({args.runs} runs, median) | samsa | {peer} | samsa/{peer} |")
    print("|---|---|---|---|")
    print(f"| rebalance 10 members / 30 partitions (s) | {s_reb:.3f} | {t_reb:.3f} | {s_reb / t_reb:.2f}x |")  # fmt: skip
    print(f"| sync offset commits/s (1 consumer) | {s_com:.0f} | {t_com:.0f} | {s_com / t_com:.2f}x |")  # fmt: skip
    print()
    print(f"targets: rebalance <= 1 s: {'PASS' if s_reb <= 1 else 'MISS'}; "
          f"rebalance below peer: {'PASS' if s_reb < t_reb else 'MISS'}; "
          f"commits >= 1.0x peer: {'PASS' if s_com >= t_com else 'MISS'}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
