"""JBOD on three nodes: an I/O error on one of a leader's two log dirs.

Three combined nodes, each with two log dirs (and the metadata log in a third,
``metadata.log.dir``, as Kafka allows, so that either data dir may fail);
acks=all idempotent producers (librdkafka and Samsa) and a consumer run all
along (``tests.cluster.fault_run``).  The dir holding a partition on the node
leading it starts failing every write of partition data with EIO
(``io_faults``).  That dir alone goes offline: the node reports it in its
heartbeat, the controller moves the leadership of that dir's partitions to
the other in-sync replicas and takes the node out of their ISR (KIP-858: it
knows the dir of each replica from AssignReplicasToDirs), while the node keeps
running and keeps leading the partitions of its first dir.  The producers are
told (retries), then acknowledged by the new leaders.  After a restart with the
fault removed, the node recovers the dir and rejoins every ISR, and
``finish_and_check`` proves that nothing acknowledged was lost, duplicated or
reordered and that every replica equals its leader.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from tests.cluster.fault_run import TOPIC, Run, finish_and_check, open_run
from tests.cluster.helpers import wait_until

from samsa.testing.cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

NODES = [1, 2, 3]
KEPT = "kept"


def _dirs(tmp_path: Path, node: int) -> tuple[Path, Path]:
    return tmp_path / f"node-{node}" / "a", tmp_path / f"node-{node}" / "b"


@pytest.fixture
def run(tmp_path: Path, rules: Path) -> Iterator[Run]:
    with ExitStack() as stack:
        cluster = stack.enter_context(LocalCluster(tmp_path, controllers=3))
        for n in NODES:
            cluster.nodes[n].settings["metadata.log.dir"] = str(
                tmp_path / f"node-{n}" / "meta"
            )  # --data-dir sets log.dirs: two dirs per node
            first, second = _dirs(tmp_path, n)
            cluster.nodes[n].data_dir = Path(f"{first},{second}")
        yield stack.enter_context(open_run(cluster, tmp_path, NODES))


@contextmanager
def admin_client(bootstrap: str) -> Iterator[AdminClient]:
    yield AdminClient({"bootstrap.servers": bootstrap})


def _leader(run: Run, topic: str, partition: int) -> int:
    with admin_client(run.bootstrap) as client:
        return int(client.list_topics(topic, timeout=10).topics[topic].partitions[partition].leader)


def _kept_partition(run: Run, victim: int, working: Path) -> int:
    """A partition ``victim`` leads in its working dir: a topic of two partitions
    both preferring it, which fewest-first placement puts in different dirs."""
    others = [n for n in NODES if n != victim]
    with admin_client(run.bootstrap) as client:
        futures = client.create_topics(
            [NewTopic(KEPT, 2, -1, replica_assignment=[[victim, *others], [victim, *others[::-1]]])]
        )
        futures[KEPT].result(30)
    wait_until(
        lambda: all(_leader(run, KEPT, p) == victim for p in (0, 1)), 30, "victim leads kept"
    )
    held = [p for p in (0, 1) if (working / f"{KEPT}-{p}").is_dir()]
    assert len(held) == 1, f"expected one partition of {KEPT} in {working}: {held}"
    return held[0]


def _produce_one(bootstrap: str, partition: int) -> None:
    errors: list[object] = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    producer.produce(KEPT, b"kept", partition=partition, on_delivery=lambda e, _m: errors.append(e))
    assert producer.flush(30) == 0 and errors == [None], errors


@pytest.mark.timeout(180)
def test_one_failed_dir_moves_its_leaderships_and_the_node_serves_the_other(
    run: Run, rules: Path, tmp_path: Path, record_property: Callable[[str, Any], None]
) -> None:
    view = run.agreed_view()
    assert view is not None
    partition = 0
    victim = view[partition].leader
    dirs = _dirs(tmp_path, victim)
    failing, working = dirs if (dirs[0] / f"{TOPIC}-{partition}").is_dir() else dirs[::-1]
    kept = _kept_partition(run, victim, working)
    node = run.cluster.nodes[victim]

    def fault() -> None:
        rules.write_text(f"write {failing}/\n")
        assert node.wait_for_log(f"log dir {failing} is offline", 30), node.log_text()[-3000:]

        def moved() -> bool:
            now = run.agreed_view()
            return (
                now is not None
                and now[partition].leader not in (victim, -1)
                and victim not in now[partition].isr
            )

        wait_until(moved, 30, f"leadership of {TOPIC}-{partition} off node {victim}")
        assert node.running, "the node has a working dir left: it must keep running"
        now = run.agreed_view()
        assert now is not None
        # The working dir's leadership stays, and it takes acks=all records.
        assert _leader(run, KEPT, kept) == victim
        _produce_one(run.bootstrap, kept)
        run.wait_progress(f"dir {failing} of node {victim} failed")
        node.stop()
        rules.write_text("")
        run.cluster.start([victim])
        run.wait_healthy(f"node {victim} restarted after its dir failed")
        run.wait_progress(f"node {victim} restarted after its dir failed")

    start, end = run.fault(f"EIO on dir {failing.name} of leader {victim}", fault)
    told = run.retries_between(start, end)
    assert told > 0, "no producer was told of the failed dir: silence"
    line = (
        f"one of two dirs failed on leader {victim}: partition {partition} moved, "
        f"{KEPT}-{kept} still led by it, producer retries {told}"
    )
    print(line)
    record_property("figures", line)
    finish_and_check(run, record_property)
