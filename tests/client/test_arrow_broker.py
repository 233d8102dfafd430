"""The columnar read path against a real Samsa broker, with confluent-kafka writing.

PartitionRangeReader over several partitions written with compression and
headers (ranges starting and ending inside batches), on a compacted topic
(offset gaps, a range whose last offsets were cleaned away), after
``delete_records`` (DataLossError, or a warning and a skip), against an
unreachable broker; and ``Consumer.poll_arrow`` with a group and commits.
"""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")

from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from samsa.client.admin import Admin  # noqa: E402
from samsa.client.arrow import DataLossError, PartitionRangeReader, arrow_schema  # noqa: E402
from samsa.client.consumer import Consumer  # noqa: E402
from samsa.client.errors import KafkaTimeoutError  # noqa: E402
from samsa.testing import BrokerProcess  # noqa: E402

pytestmark = pytest.mark.integration

Row = tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """One broker for the module, its cleaner running every 100 ms for the compaction case."""
    with BrokerProcess(
        tmp_path_factory.mktemp("arrow") / "data", {"log.cleaner.backoff.ms": "100"}
    ) as proc:
        yield proc


def _create(bootstrap: str, partitions: int, config: dict[str, str] | None = None) -> str:
    name = f"arrow-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1, config=config or {})])[name].result(15)
    return name


