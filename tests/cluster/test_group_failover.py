"""A consumer group keeps its committed offsets when its coordinator's broker dies.

Three combined nodes; a topic with replication factor 3 that a librdkafka
producer keeps writing to; a group of two librdkafka consumers that commit
what they consumed after every batch.  The group's coordinator is whichever
broker leads the group's ``__consumer_offsets`` partition (FindCoordinator).
That broker is SIGKILLed.  Then:

* FindCoordinator names a new, live coordinator;
* the members find it and keep consuming and committing;
* no committed offset ever goes backwards: the offsets are sampled with
  OffsetFetch (Admin) all along, before and after the kill, and each
  partition's samples must only grow -- a commit the dead coordinator
  acknowledged but did not replicate would show up as a step back;
* nothing was skipped: every offset below the final committed offset of a
  partition was consumed by some member (at-least-once).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cluster.group_members import CommittedOffsets, Member
from tests.cluster.helpers import call, create_topic, node_metadata, wait_until
from tests.cluster.workload import ConfluentProducer

from samsa.testing.cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "orders"
PARTITIONS = 6
GROUP = "failover-group"
FIND_COORDINATOR = 10


def find_coordinator(cluster: LocalCluster, node_id: int) -> int | None:
    """The group's coordinator as ``node_id`` answers FindCoordinator (None: not known)."""
    body = {"key_type": 0, "coordinator_keys": [GROUP]}
    answer = call(f"127.0.0.1:{cluster.client_ports[node_id]}", FIND_COORDINATOR, 4, body)
    entry = answer["coordinators"][0]
    return None if entry["error_code"] else int(entry["node_id"])


def group_epoch(cluster: LocalCluster, node_id: int) -> int | None:
    """The KIP-848 group epoch on its coordinator ``node_id`` (None: not loaded there)."""
    body = {"group_ids": [GROUP], "include_authorized_operations": False}
    (group,) = call(f"127.0.0.1:{cluster.client_ports[node_id]}", 69, 0, body)["groups"]
    return None if group["error_code"] else int(group["group_epoch"])


def offsets_partition_leaders(cluster: LocalCluster, node_id: int) -> set[int]:
    """The brokers leading a ``__consumer_offsets`` partition, as ``node_id`` sees it."""
    return {
        p["leader_id"]
        for t in node_metadata(cluster, node_id)["topics"]
        if t["name"] == "__consumer_offsets"
        for p in t["partitions"]
    }


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    settings = {
        "group.consumer.heartbeat.interval.ms": "500",
        "group.consumer.session.timeout.ms": "6000",
    }
    with LocalCluster(tmp_path, controllers=3, settings=settings) as c:
        c.start()
        try:
            yield c
        finally:
            for node_id, node in c.nodes.items():
                (tmp_path / f"node-{node_id}.log").write_text(node.log_text())


@pytest.mark.timeout(240)
@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_group_keeps_consuming_and_its_offsets_when_the_coordinator_dies(
    cluster: LocalCluster, protocol: str
) -> None:
    """``consumer``: a KIP-848 group, whose state the successor loads from the log."""
    create_topic(
        cluster.bootstrap,
        TOPIC,
        partitions=PARTITIONS,
        replication_factor=3,
        configs={"min.insync.replicas": "2"},
    )
    producer = ConfluentProducer("writer", cluster.bootstrap, TOPIC, PARTITIONS, rate=100)
    members = [Member(name, cluster.bootstrap, TOPIC, GROUP, protocol) for name in ("m1", "m2")]
    committed = CommittedOffsets(TOPIC, GROUP)
    producer.start()
    try:
        for member in members:
            member.start()
        # Both members hold partitions, consume and commit; offsets are committed
        # for every partition.
        wait_until(
            lambda: all(m.assigned for m in members) and all(m.progress()[1] >= 3 for m in members),
            60,
            "both members assigned, consuming and committing",
        )
        wait_until(
            lambda: len(committed.sample(cluster.bootstrap)) == PARTITIONS,
            30,
            "a committed offset for every partition",
        )
        coordinator = wait_until(
            lambda: find_coordinator(cluster, 1), 15, "the group's coordinator"
        )
        assert coordinator in offsets_partition_leaders(cluster, 1)
        before = committed.sample(cluster.bootstrap)
        progress_before = [m.progress() for m in members]
        epoch_before = group_epoch(cluster, coordinator) if protocol == "consumer" else None

        cluster.kill(coordinator)
        survivors = [n for n in cluster.nodes if n != coordinator]
        bootstrap = cluster.bootstrap_of(survivors)

        def new_coordinator() -> int | None:
            found = {find_coordinator(cluster, n) for n in survivors}
            (only,) = found if len(found) == 1 else (None,)
            return only if only in survivors else None

        successor = wait_until(new_coordinator, 30, f"a coordinator other than {coordinator}")

        def kept_going() -> bool:
            offsets = committed.sample(bootstrap)
            moved = all(offsets.get(p, -1) > before[p] for p in before)
            consumed_more = all(
                m.progress()[0] > c0 + 50 and m.progress()[1] > k0 + 3
                for m, (c0, k0) in zip(members, progress_before, strict=True)
            )
            return moved and consumed_more

        wait_until(
            kept_going, 60, f"the group consuming and committing through coordinator {successor}"
        )
        after = committed.sample(bootstrap)
        if epoch_before is not None:
            # Loaded from the log, not rebuilt by members rejoining (which bumps the epoch).
            assert group_epoch(cluster, successor) == epoch_before
    finally:
        producer.abort()
        for member in members:
            member.stop()

    assert all(after[p] >= before[p] for p in before), (before, after)
    assert committed.steps_back() == [], committed.steps_back()
    consumed: defaultdict[int, set[int]] = defaultdict(set)
    for member in members:
        for partition, offsets in member.consumed.items():
            consumed[partition] |= offsets
    skipped = {
        p: sorted(set(range(after[p])) - consumed[p])[:5]
        for p in after
        if not set(range(after[p])) <= consumed[p]
    }
    assert skipped == {}, f"offsets below the committed offset never consumed: {skipped}"
    errors = [e for m in members for e in m.commit_errors]
    print(
        f"coordinator {coordinator} killed, successor {successor}; "
        f"{len(committed.samples)} offset samples, none back; "
        f"{sum(m.progress()[0] for m in members)} records consumed, "
        f"{sum(m.progress()[1] for m in members)} commits, {len(errors)} failed commits "
        f"({sorted({e for _, e in errors})[:3]})"
    )
