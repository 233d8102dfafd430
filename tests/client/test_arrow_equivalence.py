"""The columnar path equals the record-at-a-time consumer path, for any log and any chunking.

Logs are built with the project's record builder (and compacted with the
broker's own cleaner code): random records (null, empty, over-8-KiB keys and
values, headers, any timestamps), random batch sizes, every codec, both
timestamp types, transactions (control batches, aborted transactions under
read_committed), offset gaps from compaction and between batches.  They are
then "fetched" the way a broker answers: from the batch holding the fetch
offset, cut at an arbitrary byte (so the last batch may be partial), with the
aborted transactions that overlap.  Each response goes through both
``PartitionRecords`` (the consumer's decoder) and ``fetched_to_arrow``; rows
and next fetch offsets must match, and both must match the generator's truth.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")

from samsa.client.consumer.arrow.batch import fetched_to_arrow  # noqa: E402
from samsa.client.consumer.arrow.schema import arrow_schema  # noqa: E402
from samsa.client.consumer.fetch.decoder import PartitionRecords  # noqa: E402
from samsa.client.metadata import TopicPartition  # noqa: E402
from samsa.errors import DecodeError, KafkaError  # noqa: E402
from samsa.protocol.batches.compression import Compression  # noqa: E402
from samsa.protocol.batches.record_batch import iter_batches, read_batch_header  # noqa: E402
from samsa.protocol.batches.record_builder import (  # noqa: E402
    ControlType,
    RecordBatchBuilder,
    control_batch,
)
from samsa.storage.cleaner.records import filter_batch  # noqa: E402

TP = TopicPartition("topic-a", 7)
BASE_TS = 1_700_000_000_000
Row = tuple[int, int, int, bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]

_small = st.binary(max_size=12)
_field = st.one_of(
    st.none(),
    st.just(b""),
    _small,
    st.binary(min_size=100, max_size=300),
    st.integers(8190, 9000).map(lambda n: b"L" * n),  # record over 8 KiB: the index declines
)
_headers = st.one_of(
    st.none(),
    st.lists(st.tuples(st.text(max_size=4), st.one_of(st.none(), _small)), min_size=1, max_size=3),
)
_record = st.tuples(
    st.one_of(st.integers(-5, 5), st.integers(-(10**6), 10**9)),  # timestamp delta
    st.one_of(st.none(), _small, _field),
    st.one_of(_small, _field),
    _headers,
)


@dataclass
class Log:
    data: bytes = b""
    truth: list[tuple[Row, int | None]] = field(default_factory=list)  # (row, producer id if txn)
    aborted: list[tuple[int, int, int]] = field(default_factory=list)  # (first, last, pid)
    next_offset: int = 0


@st.composite
def logs(draw: Any) -> Log:
    log = Log(next_offset=draw(st.integers(0, 10_000)))
    open_txns: dict[int, int] = {}  # pid -> first offset
    txn_rows: dict[int, list[int]] = {}  # pid -> indexes into truth
    for _ in range(draw(st.integers(1, 8))):
        step = draw(st.sampled_from(["plain", "txn", "txn", "end", "end"]))
        if step == "end" and open_txns:
            pid = draw(st.sampled_from(sorted(open_txns)))
            abort = draw(st.booleans())
            marker = control_batch(
                ControlType.ABORT if abort else ControlType.COMMIT,
                producer_id=pid,
                producer_epoch=0,
                timestamp_ms=BASE_TS,
                base_offset=log.next_offset,
            )
            if abort:
                log.aborted.append((open_txns[pid], log.next_offset, pid))
                for i in txn_rows[pid]:
                    log.truth[i] = (log.truth[i][0], -1)  # -1: aborted
            del open_txns[pid], txn_rows[pid]
            log.data += marker
            log.next_offset += 1
            continue
        pid = draw(st.integers(1, 3)) if step == "txn" else None
        _append_batch(draw, log, pid, open_txns, txn_rows)
        log.next_offset += draw(st.sampled_from([0, 0, 0, 1, 5]))  # gaps between batches
    for pid in sorted(open_txns):  # close what is open, so everything is decided
        log.data += control_batch(
            ControlType.COMMIT,
            producer_id=pid,
            producer_epoch=0,
            timestamp_ms=BASE_TS,
            base_offset=log.next_offset,
        )
        log.next_offset += 1
    return log


def _append_batch(
    draw: Any,
    log: Log,
    pid: int | None,
    open_txns: dict[int, int],
    txn_rows: dict[int, list[int]],
) -> None:
    size = draw(st.sampled_from([1, 3, 40, 70, 150]))
    records = draw(st.lists(_record, min_size=1, max_size=size))
    if size >= 70 and draw(st.booleans()):  # long runs of equal records: the walk's fast path
        records = records[:1] * size + records
    codec = draw(st.sampled_from(list(Compression)))
    log_append_time = draw(st.booleans())
    base = log.next_offset
    builder = RecordBatchBuilder(
        codec,
        base_offset=base,
        timestamp_type=int(log_append_time),
        producer_id=pid if pid is not None else -1,
        producer_epoch=0 if pid is not None else -1,
        base_sequence=0 if pid is not None else -1,
        is_transactional=pid is not None,
        batch_size=1 << 30,
        partition_leader_epoch=3,
    )
    for ts_delta, key, value, headers in records:
        builder.append(BASE_TS + ts_delta, key, value, headers)
    raw = bytes(builder.build())
    header = read_batch_header(raw)
    keep = [True] * len(records)
    if pid is None and draw(st.integers(0, 3)) == 0:  # compacted: records drop out, offsets stay
        keep = draw(st.lists(st.booleans(), min_size=len(records), max_size=len(records)))
        outcome = filter_batch(
            raw,
            header,
            lambda _h, r: keep[r.offset - base],
            new_horizon_ms=BASE_TS,
            retain_empty=draw(st.booleans()),
        )
        raw = outcome.data if outcome.data is not None else b""
    if pid is not None and pid not in open_txns:
        open_txns[pid] = base
        txn_rows[pid] = []
    for i, (ts_delta, key, value, headers) in enumerate(records):
        if not keep[i]:
            continue
        ts = header.max_timestamp if log_append_time else BASE_TS + ts_delta
        row = (base + i, ts, int(log_append_time), key, value, tuple(headers or ()))
        if pid is not None:
            txn_rows[pid].append(len(log.truth))
        log.truth.append((row, pid))
    log.data += raw
    log.next_offset = base + len(records)


def _responses(log: Log, start: int, cuts: list[int], read_committed: bool) -> Any:
    """Fetch responses as a broker gives them: from the batch holding the offset, cut anywhere."""
    batches = list(iter_batches(log.data))
    offset, turn = start, 0
    while True:
        first = next(
            (
                i
                for i, (_p, h) in enumerate(batches)
                if h.base_offset + h.last_offset_delta >= offset
            ),
            None,
        )
        if first is None:
            return
        pos = batches[first][0]
        at_least = batches[first][1].batch_length + 12
        cut = cuts[turn % len(cuts)] if cuts else len(log.data)
        turn += 1
        response = log.data[pos : pos + max(at_least, cut)]
        upper = max(
            h.base_offset + h.last_offset_delta
            for p, h in batches
            if p < pos + len(response) and p >= pos
        )
        aborted = (
            [(f, pid) for f, last, pid in log.aborted if last >= offset and f <= upper]
            if read_committed
            else []
        )
        offset = yield response, offset, aborted


def _arrow_rows(batch: Any) -> list[Row]:
    d = batch.to_pydict()
    timestamps = batch.column("timestamp").cast(pa.int64()).to_pylist()
    assert set(d["topic"]) <= {TP.topic} and set(d["partition"]) <= {TP.partition}
    return [
        (o, t, tt, k, v, tuple((h["key"], h["value"]) for h in hs))
        for o, t, tt, k, v, hs in zip(
            d["offset"],
            timestamps,
            d["timestampType"],
            d["key"],
            d["value"],
            d["headers"],
            strict=True,
        )
    ]


def _record_rows(pr: PartitionRecords) -> list[Row]:
    out: list[Row] = []
    while True:
        records, done = pr.take(37)
        out += [
            (r.offset, r.timestamp, r.timestamp_type, r.key, r.value, r.headers) for r in records
        ]
        if done:
            return out


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    log=logs(),
    data=st.data(),
    cuts=st.lists(st.integers(1, 40_000), max_size=4),
    read_committed=st.booleans(),
)
def test_arrow_equals_the_record_path_for_any_fetch_chunking(
    log: Log, data: Any, cuts: list[int], read_committed: bool
) -> None:
    if not log.data:
        return
    first = read_batch_header(log.data).base_offset
    start = data.draw(st.integers(first, log.next_offset))
    end = data.draw(st.one_of(st.none(), st.integers(start, log.next_offset + 1)))
    arrow_rows: list[Row] = []
    record_rows: list[Row] = []
    fetches = _responses(log, start, cuts, read_committed)
    try:
        response, offset, aborted = next(fetches)
        while True:
            # As the fetcher hands them over: views of the response frame, not copies.
            view = memoryview(bytearray(response))
            pr = PartitionRecords(TP, view, offset, 0, check_crcs=True, aborted=list(aborted))
            record_rows += _record_rows(pr)
            batch, next_offset = fetched_to_arrow(
                view,
                topic=TP.topic,
                partition=TP.partition,
                start_offset=offset,
                end_offset=end,
                aborted=aborted,
                include_headers=True,
            )
            assert batch.schema == arrow_schema(include_headers=True)
            arrow_rows += _arrow_rows(batch)
            assert next_offset == pr.next_offset > offset
            response, offset, aborted = fetches.send(next_offset)
    except StopIteration:
        pass
    truth = [
        row for row, pid in log.truth if row[0] >= start and not (read_committed and pid == -1)
    ]
    assert record_rows == truth
    assert arrow_rows == [r for r in record_rows if end is None or r[0] < end]


def test_spark_variant_differs_only_in_timestamp_unit_and_nullability() -> None:
    builder = RecordBatchBuilder(Compression.SNAPPY, base_offset=10, batch_size=1 << 30)
    for i in range(100):
        builder.append(
            BASE_TS + i, None if i % 3 else b"k%d" % i, b"v" * i, [("h", None)] if i == 5 else None
        )
    data = bytes(builder.build())
    plain, _ = fetched_to_arrow(data, topic="t", partition=1, start_offset=12, include_headers=True)
    spark, _ = fetched_to_arrow(
        data, topic="t", partition=1, start_offset=12, include_headers=True, spark=True
    )
    assert plain.num_rows == spark.num_rows == 98
    assert spark.schema.field("timestamp").type == pa.timestamp("us", tz="UTC")
    assert all(f.nullable for f in spark.schema)
    assert spark.column("timestamp").cast(pa.int64()).to_pylist() == [
        t * 1000 for t in plain.column("timestamp").cast(pa.int64()).to_pylist()
    ]
    for name in ("key", "value", "topic", "partition", "offset", "timestampType", "headers"):
        assert spark.column(name).to_pylist() == plain.column(name).to_pylist()
    assert plain.column("key").null_count == sum(1 for i in range(12, 110) if (i - 10) % 3)


@pytest.mark.parametrize("codec", [Compression.NONE, Compression.ZSTD])
def test_big_batches_with_three_byte_offset_deltas(codec: Compression) -> None:
    """Batches past 8,192 records (offset deltas of three bytes), records of a few sizes."""
    data = b""
    for base, n in ((0, 9000), (9000, 700), (9700, 9500)):
        builder = RecordBatchBuilder(codec, base_offset=base, batch_size=1 << 30)
        for i in range(n):
            key = None if i % 1000 == 999 else b"%d" % (base + i)
            builder.append(BASE_TS + i // 7, key, b"v" * (100 if i % 3000 else 20), None)
        data += bytes(builder.build())
    for start in (0, 4321, 9000, 15000):
        pr = PartitionRecords(TP, data, start, 0, check_crcs=True, aborted=[])
        expected = _record_rows(pr)
        batch, next_offset = fetched_to_arrow(
            data, topic=TP.topic, partition=TP.partition, start_offset=start, include_headers=True
        )
        assert next_offset == pr.next_offset == 19200
        assert _arrow_rows(batch) == expected
        assert len(expected) == 19200 - start


def test_a_damaged_record_raises_as_on_the_record_path() -> None:
    builder = RecordBatchBuilder(Compression.NONE, base_offset=0, batch_size=1 << 30)
    for i in range(100):
        builder.append(BASE_TS, b"k%d" % i, b"v" * 50)
    data = bytearray(builder.build())
    data[61 + 4] = 0x7E  # record 0's key length (after length, attributes, two deltas): 63
    with pytest.raises(DecodeError):
        PartitionRecords(TP, bytes(data), 0, 0, check_crcs=False, aborted=[]).take(500)
    with pytest.raises(DecodeError):
        fetched_to_arrow(bytes(data), topic="t", partition=0, start_offset=0, check_crcs=False)
    with pytest.raises(KafkaError, match=r"(?i)crc"):
        fetched_to_arrow(bytes(data), topic="t", partition=0, start_offset=0)
