"""Log compaction against a real broker, read back with confluent-kafka.

The broker runs the cleaner every 100 ms; tests wait for its log line
``cleaned <topic>-0 up to offset N (tombstones=K)`` rather than sleeping.  Each
test writes updates for a few keys, tombstones for two of them, then filler
records for another key so that everything before lies in rolled segments;
the expectation is then exact: the latest record per key below the active
segment's base, without tombstones once their delete horizon passed, plus every
record of the active segment (never cleaned).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.protocol.internal_records.group_records import OffsetKey, decode_key
from samsa.server.cleaner_task import CRASH_ENV
from samsa.testing import BrokerProcess

Row = tuple[int, bytes | None, bytes | None]

CLEANER_SETTINGS = {"log.cleaner.backoff.ms": "100"}
TOPIC_CONFIG = {
    "cleanup.policy": "compact",
    "segment.bytes": "2048",
    "min.cleanable.dirty.ratio": "0",
    "delete.retention.ms": "500",
}


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Poll a cheap observable condition at a short interval, up to ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config=TOPIC_CONFIG)])[topic].result(10)


def produce_workload(bootstrap: str, topic: str) -> list[Row]:
    """Updates for k0..k4, tombstones for k3 and k4, then filler; returns what
    was written with the offsets the broker assigned."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "batch.num.messages": 8})
    written: list[Row] = []

    def on_delivery(err: object, msg: object) -> None:
        assert err is None, err
        written.append((msg.offset(), msg.key(), msg.value()))  # type: ignore[attr-defined]

    entries: list[tuple[bytes, bytes | None]] = [
        (b"k%d" % (i % 5), b"v%d-" % i + b"x" * 40) for i in range(200)
    ]
    entries += [(b"k3", None), (b"k4", None)]
    entries += [(b"filler", b"f%d-" % i + b"y" * 120) for i in range(40)]
    for key, value in entries:
        producer.produce(topic, key=key, value=value, on_delivery=on_delivery)
        producer.poll(0)
    assert producer.flush(15) == 0
    return sorted(written)


def active_base(data_dir: Path, topic: str) -> int:
    return max(int(p.name[:20]) for p in (data_dir / f"{topic}-0").glob("*.log"))


def expected_rows(written: list[Row], active: int) -> list[Row]:
    latest = {key: off for off, key, _ in written if off < active}
    return [
        (off, key, value)
        for off, key, value in written
        if off >= active or (latest[key] == off and value is not None)
    ]


def consume_all(bootstrap: str, topic: str, last_offset: int) -> list[Row]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"{topic}-reader",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    rows: list[Row] = []
    deadline = time.monotonic() + 30
    try:
        while not rows or rows[-1][0] < last_offset:
            assert time.monotonic() < deadline, f"read only up to {rows[-1:]}"
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            offset = msg.offset()
            assert offset is not None
            rows.append((offset, msg.key(), msg.value()))
    finally:
        consumer.close()
    return rows


def cleaned_line(topic: str, offset: int | str, tombstones: str) -> re.Pattern[str]:
    return re.compile(
        rf"cleaned {re.escape(topic)}-0 up to offset {offset} \(tombstones={tombstones}\)"
    )


def test_compaction_keeps_latest_value_per_key_and_drops_tombstones(
    tmp_path: Path, topic_name: str
) -> None:
    broker = BrokerProcess(tmp_path / "data", CLEANER_SETTINGS)
    bootstrap = broker.start()
    try:
        create_topic(bootstrap, topic_name)
        written = produce_workload(bootstrap, topic_name)
        active = active_base(broker.data_dir, topic_name)
        assert active > written[201][0]  # tombstones lie in rolled segments
        done = cleaned_line(topic_name, active, "0")
        wait_for(lambda: done.search(broker.log_text()) is not None, "tombstones removed")
        # An earlier pass kept them (and stamped their delete horizon).
        kept = cleaned_line(topic_name, r"\d+", "[1-9]")
        assert kept.search(broker.log_text()) is not None

        rows = consume_all(bootstrap, topic_name, written[-1][0])
        assert rows == expected_rows(written, active)
        assert [key for _, key, _ in rows if key in (b"k3", b"k4")] == []
        assert {key for off, key, _ in rows if off < active} == {b"k0", b"k1", b"k2", b"filler"}
    finally:
        broker.stop()
        broker.kill()


