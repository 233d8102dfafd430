"""What the tiered-storage benchmarks share: a Samsa broker tiering to a real S3Proxy (or
to the filesystem store),
producing in a fresh process, waiting until a topic is tiered, and processes' CPU.

The broker copies every 500 ms and runs local retention every 500 ms (Kafka's
defaults, 30 s and 5 min, would only make the benchmarks wait); everything else
is at its defaults.  S3Proxy is started by ``samsa.testing.object_store`` as the
tests start it (``scripts/object-store.sh`` fetches it).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from samsa.testing import BrokerProcess
from samsa.testing.object_store import S3Server, load_object_store

EARLIEST_LOCAL, LATEST_TIERED = -4, -5
TICKS = os.sysconf("SC_CLK_TCK")

BROKER_SETTINGS = {
    "remote.log.storage.system.enable": "true",
    "remote.log.manager.task.interval.ms": "500",
    "log.retention.check.interval.ms": "500",
    "rlmm.config.remote.log.metadata.topic.num.partitions": "5",
    "rlmm.config.remote.log.metadata.topic.replication.factor": "1",
}


@dataclass(frozen=True)
class Tiered:
    broker: BrokerProcess
    s3: S3Server | None
    """None with the filesystem store."""
    store_options: dict[str, str]
    """The broker's ``rsm.config.*`` settings: the Spark source's options too."""
    work: Path

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap


@contextmanager
def tiered_broker(settings: dict[str, str] | None = None, store: str = "s3") -> Iterator[Tiered]:
    """One Samsa broker tiering to a bucket of a real S3Proxy (``store="s3"``) or to
    the filesystem store in a directory beside its log dir (``"filesystem"``), in
    a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="samsa-tiered-bench-") as tmp:
        work = Path(tmp)
        s3 = S3Server(load_object_store(), work / "buckets") if store == "s3" else None
        if s3 is None:
            options = {
                "rsm.config.storage.backend.class": "filesystem",
                "rsm.config.storage.root": str(work / "remote"),
            }
        else:
            s3.start()
            options = {
                "rsm.config.storage.backend.class": "s3",
                "rsm.config.storage.s3.bucket.name": s3.create_bucket("tiered"),
                "rsm.config.storage.s3.endpoint.url": s3.endpoint,
                "rsm.config.storage.s3.path.style.access.enabled": "true",
                "rsm.config.storage.aws.access.key.id": s3.access_key,
                "rsm.config.storage.aws.secret.access.key": s3.secret_key,
            }
        try:
            broker = BrokerProcess(
                work / "data", {**BROKER_SETTINGS, **options, **(settings or {})}
            )
            broker.start(timeout=120)
            try:
                yield Tiered(broker, s3, options, work)
            finally:
                broker.stop()
        finally:
            if s3 is not None:
                s3.stop()


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads) from /proc, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def pid_of(process: object) -> int:
    proc = getattr(process, "proc", None)
    assert proc is not None, f"{process} is not running"
    return int(proc.pid)


def create_topic(bootstrap: str, topic: str, partitions: int, config: dict[str, str]) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1, config=config)])[topic].result(30)


def produce(bootstrap: str, topic: str, records: int, size: int, partitions: int) -> float:
    """Send ``records`` values of ``size`` bytes round-robin over the partitions with
    confluent-kafka (acks=1, 5 ms linger, 1 MB batches); returns records/s.  Values
    are a counter and bytes from a small pool: unique records whose Parquet copies
    compress, so writing Parquet costs the Spark jobs little beside reading."""
    from confluent_kafka import Producer

    pool = [os.urandom(size) for _ in range(16)]
    producer = Producer(
        {"bootstrap.servers": bootstrap, "acks": 1, "linger.ms": 5, "batch.size": 1_000_000,
         "queue.buffering.max.messages": 1_000_000, "queue.buffering.max.kbytes": 1_000_000}
    )  # fmt: skip
    failed = 0

    def on_delivery(err: object, _msg: object) -> None:
        nonlocal failed
        failed += err is not None

    started = time.perf_counter()
    for i in range(records):
        value = b"%012d" % i + pool[i % 16][12:]
        while True:
            try:
                producer.produce(topic, value, partition=i % partitions, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    assert producer.flush(300) == 0 and not failed, f"{failed} records not acknowledged"
    return records / (time.perf_counter() - started)


def consume(bootstrap: str, topic: str, records: int, partitions: int) -> float:
    """Read ``records`` from offset 0 of every partition with confluent-kafka; records/s."""
    import uuid

    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex}",
         "enable.auto.commit": False, "fetch.queue.backoff.ms": 10}
    )  # fmt: skip
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    count = 0
    started = time.perf_counter()
    deadline = time.monotonic() + 900
    while count < records and time.monotonic() < deadline:
        for msg in consumer.consume(10_000, 1.0):
            if msg.error():
                raise KafkaException(msg.error())
            count += 1
    seconds = time.perf_counter() - started
    consumer.close()
    if count < records:
        raise RuntimeError(f"read only {count} of {records} records of {topic}")
    return count / seconds


def tier_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, tuple[int, int]]:
    """(earliest local, latest tiered) per partition: ListOffsets -4 and -5."""
    from samsa.client.admin import Admin
    from samsa.client.metadata import TopicPartition

    tps = [TopicPartition(topic, p) for p in range(partitions)]
    with Admin({"bootstrap.servers": bootstrap}) as admin:
        local = admin.list_offsets(dict.fromkeys(tps, EARLIEST_LOCAL))
        tiered = admin.list_offsets(dict.fromkeys(tps, LATEST_TIERED))
    return {tp.partition: (local[tp][0], tiered[tp][0]) for tp in tps}


def wait_tiered(setup: Tiered, topic: str, partitions: int, timeout: float = 3600) -> float:
    """Until every closed segment of ``topic`` is copied and deleted locally (one
    ``.log`` left per partition, the remote tier ending right below it); seconds waited."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        dirs = [setup.broker.data_dir / f"{topic}-{p}" for p in range(partitions)]
        if all(len(list(d.glob("*.log"))) == 1 for d in dirs):
            offsets = tier_offsets(setup.bootstrap, topic, partitions)
            if all(local > 0 and end == local - 1 for local, end in offsets.values()):
                return time.monotonic() - started
        time.sleep(0.5)
    raise TimeoutError(f"{topic} was not tiered within {timeout} s")


def local_bytes(setup: Tiered, topic: str, partitions: int) -> int:
    return sum(
        f.stat().st_size
        for p in range(partitions)
        for f in (setup.broker.data_dir / f"{topic}-{p}").glob("*.log")
    )
