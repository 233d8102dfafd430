"""The ``samsa`` source reads tiered history straight from the object store (issue 34).

Real brokers with tiering on -- one with the filesystem store, one with S3 on
a real S3Proxy process -- hold topics of which only the active segment is
still on local disk.  Each topic is read three ways on the session's local
Spark: the ``samsa`` source direct from the store (``tieredReads`` with the
store's ``rsm.config.*`` settings as options), the ``samsa`` source through
the brokers (``tieredReads=broker``), and Spark's JVM Kafka connector; the
rows must be identical, and equal to what the producers were acknowledged.
The plan (the Spark partitions the driver made) shows which offsets were
read directly, so a test can not pass by silently reading through the
brokers.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from tests.tiered.broker_tiering import BROKER_SETTINGS

from samsa.client.admin import Admin
from samsa.client.metadata import TopicPartition
from samsa.testing import BrokerProcess
from samsa.testing.cluster import wait_until
from samsa.testing.kafka_reference import KafkaReference
from samsa.testing.object_store import S3Server
from samsa.testing.object_store import s3_server as s3_server

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(600)]

COLUMNS = ("key", "value", "topic", "partition", "offset", "timestamp", "timestampType")
EARLIEST_LOCAL, LATEST_TIERED = -4, -5
SETTINGS = {**BROKER_SETTINGS, "rlmm.config.remote.log.metadata.topic.replication.factor": "1"}
TOPIC_CONFIG = {
    "remote.storage.enable": "true",
    "segment.bytes": "16384",
    "local.retention.bytes": "1",
}
"""Segments of 16 KiB (a handful per partition, so a handful of Spark tasks),
and local retention that keeps only the active one once the others are copied."""


@pytest.fixture(scope="module", autouse=True)
def connector(kafka_reference: KafkaReference, spark: Any) -> None:
    """Skip (or fail in CI, via ``kafka_reference``) without the JVM connector's jars."""
    jars = spark.sparkContext.getConf().get("spark.jars", "")
    assert "spark-sql-kafka" in jars, f"the session has no Kafka connector on spark.jars: {jars!r}"


@pytest.fixture(scope="module")
def fs_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("tiered-fs") / "data", SETTINGS) as proc:
        yield proc


def fs_options(broker: BrokerProcess) -> dict[str, str]:
    """The filesystem store beside the broker's log dir, as the options name it."""
    root = broker.data_dir.parent / f"{broker.data_dir.name}-remote"
    return {"rsm.config.storage.backend.class": "filesystem", "rsm.config.storage.root": str(root)}


@pytest.fixture(scope="module")
def s3_broker(
    s3_server: S3Server, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[BrokerProcess, dict[str, str]]]:
    store = {
        "rsm.config.storage.backend.class": "s3",
        "rsm.config.storage.s3.bucket.name": s3_server.create_bucket(),
        "rsm.config.storage.s3.endpoint.url": s3_server.endpoint,
        "rsm.config.storage.s3.path.style.access.enabled": "true",
        "rsm.config.storage.aws.access.key.id": s3_server.access_key,
        "rsm.config.storage.aws.secret.access.key": s3_server.secret_key,
        "rsm.config.key.prefix": "cluster-a/",
    }
    proc = BrokerProcess(tmp_path_factory.mktemp("tiered-s3") / "data", {**SETTINGS, **store})
    proc.start()
    try:
        yield proc, store
    finally:
        proc.stop()
        proc.kill()