@pytest.mark.parametrize("point", ["after_cleaned", "after_swap_rename", "mid_replace"])
def test_crash_during_cleaning_loses_nothing(
    tmp_path: Path, topic_name: str, point: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = tmp_path / "data"
    # 1. Write everything with the cleaner off, so the crash hits an idle broker.
    writer = BrokerProcess(data_dir, {"log.cleaner.enable": "false"})
    bootstrap = writer.start()
    try:
        create_topic(bootstrap, topic_name)
        written = produce_workload(bootstrap, topic_name)
    finally:
        assert writer.stop() == 0
    active = active_base(data_dir, topic_name)

    # 2. The cleaner SIGKILLs the broker at the crash point.
    monkeypatch.setenv(CRASH_ENV, point)
    crashing = BrokerProcess(data_dir, CLEANER_SETTINGS)
    try:
        crashing.start()
    except RuntimeError:
        pass  # killed before it reported ready: still the crash we want
    assert crashing.proc is not None
    assert crashing.proc.wait(30) == -9
    assert crashing.wait_for_log(f"cleaner crash point {point}")
    monkeypatch.delenv(CRASH_ENV)

    # 3. Restart: recovery completes or discards the interrupted swap, and
    #    cleaning finishes with nothing retained lost.
    broker = BrokerProcess(data_dir, CLEANER_SETTINGS)
    bootstrap = broker.start()
    try:
        leftovers = [p.name for p in (data_dir / f"{topic_name}-0").glob("*.swap")]
        assert leftovers == []
        completed = "completed interrupted compaction swap" in broker.log_text()
        assert completed == (point != "after_cleaned")
        done = cleaned_line(topic_name, active, "0")
        wait_for(lambda: done.search(broker.log_text()) is not None, "cleaning after restart")
        rows = consume_all(bootstrap, topic_name, written[-1][0])
        assert rows == expected_rows(written, active)
    finally:
        broker.stop()
        broker.kill()


def commit_offsets(bootstrap: str, group: str, offsets: list[TopicPartition]) -> None:
    """Commit ``offsets`` for ``group`` as a standalone confluent-kafka consumer."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False}
    )
    try:
        for tp in offsets:
            consumer.commit(offsets=[tp], asynchronous=False)
    finally:
        consumer.close()


def test_a_committed_group_does_not_stop_compaction_of_other_topics(
    tmp_path: Path, topic_name: str
) -> None:
    """Regression: every ``__consumer_offsets`` partition is a compacted log with
    only its active segment, and planning such a log used to raise, which
    abandoned every cleaner pass, so no topic was compacted again."""
    broker = BrokerProcess(tmp_path / "data", CLEANER_SETTINGS)
    bootstrap = broker.start()
    try:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(f"{topic_name}-src", 1, 1)])[f"{topic_name}-src"].result(10)
        commit_offsets(bootstrap, "committed-group", [TopicPartition(f"{topic_name}-src", 0, 0)])
        offsets_dirs = list(broker.data_dir.glob("__consumer_offsets-*"))
        assert offsets_dirs and all(len(list(d.glob("*.log"))) == 1 for d in offsets_dirs)

        create_topic(bootstrap, topic_name)
        written = produce_workload(bootstrap, topic_name)
        active = active_base(broker.data_dir, topic_name)
        done = cleaned_line(topic_name, active, "0")
        wait_for(lambda: done.search(broker.log_text()) is not None, "the topic compacted")

        assert consume_all(bootstrap, topic_name, written[-1][0]) == expected_rows(written, active)
        assert "log cleaner pass failed" not in broker.log_text()
        assert "marked uncleanable" not in broker.log_text()
        assert re.search(r"log cleaner pass \d+: cleaned [1-9]", broker.log_text())
    finally:
        broker.stop()
        broker.kill()


def read_offsets_partition(
    bootstrap: str, end_offset: int
) -> list[tuple[int, bytes, bytes | None]]:
    """Every record of ``__consumer_offsets-0`` below ``end_offset``, as a client reads it."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "offsets-reader", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition("__consumer_offsets", 0, OFFSET_BEGINNING)])
    rows: list[tuple[int, bytes, bytes | None]] = []
    deadline = time.monotonic() + 30
    try:
        while not rows or rows[-1][0] < end_offset - 1:
            assert time.monotonic() < deadline, f"read only up to {rows[-1:]}"
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            offset, key = msg.offset(), msg.key()
            assert offset is not None and key is not None
            rows.append((offset, key, msg.value()))
    finally:
        consumer.close()
    return [row for row in rows if row[0] < end_offset]


def test_consumer_offsets_is_compacted_and_commits_survive_a_restart(
    tmp_path: Path, topic_name: str
) -> None:
    settings = {
        **CLEANER_SETTINGS,
        "offsets.topic.num.partitions": "1",
        "offsets.topic.segment.bytes": "2048",
    }
    broker = BrokerProcess(tmp_path / "data", settings)
    bootstrap = broker.start()
    try:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(topic_name, 3, 1)])[topic_name].result(10)
        commits = [TopicPartition(topic_name, i % 3, i) for i in range(150)]
        commit_offsets(bootstrap, "busy-group", commits)
        last = {tp.partition: tp.offset for tp in commits}

        segments = sorted((broker.data_dir / "__consumer_offsets-0").glob("*.log"))
        assert len(segments) > 3  # the commits rolled several segments
        clean_end = int(segments[-1].name[:20])
        done = re.compile(rf"cleaned __consumer_offsets-0 up to offset {clean_end} ")
        wait_for(lambda: done.search(broker.log_text()) is not None, "__consumer_offsets compacted")

        below = read_offsets_partition(bootstrap, clean_end)
        keys = [decode_key(key) for _, key, _ in below]
        commit_keys = [k for k in keys if isinstance(k, OffsetKey)]
        assert len(commit_keys) == len(set(commit_keys)) <= 3  # one record per partition
        assert len(below) < clean_end // 10
    finally:
        assert broker.stop() == 0

    bootstrap = broker.start()
    try:
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "busy-group"})
        try:
            committed = consumer.committed(
                [TopicPartition(topic_name, p) for p in range(3)], timeout=10
            )
        finally:
            consumer.close()
        assert {tp.partition: tp.offset for tp in committed} == last
    finally:
        broker.stop()
        broker.kill()
