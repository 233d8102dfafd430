"""Consumer-group benchmark: Samsa vs the peer broker (tansu), side by side in one run.

Two numbers per broker, both through confluent-kafka (librdkafka):

* **rebalance**: 10 members of one group on a 30-partition topic.  Clients are
  created and connected first; the clock starts when the last of the 10
  ``subscribe()`` calls returns and stops at the ``on_assign`` callback that
  completes the final assignment (every member holding 3 partitions, all 30
  owned).  Each member polls in its own thread, as separate applications
  would; librdkafka does the protocol work in its own threads either way.
* **commits/s**: one subscribed consumer doing synchronous ``commit()`` of an
  explicit offset in a loop for ``--seconds``.

Each run starts a fresh Samsa broker (new temp data dir, started as
``samsa.testing`` does, ``group.initial.rebalance.delay.ms=0``) and a fresh
tansu (memory://), measures both, and stops them; runs alternate which broker
goes first.  Medians over ``--runs`` and Samsa/peer ratios are printed last.

Both brokers get identical client settings: session.timeout.ms=6000 (tansu
holds joins for ~half of it) and heartbeat.interval.ms=200, so existing
members learn of a rebalance quickly on both sides.

    .venv/bin/python bench/groups_vs_peer.py [--runs 3] [--seconds 5]
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

from samsa.testing import BrokerProcess

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "client"))
from _tansu import Tansu

MEMBERS, PARTITIONS = 10, 30
CLIENT = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 200, "enable.auto.commit": False}


@contextmanager
def samsa_broker() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="samsa-groups-bench-") as tmp:
        proc = BrokerProcess(Path(tmp) / "data", {"group.initial.rebalance.delay.ms": "0"})
        bootstrap = proc.start()
        try:
            yield bootstrap
        finally:
            proc.stop()
            proc.kill()


@contextmanager
def tansu_broker() -> Iterator[str]:
    peer = Tansu()
    try:
        yield peer.bootstrap
    finally:
        peer.stop()


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


def measure_commits(bootstrap: str, topic: str, seconds: float) -> float:
    """Synchronous commits per second by one subscribed consumer."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-c", **CLIENT})
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + 30
        while not c.assignment():
            if time.monotonic() > deadline:
                raise RuntimeError("commit consumer got no assignment")
            c.poll(0.05)
        tp = c.assignment()[0].partition
        n = 0
        start = time.monotonic()
        end = start + seconds
        while time.monotonic() < end:
            n += 1
            c.commit(offsets=[TopicPartition(topic, tp, n)], asynchronous=False)
        elapsed = time.monotonic() - start
        [got] = c.committed([TopicPartition(topic, tp)], timeout=10)
        assert got.offset == n, f"last commit {n} read back as {got.offset}"
        return n / elapsed
    finally:
        c.close()


def run_one(name: str, broker: object, run: int, seconds: float) -> tuple[float, float]:
    with broker() as bootstrap:  # type: ignore[operator]
        topic = f"groups-bench-{run}"
        create_topic(bootstrap, topic, PARTITIONS)
        rebalance = measure_rebalance(bootstrap, topic)
        commits = measure_commits(bootstrap, topic, seconds)
    print(
        f"run {run} {name:5s} rebalance_s={rebalance:.3f} commits_per_s={commits:.0f}",
        flush=True,
    )
    return rebalance, commits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0, help="commit loop length")
    args = parser.parse_args(argv)

    results: dict[str, list[tuple[float, float]]] = {"samsa": [], "tansu": []}
    brokers = {"samsa": samsa_broker, "tansu": tansu_broker}
    for run in range(1, args.runs + 1):
        order = ["samsa", "tansu"] if run % 2 else ["tansu", "samsa"]
        for name in order:
            results[name].append(run_one(name, brokers[name], run, args.seconds))

    med = {
        name: (statistics.median(r for r, _ in rs), statistics.median(c for _, c in rs))
        for name, rs in results.items()
    }
    s_reb, s_com = med["samsa"]
    t_reb, t_com = med["tansu"]
    print()
    print(f"| metric ({args.runs} runs, median) | samsa | tansu | samsa/tansu |")
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
