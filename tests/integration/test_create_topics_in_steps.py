"""A CreateTopics of many partitions, computed a slice at a time on the active
controller, still commits as one metadata transaction and answers as before;
a client asking for the topic meanwhile sees all of it or none of it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.controller.steps import PARTITIONS_PER_STEP
from samsa.protocol.metadata_records import decode_metadata_record
from samsa.raft.persistence.disk_log import DiskRaftLog
from samsa.testing import BrokerProcess

pytestmark = pytest.mark.integration

PARTITIONS = 5 * PARTITIONS_PER_STEP + 3
TOPIC = "wide"


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    # No auto-creation: the watcher's Metadata requests must not create the topic.
    proc = BrokerProcess(tmp_path / "data", {"auto.create.topics.enable": "false"})
    proc.start()
    try:
        yield proc
    finally:
        proc.kill()


def test_a_wide_topic_is_one_transaction_answered_whole(broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    seen: set[int] = set()
    done = threading.Event()

    def watch() -> None:  # a client asking for the topic while it is created
        while not done.is_set():
            topic = admin.list_topics(TOPIC, timeout=30).topics[TOPIC]
            seen.add(len(topic.partitions) if topic.error is None else 0)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        futures = admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)], request_timeout=120)
        futures[TOPIC].result(120)
    finally:
        done.set()
        watcher.join(60)
    assert len(admin.list_topics(TOPIC, timeout=30).topics[TOPIC].partitions) == PARTITIONS
    assert seen <= {0, PARTITIONS}
    # Killed, not stopped: a clean stop snapshots the image and the log's prefix
    # goes; the committed records are on disk either way.
    broker.kill()

    raft_log = DiskRaftLog.open(broker.data_dir)
    try:
        entries = raft_log.read(raft_log.start_offset, 1_000_000)
    finally:
        raft_log.close()
    names = [
        decode_metadata_record(e.payload).name
        for e in entries
        if isinstance(e.payload, bytes) and e.payload
    ]
    start = names.index("TopicRecord") - 1
    assert names[start] == "BeginTransactionRecord"
    assert names[start + 2 : start + 2 + PARTITIONS] == ["PartitionRecord"] * PARTITIONS
    assert names[start + 2 + PARTITIONS] == "EndTransactionRecord"
