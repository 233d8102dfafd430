"""Total retention racing a slow read of the remote tier (issue 34, "Faults").

One broker tiers a topic to a bucket of the session's S3Proxy, reached
through ``S3FaultProxy``.  Once all but the active segment is tiered the
store turns slow (every request held half a second) and a consumer starts
reading from offset 0, a few KiB a fetch, so it is still in the remote tier
when ``retention.ms=1`` expires every remote segment under it.  The reader
must never get a record that is not the one written at that offset, never
go back, and, once the log start moved past where it was, continue from the
new log start to the end without a gap; afterwards the remote metadata and
the bucket agree (every deleted segment's objects gone, no deletion left
half done).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Iterator

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource
from tests.tiered.broker_tiering import (
    BROKER_SETTINGS,
    EARLIEST,
    create_topic,
    list_offset,
    produce,
    wait_tiered,
)
from tests.tiered.fault_checks import bucket_store, s3_settings, wait_remote_consistent

from samsa.testing import BrokerProcess
from samsa.testing.cluster import wait_until
from samsa.testing.object_store import S3Server
from samsa.testing.s3_faults import S3FaultProxy

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

TOPIC = "retention-race"
RECORDS = 1500


class Tiered:
    def __init__(self, broker: BrokerProcess, proxy: S3FaultProxy, server: S3Server, bucket: str):
        self.broker, self.proxy, self.server, self.bucket = broker, proxy, server, bucket


@pytest.fixture(scope="module")
def tiered(tmp_path_factory: pytest.TempPathFactory, s3_server: S3Server) -> Iterator[Tiered]:
    bucket = s3_server.create_bucket()
    with S3FaultProxy(s3_server.port) as proxy:
        settings = {
            **BROKER_SETTINGS,
            **s3_settings(s3_server, bucket, proxy.endpoint),
            "rlmm.config.remote.log.metadata.topic.replication.factor": "1",
            # A remote read waits this long for the slow store (Kafka's 500 ms
            # would answer every fetch empty while each request takes 0.5 s).
            "remote.fetch.max.wait.ms": "5000",
        }
        broker = BrokerProcess(tmp_path_factory.mktemp("retention-race") / "data", settings)
        broker.start()
        try:
            yield Tiered(broker, proxy, s3_server, bucket)
        finally:
            broker.stop()
            broker.kill()


class SlowReader(threading.Thread):
    """A consumer reading the topic from offset 0, a few KiB a fetch, keeping
    every (offset, value) it got."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__(daemon=True)
        self.bootstrap = bootstrap
        self.records: list[tuple[int, bytes]] = []
        self.crashed: BaseException | None = None
        self._halt = threading.Event()
        self._lock = threading.Lock()

    def run(self) -> None:
        try:
            self._read()
        except BaseException as exc:  # surfaced by the test through ``position``
            self.crashed = exc

    def _read(self) -> None:
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": "slow-reader",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "fetch.max.bytes": 4096,
                "message.max.bytes": 4096,
                "max.partition.fetch.bytes": 4096,
                "fetch.wait.max.ms": 100,
            }
        )
        try:
            consumer.assign([TopicPartition(TOPIC, 0, OFFSET_BEGINNING)])
            while not self._halt.is_set():
                for message in consumer.consume(100, 0.2):
                    if message.error():
                        continue
                    offset, value = message.offset(), message.value()
                    assert offset is not None and isinstance(value, bytes)
                    with self._lock:
                        self.records.append((offset, value))
        finally:
            consumer.close()

    def position(self) -> int:
        """The offset after the last record read (0 before the first)."""
        if self.crashed is not None:
            raise AssertionError("the slow reader crashed") from self.crashed
        with self._lock:
            return self.records[-1][0] + 1 if self.records else 0

    def stop(self) -> None:
        self._halt.set()
        self.join(10)


def test_retention_racing_a_slow_read(tiered: Tiered) -> None:
    broker, proxy = tiered.broker, tiered.proxy
    bootstrap, address = broker.bootstrap, broker.bootstrap
    create_topic(bootstrap, TOPIC)
    written = {p.offset: p.value for p in produce(bootstrap, TOPIC, RECORDS)}
    end = max(written) + 1
    wait_tiered(address, TOPIC, broker.data_dir / f"{TOPIC}-0")
    proxy.delay(0.5)
    reader = SlowReader(bootstrap)
    reader.start()
    try:
        # The reader is in the remote tier, far from its end, when retention strikes.
        wait_until(lambda: reader.position() > 0, 30, "the slow reader's first records", errors=())
        assert reader.position() < end // 2, "the reader was not slow"
        admin = AdminClient({"bootstrap.servers": bootstrap})
        resource = ConfigResource(
            ConfigResource.Type.TOPIC,
            TOPIC,
            incremental_configs=[
                ConfigEntry("retention.ms", "1", incremental_operation=AlterConfigOpType.SET)
            ],
        )
        admin.incremental_alter_configs([resource])[resource].result(10)
        wait_until(
            lambda: list_offset(address, TOPIC, EARLIEST)[1] > reader.position(),
            60,
            "total retention moving the log start past the slow reader",
        )
        proxy.pass_through()
        wait_until(lambda: reader.position() >= end, 60, f"the slow reader at the end, {end}")
    finally:
        proxy.pass_through()
        reader.stop()
    got = reader.records
    wrong = [o for o, v in got if written.get(o) != v]
    assert not wrong, f"records not as written at offsets {wrong[:5]}"
    offsets = [o for o, _ in got]
    jumps = [(a, b) for a, b in itertools.pairwise(offsets) if b != a + 1]
    assert all(b > a for a, b in jumps), f"the reader went back: {jumps[:5]}"
    start = list_offset(address, TOPIC, EARLIEST)[1]
    # Forward jumps only where retention moved the log start under the reader,
    # the last one to at most where the log starts now, and no gap after it.
    assert jumps and jumps[-1][1] <= start, f"jumps {jumps[:5]}, log start {start}"
    resumed = jumps[-1][1]
    assert offsets[offsets.index(resumed) :] == list(range(resumed, end)), "a gap after the jump"
    print(
        f"retention racing a slow read: {len(got)} records read, jumps {jumps[:3]}, "
        f"log start {start}, end {end}"
    )
    store = bucket_store(tiered.server, tiered.bucket)
    try:
        wait_remote_consistent(bootstrap, store, "retention", topic=TOPIC)
    finally:
        asyncio.run(store.close())
