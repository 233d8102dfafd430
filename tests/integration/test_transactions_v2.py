"""Transaction version 2 (KIP-890 part 2) on the wire, spoken by a raw client.

``transaction.version`` is not advertised yet, so no real client speaks it to
Samsa; these drive the pieces a version 2 producer uses: Produce v12 (the
leader adds the partition to the transaction itself) and EndTxn v5 (the epoch
is bumped on every commit/abort and answered), beside a classic client.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from tests.integration.test_bad_input import RawClient
from tests.integration.test_transactions import new_topic, read_all, stable_end, transaction
from tests.integration.test_transactions import producer as classic_producer

from samsa.errors import ErrorCode
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.testing import BrokerProcess

pytestmark = pytest.mark.integration


class RawTxnProducer:
    def __init__(self, bootstrap: str, transactional_id: str) -> None:
        self.client = RawClient(bootstrap)
        self.transactional_id = transactional_id
        self.sequence = 0
        deadline = time.monotonic() + 20
        while True:  # the coordinator may still be loading __transaction_state
            init = self.client.call(
                22, 5, {"transactional_id": transactional_id, "transaction_timeout_ms": 60000}
            )
            if init["error_code"] == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert init["error_code"] == 0
        self.pid, self.epoch = init["producer_id"], init["producer_epoch"]

    def produce(self, topic: str, value: bytes, *, epoch: int | None = None) -> int:
        builder = RecordBatchBuilder(
            producer_id=self.pid,
            producer_epoch=self.epoch if epoch is None else epoch,
            base_sequence=self.sequence,
            is_transactional=True,
        )
        builder.append(1_000, b"k", value)
        body = {
            "transactional_id": self.transactional_id,
            "acks": -1,
            "timeout_ms": 5000,
            "topic_data": [
                {"name": topic, "partition_data": [{"index": 0, "records": builder.build()}]}
            ],
        }
        answer = self.client.call(0, 12, body)["responses"][0]["partition_responses"][0]
        if answer["error_code"] == 0:
            self.sequence += 1
        return int(answer["error_code"])

    def end(self, commit: bool, *, epoch: int | None = None) -> dict[str, Any]:
        answer: dict[str, Any] = self.client.call(
            26,
            5,
            {
                "transactional_id": self.transactional_id,
                "producer_id": self.pid,
                "producer_epoch": self.epoch if epoch is None else epoch,
                "committed": commit,
            },
        )
        return answer


def test_produce_v12_adds_the_partition_and_end_txn_v5_bumps_the_epoch(
    broker: BrokerProcess,
) -> None:
    bootstrap = broker.bootstrap
    topic = new_topic(bootstrap)
    p = RawTxnProducer(bootstrap, f"tv2-{topic}")
    first = p.epoch
    # No AddPartitionsToTxn: the leader adds the partition for a v12 producer.
    assert p.produce(topic, b"committed") == ErrorCode.NONE
    assert stable_end(bootstrap, topic) == 0, "the transaction is open"
    ended = p.end(True)
    assert (ended["error_code"], ended["producer_id"], ended["producer_epoch"]) == (
        0,
        p.pid,
        first + 1,
    )
    # A retry of the same EndTxn is answered as done, with the new epoch.
    retried = p.end(True)
    assert (retried["error_code"], retried["producer_epoch"]) == (0, first + 1)
    p.epoch, p.sequence = first + 1, 0  # a new epoch starts its sequences again
    assert p.produce(topic, b"aborted") == ErrorCode.NONE
    ended = p.end(False)
    assert (ended["error_code"], ended["producer_epoch"]) == (0, first + 2)
    # A late write at a finished transaction's epoch cannot open a new one.
    assert p.produce(topic, b"zombie", epoch=first + 1) == ErrorCode.INVALID_PRODUCER_EPOCH
    values = read_all(bootstrap, topic, "read_committed", lambda v: len(v) >= 1, timeout=5)
    assert values == [b"committed"]
    p.client.close()


def test_a_classic_producer_keeps_its_epoch_beside_a_version_2_one(
    broker: BrokerProcess,
) -> None:
    bootstrap = broker.bootstrap
    topic = new_topic(bootstrap)
    v2 = RawTxnProducer(bootstrap, f"tv2b-{topic}")
    classic = classic_producer(bootstrap, f"classic-{topic}")
    assert v2.produce(topic, b"v2") == ErrorCode.NONE
    transaction(classic, topic, [b"classic-1"], commit=True)
    assert v2.end(True)["producer_epoch"] == v2.epoch + 1
    transaction(classic, topic, [b"classic-2"], commit=True)  # same epoch, still accepted
    values = read_all(bootstrap, topic, "read_committed", lambda v: len(v) >= 3)
    assert sorted(values) == [b"classic-1", b"classic-2", b"v2"]
    v2.client.close()


def test_txn_offset_commit_v5_adds_the_offsets_partition_itself(
    broker: BrokerProcess,
) -> None:
    """A version 2 producer sends no AddOffsetsToTxn: the offsets still count on commit."""
    import confluent_kafka as ck

    bootstrap = broker.bootstrap
    topic = new_topic(bootstrap)
    group = f"g-{topic}"
    p = RawTxnProducer(bootstrap, f"tv2c-{topic}")

    def commit_offset(offset: int) -> int:
        body = {
            "transactional_id": p.transactional_id,
            "group_id": group,
            "producer_id": p.pid,
            "producer_epoch": p.epoch,
            "generation_id": -1,
            "member_id": "",
            "group_instance_id": None,
            "topics": [
                {
                    "name": topic,
                    "partitions": [
                        {
                            "partition_index": 0,
                            "committed_offset": offset,
                            "committed_leader_epoch": -1,
                            "committed_metadata": None,
                        }
                    ],
                }
            ],
        }
        deadline = time.monotonic() + 20
        while True:  # the group's coordinator may still be loading
            code = int(p.client.call(28, 5, body)["topics"][0]["partitions"][0]["error_code"])
            if code != ErrorCode.COORDINATOR_LOAD_IN_PROGRESS or time.monotonic() > deadline:
                return code
            time.sleep(0.05)

    assert commit_offset(42) == ErrorCode.NONE
    assert p.end(True)["error_code"] == 0
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        committed = consumer.committed([ck.TopicPartition(topic, 0)], timeout=10)
    finally:
        consumer.close()
    assert committed[0].offset == 42
    # The old epoch is fenced for offsets too.
    assert commit_offset(43) in (ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_PRODUCER_EPOCH)
    p.client.close()
