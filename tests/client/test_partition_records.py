"""PartitionRecords, the consumer's decoder: chunked decoding against the shared reader."""

from __future__ import annotations

import gc
import random

import pytest

from samsa.client.consumer.fetch.decoder import PartitionRecords
from samsa.client.metadata import TopicPartition
from samsa.errors import SamsaError
from samsa.protocol.batches.compression import Compression
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.protocol.batches.record_reader import decode_records

TP = TopicPartition("t", 3)
BASE_TS = 1_700_000_000_000


def _batch(
    base_offset: int, n: int, rng: random.Random, compression: int = Compression.NONE, **kw: int
) -> bytes:
    builder = RecordBatchBuilder(
        compression, base_offset=base_offset, batch_size=1 << 30, partition_leader_epoch=4, **kw
    )
    for i in range(n):
        key = None if rng.random() < 0.2 else b"k%d" % (base_offset + i)
        value = None if rng.random() < 0.05 else rng.randbytes(rng.choice([0, 5, 100, 300]))
        headers = [("h", b"x"), ("n", None)] if rng.random() < 0.1 else None
        builder.append(BASE_TS + i // 50 + rng.choice([0, 0, 0, 90]), key, value, headers)
    return bytes(builder.build())


def _blob(seed: int = 1) -> bytes:
    rng = random.Random(seed)
    batches = [
        _batch(0, 1, rng),
        _batch(1, 700, rng),  # crosses the 64-record one-byte offset delta
        _batch(701, 130, rng, Compression.GZIP),
        _batch(831, 90, rng, Compression.LZ4, timestamp_type=1),
        _batch(921, 9000, rng),  # crosses 8192: three-byte offset deltas
    ]
    return b"".join(batches)


def _expected(blob: bytes, start: int = 0) -> list[tuple[object, ...]]:
    out = []
    for header, records in decode_records(blob):
        tt = (header.attributes >> 3) & 1
        for r in records:
            if r.offset >= start:
                ts = header.max_timestamp if tt else r.timestamp
                out.append((r.offset, ts, tt, r.key, r.value, tuple(r.headers), 4))
        assert header.partition_leader_epoch == 4
    return out


def _drain(pr: PartitionRecords, max_records: int) -> list[tuple[object, ...]]:
    got = []
    while True:
        records, done = pr.take(max_records)
        assert len(records) <= max_records
        got += [
            (r.offset, r.timestamp, r.timestamp_type, r.key, r.value, r.headers, r.leader_epoch)
            for r in records
        ]
        assert all(r.topic == "t" and r.partition == 3 for r in records)
        if done:
            return got


@pytest.mark.parametrize("max_records", [1, 7, 63, 500, 20_000])
def test_every_record_comes_out_once_in_order_whatever_the_poll_size(max_records: int) -> None:
    blob = _blob()
    pr = PartitionRecords(TP, blob, 0, 0, check_crcs=True, aborted=[])
    assert pr.next_offset == 9921
    assert _drain(pr, max_records) == _expected(blob)
    assert gc.isenabled()


def test_fetch_offset_inside_a_batch_skips_the_records_before_it() -> None:
    blob = _blob(2)
    pr = PartitionRecords(TP, blob, 1000, 0, check_crcs=True, aborted=[])
    got = _drain(pr, 500)
    assert got[0][0] == 1000
    assert got == _expected(blob, start=1000)


def test_a_damaged_batch_raises_after_the_records_before_it() -> None:
    rng = random.Random(3)
    good = _batch(0, 300, rng)
    bad = bytearray(_batch(300, 300, rng))
    bad[-5] ^= 0xFF  # a value byte: only the CRC can tell
    pr = PartitionRecords(TP, good + bytes(bad), 0, 0, check_crcs=True, aborted=[])
    records, done = pr.take(1000)
    assert [r.offset for r in records] == list(range(300)) and not done
    with pytest.raises(SamsaError):
        pr.take(1000)
    assert gc.isenabled()


def test_a_record_whose_length_is_wrong_is_an_error_not_records() -> None:
    builder = RecordBatchBuilder(batch_size=1 << 30)
    for i in range(200):
        builder.append(BASE_TS, None, b"v%03d" % i, None)
    batch = bytearray(builder.build())
    # Records take 11 bytes up to offset delta 63 and 12 from 64 on (after the
    # 61-byte header).  Record 150's length byte claims 3 more bytes; without
    # CRC checks decoding must still notice.
    pos = 61 + 64 * 11 + 86 * 12
    assert batch[pos] == 11 * 2  # zig-zag of its 11 bytes after the length
    batch[pos] += 6
    pr = PartitionRecords(TP, bytes(batch), 0, 0, check_crcs=False, aborted=[])
    handed_out: list[int] = []
    with pytest.raises(SamsaError, match="record length"):
        while True:
            records, done = pr.take(64)
            handed_out += [r.offset for r in records]
            assert not done
    # Whole chunks before the damaged one were handed out, nothing after.
    assert handed_out == list(range(128))
    assert gc.isenabled()


def test_a_batch_claiming_more_records_than_it_holds_is_truncated() -> None:
    builder = RecordBatchBuilder(batch_size=1 << 30)
    for i in range(10):
        builder.append(BASE_TS, None, b"v%03d" % i, None)
    batch = bytearray(builder.build())
    batch[57:61] = (11).to_bytes(4, "big")  # records count
    pr = PartitionRecords(TP, bytes(batch), 0, 0, check_crcs=False, aborted=[])
    with pytest.raises(SamsaError):
        pr.take(500)