def _produce(
    bootstrap: str,
    topic: str,
    entries: list[tuple[int, bytes | None, bytes | None, list[tuple[str, bytes]] | None]],
    **cfg: object,
) -> list[Row]:
    """Write (partition, key, value, headers) entries; the rows written, with their offsets."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, **cfg})
    written: list[Row] = []

    def on_delivery(headers: list[tuple[str, bytes | None]], err: object, msg: Any) -> None:
        assert err is None, err
        written.append((msg.partition(), msg.offset(), msg.key(), msg.value(), headers))

    for partition, key, value, headers in entries:
        producer.produce(
            topic,
            value,
            key,
            partition,
            on_delivery=functools.partial(on_delivery, list(headers or [])),
            headers=headers,
        )
        producer.poll(0)
    assert producer.flush(20) == 0
    return sorted(written, key=lambda r: (r[0], r[1]))


def _read(
    bootstrap: str,
    topic: str,
    partition: int,
    start: int,
    end: int,
    config: dict[str, object] | None = None,
    **kw: object,
) -> list[tuple[object, ...]]:
    rows: list[tuple[object, ...]] = []
    with PartitionRangeReader(
        {"bootstrap.servers": bootstrap, **(config or {})}, topic, partition, start, end, **kw
    ) as reader:  # type: ignore[arg-type]
        for batch in reader:
            assert batch.schema == arrow_schema(
                bool(kw.get("include_headers")), bool(kw.get("spark"))
            )
            d = batch.to_pydict()
            for i in range(batch.num_rows):
                hs = [(h["key"], h["value"]) for h in d["headers"][i]] if "headers" in d else []
                assert d["topic"][i] == topic and d["partition"][i] == partition
                rows.append((partition, d["offset"][i], d["key"][i], d["value"][i], hs))
    return rows


def test_ranges_over_compressed_partitions_with_headers(broker: BrokerProcess) -> None:
    bootstrap = broker.bootstrap
    topic = _create(bootstrap, 3)
    entries = []
    for i in range(3000):
        key = None if i % 7 == 0 else b"key-%d" % i
        value = b"" if i % 11 == 0 else b"value-%d-" % i + b"x" * (i % 300)
        headers = [("h", b"%d" % i), ("n", b"")] if i % 5 == 0 else None
        entries.append((i % 3, key, value, headers))
    written = _produce(bootstrap, topic, entries[:1500], **{"compression.type": "lz4"})
    written += _produce(bootstrap, topic, entries[1500:], **{"compression.type": "zstd"})
    written.sort(key=lambda r: (r[0], r[1]))
    for partition in range(3):
        mine = [r for r in written if r[0] == partition]
        assert len(mine) == 1000
        got = _read(
            bootstrap, topic, partition, 0, 1000, include_headers=True, max_rows_per_batch=333
        )
        assert got == mine
        # Start and end inside batches (linger groups hundreds of records per batch).
        got = _read(bootstrap, topic, partition, 123, 877, include_headers=True, spark=True)
        assert got == mine[123:877]
    assert _read(bootstrap, topic, 0, 500, 500) == []


def test_compacted_range_with_gaps_and_cleaned_tail(broker: BrokerProcess) -> None:
    bootstrap = broker.bootstrap
    topic = _create(
        bootstrap,
        1,
        {"cleanup.policy": "compact", "segment.bytes": "2048", "min.cleanable.dirty.ratio": "0"},
    )
    entries = [(0, b"k%d" % (i % 5), b"v%d-" % i + b"x" * 40, None) for i in range(200)]
    entries += [(0, b"filler", b"f%d-" % i + b"y" * 120, None) for i in range(40)]
    written = _produce(bootstrap, topic, entries, **{"batch.num.messages": 8, "linger.ms": 0})
    active = max(int(p.name[:20]) for p in (broker.data_dir / f"{topic}-0").glob("*.log"))
    assert broker.wait_for_log(f"cleaned {topic}-0 up to offset {active} (", 30)
    latest = {key: off for _p, off, key, _v, _h in written if off < active}
    expected = [r for r in written if r[1] >= active or latest[r[2]] == r[1]]
    assert len(expected) < len(written)
    assert _read(bootstrap, topic, 0, 0, written[-1][1] + 1) == expected
    # Ranges whose records (or last records) were all cleaned away still end.
    survivors = sorted(latest.values())
    assert survivors[0] > 100
    assert _read(bootstrap, topic, 0, 0, 100) == []
    committed = {"isolation.level": "read_committed"}  # bounded by the last stable offset
    assert _read(bootstrap, topic, 0, 0, 100, committed) == []
    assert _read(bootstrap, topic, 0, 50, survivors[0] + 1) == [expected[0]]


def test_data_loss_after_delete_records(
    broker: BrokerProcess, caplog: pytest.LogCaptureFixture
) -> None:
    bootstrap = broker.bootstrap
    topic = _create(bootstrap, 1)
    written = _produce(bootstrap, topic, [(0, None, b"v%d" % i, None) for i in range(300)])
    admin = Admin({"bootstrap.servers": bootstrap})
    try:
        assert admin.delete_records({(topic, 0): 120}, timeout=10)[(topic, 0)] == 120
    finally:
        admin.close()
    with pytest.raises(DataLossError) as caught:
        _read(bootstrap, topic, 0, 50, 200)
    message = str(caught.value)
    assert f"{topic}-0" in message and "offset 50" in message and "120" in message
    assert (caught.value.requested, caught.value.earliest) == (50, 120)
    with caplog.at_level(logging.WARNING, logger="samsa.client.consumer.arrow.range_reader"):
        got = _read(bootstrap, topic, 0, 50, 200, fail_on_data_loss=False)
    assert got == written[120:200]
    assert any("data loss" in r.getMessage() for r in caplog.records)


def test_unreachable_broker_raises_instead_of_hanging() -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = {"bootstrap.servers": f"127.0.0.1:{port}", "request.timeout.ms": 1500}
    reader = PartitionRangeReader(config, "nowhere", 0, 0, 10)
    with reader, pytest.raises(KafkaTimeoutError, match="reachable"):
        list(reader)


def test_poll_arrow_with_a_group_commits_what_it_returned(broker: BrokerProcess) -> None:
    bootstrap = broker.bootstrap
    topic = _create(bootstrap, 2)
    written = _produce(
        bootstrap,
        topic,
        [(i % 2, b"k%d" % i, b"v%d" % i, [("i", b"%d" % i)]) for i in range(400)],
        **{"compression.type": "gzip"},
    )
    group = f"g-{uuid.uuid4().hex[:8]}"
    config = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    }
    seen: list[tuple[object, ...]] = []
    with Consumer(config) as consumer:
        consumer.subscribe([topic])
        while len(seen) < 150:
            batch = consumer.poll_arrow(5.0, max_records=50, include_headers=True)
            assert batch.schema == arrow_schema(True) and batch.num_rows <= 50
            d = batch.to_pydict()
            seen += [
                (p, o, k, v, [(h["key"], h["value"]) for h in hs])
                for p, o, k, v, hs in zip(
                    d["partition"], d["offset"], d["key"], d["value"], d["headers"], strict=True
                )
            ]
        consumer.commit()
        committed = {
            tp.partition: om.offset
            for tp, om in consumer.committed([(topic, 0), (topic, 1)]).items()
            if om
        }
    by_partition: dict[int, list[int]] = {0: [], 1: []}
    for p, o, *_ in seen:
        by_partition[p].append(o)
    for p, offsets in by_partition.items():
        assert offsets == list(range(len(offsets)))  # in order, none skipped or repeated
        assert committed.get(p, 0) == len(offsets)
    assert sorted(seen, key=lambda r: (r[0], r[1])) == [
        r for r in written if r[1] < len(by_partition[r[0]])
    ]
    # A new member of the group starts where the commit left off, via poll().
    rest = []
    with Consumer(config) as consumer:
        consumer.subscribe([topic])
        while len(rest) < 400 - len(seen):
            rest += [(r.partition, r.offset) for r in consumer.poll(5.0)]
    assert sorted(rest) == sorted((r[0], r[1]) for r in written if r[1] >= len(by_partition[r[0]]))


def test_poll_and_poll_arrow_interleaved_hand_out_every_record_once(
    broker: BrokerProcess,
) -> None:
    bootstrap = broker.bootstrap
    topic = _create(bootstrap, 1)
    written = _produce(bootstrap, topic, [(0, None, b"v%d" % i, None) for i in range(1000)])
    offsets: list[int] = []
    with Consumer({"bootstrap.servers": bootstrap, "auto.offset.reset": "earliest"}) as consumer:
        consumer.assign([(topic, 0)])
        turn = 0
        while len(offsets) < 1000:
            turn += 1
            if turn % 2:
                batch = consumer.poll_arrow(5.0, max_records=37)
                offsets += batch.column("offset").to_pylist()
            else:
                offsets += [r.offset for r in consumer.poll(5.0, max_records=23)]
            assert consumer.position((topic, 0)) == offsets[-1] + 1
    assert offsets == [r[1] for r in written] == list(range(1000))