def create(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    new = NewTopic(topic, partitions, 1, config=TOPIC_CONFIG)
    admin.create_topics([new])[topic].result(30)


def produce(bootstrap: str, topic: str, count: int, partitions: int) -> list[tuple[Any, ...]]:
    """Half lz4-compressed, half not, with headers; (partition, offset, key, value) acked."""
    written: list[tuple[Any, ...]] = []
    half = count // 2
    for compression, numbers in (("lz4", range(half)), ("none", range(half, count))):
        producer = Producer(
            {"bootstrap.servers": bootstrap, "compression.type": compression, "linger.ms": 5,
             "batch.num.messages": 25}
        )  # fmt: skip

        def done(err: Any, msg: Any) -> None:
            assert err is None, err
            written.append((msg.partition(), msg.offset(), msg.key(), msg.value()))

        for i in numbers:
            producer.produce(
                topic,
                key=b"key-%d" % i,
                value=b"value-%06d-" % i + b"x" * 60,
                partition=i % partitions,
                headers=[("n", b"%d" % i)],
                on_delivery=done,
            )
            producer.poll(0)
        assert producer.flush(30) == 0
    return sorted(written)


def tier_offsets(
    bootstrap: str, tps: list[TopicPartition]
) -> dict[TopicPartition, tuple[int, int]]:
    """(earliest local, latest tiered) per partition: ListOffsets -4 and -5."""
    with Admin({"bootstrap.servers": bootstrap}) as admin:
        local = admin.list_offsets(dict.fromkeys(tps, EARLIEST_LOCAL))
        tiered = admin.list_offsets(dict.fromkeys(tps, LATEST_TIERED))
    return {tp: (local[tp][0], tiered[tp][0]) for tp in tps}


def wait_tiered(broker: BrokerProcess, topic: str, partitions: int) -> dict[TopicPartition, int]:
    """Until every partition's closed segments are copied and deleted locally (one
    ``.log`` file left in each partition's directory: the remote tier ending right
    below it alone would also hold while later closed segments wait for their copy):
    the local start of each."""
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    dirs = [broker.data_dir / f"{topic}-{p}" for p in range(partitions)]

    def tiered() -> dict[TopicPartition, int] | None:
        if not all(len(list(d.glob("*.log"))) == 1 for d in dirs):
            return None
        found = tier_offsets(broker.bootstrap, tps)
        if all(local > 0 and end == local - 1 for local, end in found.values()):
            return {tp: local for tp, (local, _) in found.items()}
        return None

    return wait_until(tiered, 90, f"{topic} tiered up to its active segments")


def options(bootstrap: str, topic: str, **extra: str) -> dict[str, str]:
    return {"kafka.bootstrap.servers": bootstrap, "subscribe": topic, **extra}


def read(spark: Any, source: str, opts: dict[str, str]) -> list[tuple[Any, ...]]:
    """Every row (with headers) sorted by partition and offset."""
    reader = spark.read.format(source).option("includeHeaders", "true")
    for key, value in opts.items():
        reader = reader.option(key, value)
    rows = reader.load().select(*COLUMNS, "headers").collect()
    return sorted(
        (
            (*(row[c] for c in COLUMNS), [(h.key, bytes(h.value)) for h in row.headers or []])
            for row in rows
        ),
        key=lambda r: (r[3], r[4]),
    )


def plan(opts: dict[str, str]) -> list[Any]:
    """The Spark partitions the driver plans for ``opts`` (planned here, in-process)."""
    from samsa.spark.batch_reader import SamsaBatchReader
    from samsa.spark.options import parse_read_options

    return SamsaBatchReader(parse_read_options(opts, stream=False)).partitions()


def direct_parts(parts: list[Any]) -> list[Any]:
    from samsa.spark.direct.partition import DirectRange

    return [p for p in parts if isinstance(p, DirectRange)]


def check_three_ways(
    spark: Any, bootstrap: str, topic: str, store: dict[str, str], written: list[tuple[Any, ...]]
) -> None:
    direct = read(spark, "samsa", options(bootstrap, topic, **store))
    assert [(r[3], r[4], r[0], r[1]) for r in direct] == written
    assert direct == read(spark, "samsa", options(bootstrap, topic, tieredReads="broker"))
    assert direct == read(spark, "kafka", options(bootstrap, topic))


@pytest.mark.parametrize("store_kind", ["filesystem", "s3"])
def test_direct_reads_give_the_brokers_rows_and_the_jvm_connectors(
    spark: Any, request: pytest.FixtureRequest, store_kind: str
) -> None:
    if store_kind == "filesystem":
        broker: BrokerProcess = request.getfixturevalue("fs_broker")
        store = fs_options(broker)
    else:
        broker, store = request.getfixturevalue("s3_broker")
    bootstrap, topic = broker.bootstrap, f"history-{store_kind}"
    create(bootstrap, topic, 2)
    written = produce(bootstrap, topic, 2000, 2)
    local_start = wait_tiered(broker, topic, 2)

    parts = plan(options(bootstrap, topic, **store))
    direct = direct_parts(parts)
    assert {p.partition for p in direct} == {0, 1} and len(direct) >= 4, parts
    for tp, start in local_start.items():
        mine = [p for p in parts if (p.topic, p.partition) == (tp.topic, tp.partition)]
        assert [p.start for p in mine] == [0] + [p.end for p in mine[:-1]]  # no gap, no overlap
        assert all(p in direct for p in mine if p.end <= start)
        assert all(p not in direct for p in mine if p.start >= start)  # the tail: brokers
    assert not direct_parts(plan(options(bootstrap, topic, tieredReads="broker", **store)))
    check_three_ways(spark, bootstrap, topic, store, written)


def produce_transactions(bootstrap: str, topic: str) -> list[tuple[int, bytes]]:
    """Plain records, a committed transaction, an aborted one spanning several
    segments, more plain records, then an aborted transaction whose ABORT marker
    stays in the active (local) segment while its records are tiered; returns
    the (offset, value) a read_committed reader must see."""
    plain = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    txn = Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": f"{topic}-tx", "linger.ms": 5}
    )
    txn.init_transactions(30)
    committed: list[tuple[int, bytes]] = []

    def send(producer: Any, prefix: bytes, count: int, keep: bool) -> None:
        def done(err: Any, msg: Any) -> None:
            assert err is None, err
            if keep:
                committed.append((msg.offset(), msg.value()))

        for i in range(count):
            producer.produce(topic, value=prefix + b"-%04d-" % i + b"y" * 80, on_delivery=done)
            producer.poll(0)
        producer.flush(30)

    send(plain, b"plain-a", 60, True)
    txn.begin_transaction()
    send(txn, b"committed", 150, True)
    txn.commit_transaction(30)
    txn.begin_transaction()
    send(txn, b"aborted-long", 400, False)
    txn.abort_transaction(30)
    send(plain, b"plain-b", 60, True)
    txn.begin_transaction()
    send(txn, b"aborted-last", 250, False)
    txn.abort_transaction(30)
    return sorted(committed)


