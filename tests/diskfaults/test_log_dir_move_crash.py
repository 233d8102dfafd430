"""A broker killed while it moves a replica between its log dirs loses nothing.

One real broker with two log dirs moves a partition from one to the other
(AlterReplicaLogDirs through Samsa's admin client, as Kafka's
``Admin.alterReplicaLogDirs`` sends it):

* SIGKILL in the middle of the copy (slowed by
  ``replica.alter.log.dirs.io.max.bytes.per.second``): the restarted broker
  finds the ``-future`` log, resumes the copy from its end while producers
  write on, and finishes the move;
* SIGKILL inside the swap (``SAMSA_DIR_MOVE_CRASH_AT``, after each of its two
  renames): the restarted broker has exactly one log of the partition.

Every time, every acknowledged record is read back once, in order.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Producer
from tests.cluster.helpers import admin, create_topic
from tests.cluster.workload import read_final_log

from samsa.testing import BrokerProcess

pytestmark = pytest.mark.integration

TOPIC = "moving"
CRASH_ENV = "SAMSA_DIR_MOVE_CRASH_AT"
VALUE = b"x" * 1000


def produce(bootstrap: str, first: int, count: int) -> list[bytes]:
    """``count`` records numbered from ``first``, each acknowledged (acks=all)."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    values = [b"%08d:" % i + VALUE for i in range(first, first + count)]
    failed: list[object] = []
    for value in values:
        producer.produce(
            TOPIC, value, partition=0, on_delivery=lambda e, _m: e and failed.append(e)
        )
    assert producer.flush(60) == 0 and not failed, failed[:3]
    return values


def partition_dirs(root: Path) -> dict[str, list[str]]:
    """Each log dir's directories of the partition (current, -future, -delete)."""
    return {
        d.name: sorted(p.name for p in d.iterdir() if p.name.startswith(f"{TOPIC}-0"))
        for d in (root / "a", root / "b")
    }


def move(bootstrap: str, target: Path) -> None:
    with admin(bootstrap) as client:
        assert client.alter_replica_log_dirs({(TOPIC, 0, 1): str(target)}, timeout=10) == {
            (TOPIC, 0, 1): None
        }


def start_with_topic(
    root: Path, settings: dict[str, str] | None = None
) -> tuple[BrokerProcess, Path, Path]:
    """A broker on dirs a/ and b/ with the partition in a/; (broker, source, target)."""
    source, target = root / "a", root / "b"
    broker = BrokerProcess(Path(f"{source},{target}"), settings)
    broker.start()
    create_topic(broker.bootstrap, "other")  # a/ holds one more: the next lands in b/ ...
    create_topic(broker.bootstrap, TOPIC)
    if not (source / f"{TOPIC}-0").is_dir():
        source, target = target, source  # ... unless placement chose otherwise
    return broker, source, target


def future_bytes(target: Path) -> int:
    futures = [p for p in target.iterdir() if p.name.endswith("-future")]
    return sum(f.stat().st_size for d in futures for f in d.glob("*.log"))


def test_sigkill_in_the_middle_of_the_copy_resumes_it_at_restart(tmp_path: Path) -> None:
    # The copy runs at 100 KB/s once its first second's worth (Kafka's quota
    # window) is spent, so a kill finds it half done.
    broker, source, target = start_with_topic(
        tmp_path, {"replica.alter.log.dirs.io.max.bytes.per.second": "100000"}
    )
    try:
        written = produce(broker.bootstrap, 0, 2500)
        size = sum(f.stat().st_size for f in (source / f"{TOPIC}-0").glob("*.log"))
        move(broker.bootstrap, target)
        assert broker.wait_for_log(f"[{TOPIC}-0] moving from {source} to {target}", 10)
        copied = 0
        for _ in range(200):
            copied = future_bytes(target)
            if copied > 0:
                break
            broker.wait_for_log("never printed", 0.05)
        assert 0 < copied < size, (copied, size)
        broker.kill()
        assert any(n.endswith("-future") for n in partition_dirs(tmp_path)[target.name])

        restarted = BrokerProcess(Path(f"{source},{target}"))  # no throttle now
        broker = restarted
        restarted.start()
        assert restarted.wait_for_log(
            f"[{TOPIC}-0] resuming the move from {source} to {target}", 10
        )
        written += produce(restarted.bootstrap, 2500, 500)  # while it copies
        assert restarted.wait_for_log(f"[{TOPIC}-0] moved from {source} to {target}", 60)
        assert restarted.wait_for_log(
            f"[{TOPIC}-0] the controller recorded the replica in {target}", 1
        )
        assert restarted.wait_for_log(f"[{TOPIC}-0] deleted log", 10)  # the old files
        assert partition_dirs(tmp_path) == {target.name: [f"{TOPIC}-0"], source.name: []}
        written += produce(restarted.bootstrap, 3000, 10)  # the new log takes writes
        stored = [value for _, value in read_final_log(restarted.bootstrap, TOPIC, 1)[0]]
        assert stored == written
    finally:
        if broker.running:
            broker.kill()


@pytest.mark.parametrize("point", ["current_renamed", "future_renamed"])
def test_sigkill_inside_the_swap_leaves_one_log(
    tmp_path: Path, point: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CRASH_ENV, point)
    broker, source, target = start_with_topic(tmp_path)
    try:
        written = produce(broker.bootstrap, 0, 300)
        move(broker.bootstrap, target)
        assert broker.proc is not None and broker.proc.wait(30) == -9
        assert broker.wait_for_log(f"log dir move crash point {point}", 1)
        monkeypatch.delenv(CRASH_ENV)

        broker = BrokerProcess(Path(f"{source},{target}"))
        broker.start()
        if point == "current_renamed":
            assert broker.wait_for_log(f"[{TOPIC}-0] finishing the swap a restart cut short", 1)
        dirs = partition_dirs(tmp_path)
        assert dirs == {target.name: [f"{TOPIC}-0"], source.name: []}, dirs
        written += produce(broker.bootstrap, 300, 10)
        stored = [value for _, value in read_final_log(broker.bootstrap, TOPIC, 1)[0]]
        assert stored == written
    finally:
        if broker.running:
            broker.kill()
