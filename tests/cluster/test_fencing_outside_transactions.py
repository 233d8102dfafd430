"""Fencing a broker of many partitions commits its leadership moves outside a
transaction, so every node replays them a step at a time.

The controller's timed work (fencing, elections) is not atomic, as Kafka's is
not: each partition change is a whole leader/ISR state.  Committed as one
transaction, the moves of a broker leading thousands of partitions made every
node replay them in one step that held its event loop for seconds (the
10,000-partition failover bench); outside one, every node replays them a
step at a time and serves requests between steps.  Checked in the committed metadata log of a survivor: the
changes that took the killed broker out are in no transaction.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.cluster.helpers import active_controller, create_topic, node_metadata, wait_until

from samsa.protocol.metadata_records import decode_metadata_record
from samsa.raft.persistence.disk_log import DiskRaftLog
from samsa.server.metadata.loader import RECORDS_PER_STEP
from samsa.testing.cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PARTITIONS = 2 * RECORDS_PER_STEP + 50


@pytest.fixture
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path_factory.mktemp("fencing"), controllers=3) as c:
        c.start()
        yield c


def test_a_fenced_broker_leaves_its_partitions_outside_a_transaction(
    cluster: LocalCluster,
) -> None:
    create_topic(cluster.bootstrap, "many", PARTITIONS, 3)
    controller = active_controller(cluster.bootstrap)
    victim = next(n for n in cluster.nodes if n != controller)

    def isrs_full() -> bool:
        [topic] = node_metadata(cluster, controller, ["many"])["topics"]
        return len(topic["partitions"]) == PARTITIONS and all(
            len(p["isr_nodes"]) == 3 for p in topic["partitions"]
        )

    wait_until(isrs_full, 60, "every replica in sync")
    cluster.nodes[victim].kill()

    def victim_out() -> bool:
        [topic] = node_metadata(cluster, controller, ["many"])["topics"]
        return all(victim not in p["isr_nodes"] for p in topic["partitions"])

    wait_until(victim_out, 60, f"broker {victim} out of every ISR")
    cluster.nodes[controller].kill()  # a clean stop would move its own partitions

    raft_log = DiskRaftLog.open(cluster.nodes[controller].data_dir)
    try:
        entries = raft_log.read(raft_log.start_offset, 1_000_000)
    finally:
        raft_log.close()
    in_transaction = False
    isrs: dict[tuple[bytes, int], list[int]] = {}
    moves = moves_in_transaction = 0
    for entry in entries:
        if not isinstance(entry.payload, bytes) or not entry.payload:
            continue
        record = decode_metadata_record(entry.payload)
        body = record.body
        if record.name == "BeginTransactionRecord":
            in_transaction = True
        elif record.name in ("EndTransactionRecord", "AbortTransactionRecord"):
            in_transaction = False
        elif record.name == "PartitionRecord":
            isrs[bytes(body["topic_id"]), body["partition_id"]] = body["isr"]
        elif record.name == "PartitionChangeRecord" and body.get("isr") is not None:
            key = bytes(body["topic_id"]), body["partition_id"]
            if victim in isrs[key] and victim not in body["isr"]:
                moves += 1
                moves_in_transaction += in_transaction
            isrs[key] = body["isr"]
    assert moves == PARTITIONS
    assert moves_in_transaction == 0