def test_read_committed_drops_aborted_transactions_of_tiered_segments(
    spark: Any, fs_broker: BrokerProcess
) -> None:
    bootstrap, topic = fs_broker.bootstrap, "history-transactions"
    create(bootstrap, topic, 1)
    committed = produce_transactions(bootstrap, topic)
    wait_tiered(fs_broker, topic, 1)
    store = fs_options(fs_broker)
    isolation = {"kafka.isolation.level": "read_committed"}

    parts = direct_parts(plan(options(bootstrap, topic, **store, **isolation)))
    assert parts, "nothing planned as a direct read"
    local_start = parts[-1].end
    markers = {marker for p in parts for _pid, _first, marker in p.aborted}
    assert local_start in markers, "the last transaction's marker is local: given by the broker"
    assert len(markers) == 2, markers

    direct = read(spark, "samsa", options(bootstrap, topic, **store, **isolation))
    assert [(r[4], r[1]) for r in direct] == committed
    by_broker = read(spark, "samsa", options(bootstrap, topic, tieredReads="broker", **isolation))
    assert direct == by_broker
    # Spark's connector checks offsets for gaps unless told that gaps (control
    # batches, aborted records) are expected.
    jvm = read(spark, "kafka", options(bootstrap, topic, failOnDataLoss="false", **isolation))
    assert direct == jvm
    uncommitted = read(spark, "samsa", options(bootstrap, topic, **store))
    assert len(uncommitted) == len(committed) + 650
    assert uncommitted == read(spark, "samsa", options(bootstrap, topic, tieredReads="broker"))


def test_ranges_that_start_and_end_inside_segments(spark: Any, fs_broker: BrokerProcess) -> None:
    bootstrap, topic = fs_broker.bootstrap, "history-mid-segment"
    create(bootstrap, topic, 1)
    produce(bootstrap, topic, 900, 1)
    local_start = wait_tiered(fs_broker, topic, 1)[TopicPartition(topic, 0)]
    store = fs_options(fs_broker)
    segments = direct_parts(plan(options(bootstrap, topic, **store)))
    assert len(segments) >= 3
    start = (segments[0].start + segments[0].end) // 2  # inside the first segment
    end = (segments[2].start + segments[2].end) // 2  # inside the third
    bounds = {
        "startingOffsets": f'{{"{topic}": {{"0": {start}}}}}',
        "endingOffsets": f'{{"{topic}": {{"0": {end}}}}}',
        "minPartitions": "7",  # splits segments further, each piece starting mid-segment
    }
    parts = plan(options(bootstrap, topic, **store, **bounds))
    assert len(direct_parts(parts)) == len(parts) >= 7
    assert all(not p.whole_segment for p in direct_parts(parts)[:1])
    direct = read(spark, "samsa", options(bootstrap, topic, **store, **bounds))
    assert [r[4] for r in direct] == list(range(start, end))
    assert direct == read(spark, "samsa", options(bootstrap, topic, tieredReads="broker", **bounds))
    assert end < local_start


def test_broker_reads_never_touch_the_store(
    spark: Any, fs_broker: BrokerProcess, tmp_path: Path
) -> None:
    """A store the executors can not read fails a direct read, naming the offsets,
    and is never contacted with ``tieredReads=broker``."""
    bootstrap, topic = fs_broker.bootstrap, "history-forced"
    create(bootstrap, topic, 1)
    written = produce(bootstrap, topic, 300, 1)
    wait_tiered(fs_broker, topic, 1)
    elsewhere = {
        "rsm.config.storage.backend.class": "filesystem",
        "rsm.config.storage.root": str(tmp_path / "not-the-store"),
    }
    rows = read(spark, "samsa", options(bootstrap, topic, tieredReads="broker", **elsewhere))
    assert [(r[3], r[4], r[0], r[1]) for r in rows] == written
    started = time.monotonic()
    with pytest.raises(Exception, match=r"offsets \d+\.\.\d+ of history-forced-0"):
        read(spark, "samsa", options(bootstrap, topic, tieredReads="direct", **elsewhere))
    assert time.monotonic() - started < 60
