"""Fetcher decoding without a broker: the edge cases a broker rarely produces on demand.

Feeds hand-built fetch responses straight into the fetcher and drains them the
way ``poll`` does, so control batches, aborted transactions, truncated tails,
CRC damage, mid-batch fetch offsets and ``max.poll.records`` slicing are all
checked against exact offsets and positions.
"""

from __future__ import annotations

from typing import Any, cast

import pytest

from samsa.client.consumer.fetch.fetcher import Fetcher
from samsa.client.consumer.records import ConsumerRecord
from samsa.client.consumer.subscription import SubscriptionState
from samsa.client.metadata import TopicPartition
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches.record_builder import ControlType, RecordBatchBuilder, control_batch
from samsa.protocol.records import Compression

TP = TopicPartition("t", 0)
TS = 1_700_000_000_000


def _fetcher(**overrides: Any) -> tuple[Fetcher, Any]:
    cfg: dict[str, Any] = {
        "fetch.max.wait.ms": 500,
        "fetch.min.bytes": 1,
        "fetch.max.bytes": 1 << 20,
        "max.partition.fetch.bytes": 1 << 20,
        "isolation.level": "read_uncommitted",
        "check.crcs": True,
        "key.deserializer": None,
        "value.deserializer": None,
    }
    cfg.update(overrides)
    subs = SubscriptionState("earliest")
    subs.assign_from_user([TP])
    subs.seek(TP, 0)
    return Fetcher(cast(Any, None), subs, cfg), subs


def _batch(
    base_offset: int,
    n: int,
    *,
    codec: Compression = Compression.NONE,
    producer_id: int = -1,
    transactional: bool = False,
    headers: bool = False,
    log_append_time: bool = False,
    leader_epoch: int = -1,
) -> bytes:
    b = RecordBatchBuilder(
        codec,
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=0 if producer_id >= 0 else -1,
        base_sequence=0 if producer_id >= 0 else -1,
        is_transactional=transactional,
        timestamp_type=1 if log_append_time else 0,
        partition_leader_epoch=leader_epoch,
    )
    for i in range(base_offset, base_offset + n):
        key = None if i % 5 == 4 else b"k%d" % i
        value = None if i % 7 == 6 else b"v" * (i % 300)
        hdrs = [("h", b"%d" % i), ("empty", None)] if headers and i % 2 else None
        b.append(TS + i, key, value, hdrs)
    return b.build()


def _feed(f: Fetcher, subs: Any, raw: bytes, offset: int | None = None, **extra: Any) -> None:
    st = subs.assignment[TP]
    start = st.position if offset is None else offset
    p = {
        "error_code": 0,
        "high_watermark": 10**6,
        "last_stable_offset": 10**6,
        "log_start_offset": 0,
        "records": raw,
        "aborted_transactions": None,
    }
    p.update(extra)
    f._handle_partition(TP, st, p, st.epoch, start)


def _drain(f: Fetcher, max_records: int = 500) -> list[ConsumerRecord]:
    out: list[ConsumerRecord] = []
    while True:
        got = f.fetched_records(max_records)
        if not got:
            return out
        assert len(got) <= max_records
        out += got


def _expected_key(i: int) -> bytes | None:
    return None if i % 5 == 4 else b"k%d" % i


def _expected_value(i: int) -> bytes | None:
    return None if i % 7 == 6 else b"v" * (i % 300)


@pytest.mark.parametrize("codec", [Compression.NONE, Compression.GZIP])
def test_records_fields_and_positions(codec: Compression) -> None:
    f, subs = _fetcher()
    raw = _batch(0, 300, codec=codec, headers=True, leader_epoch=3) + _batch(300, 50, codec=codec)
    _feed(f, subs, raw)
    recs = _drain(f, 7)
    assert [r.offset for r in recs] == list(range(350))
    for r in recs:
        i = r.offset
        assert (r.topic, r.partition) == ("t", 0)
        assert r.key == _expected_key(i)
        assert r.value == _expected_value(i)
        assert r.timestamp == TS + i
        assert r.timestamp_type == 0
        want = (("h", b"%d" % i), ("empty", None)) if i < 300 and i % 2 else ()
        assert r.headers == want
        assert r.leader_epoch == (3 if i < 300 else None)
    assert subs.assignment[TP].position == 350


def test_log_append_time_uses_max_timestamp() -> None:
    f, subs = _fetcher()
    _feed(f, subs, _batch(0, 3, log_append_time=True))
    recs = _drain(f)
    assert {r.timestamp_type for r in recs} == {1}
    assert {r.timestamp for r in recs} == {TS + 2}


def test_max_poll_records_slices_keep_exact_positions() -> None:
    f, subs = _fetcher()
    _feed(f, subs, _batch(0, 10) + _batch(10, 10))
    st = subs.assignment[TP]
    seen: list[int] = []
    for size in (3, 3, 3, 5, 100):
        got = f.fetched_records(size)
        seen += [r.offset for r in got]
        assert st.position == seen[-1] + 1
    assert seen == list(range(20))


def test_fetch_offset_inside_a_batch_drops_earlier_records() -> None:
    f, subs = _fetcher()
    subs.seek(TP, 5)
    _feed(f, subs, _batch(0, 10))
    assert [r.offset for r in _drain(f)] == list(range(5, 10))
    assert subs.assignment[TP].position == 10


def test_truncated_trailing_batch_is_left_for_the_next_fetch() -> None:
    f, subs = _fetcher()
    tail = _batch(10, 10)
    _feed(f, subs, _batch(0, 10) + tail[: len(tail) // 2])
    assert f._fetch_offsets[TP][1] == 10
    assert [r.offset for r in _drain(f)] == list(range(10))
    assert subs.assignment[TP].position == 10


def test_only_a_truncated_batch_returns_nothing() -> None:
    f, subs = _fetcher()
    _feed(f, subs, _batch(0, 10)[:40])
    assert _drain(f) == []
    assert subs.assignment[TP].position == 0


def test_control_batches_are_skipped_and_position_passes_them() -> None:
    f, subs = _fetcher()
    raw = (
        _batch(0, 3, producer_id=7, transactional=True)
        + control_batch(ControlType.COMMIT, producer_id=7, producer_epoch=0, timestamp_ms=TS,
                        base_offset=3)
    )  # fmt: skip
    _feed(f, subs, raw)
    assert [r.offset for r in _drain(f)] == [0, 1, 2]
    assert subs.assignment[TP].position == 4


def test_read_committed_drops_aborted_transactions() -> None:
    f, subs = _fetcher(**{"isolation.level": "read_committed"})
    raw = (
        _batch(0, 3, producer_id=7, transactional=True)
        + _batch(3, 2, producer_id=8, transactional=True)
        + control_batch(ControlType.ABORT, producer_id=7, producer_epoch=0, timestamp_ms=TS,
                        base_offset=5)
        + control_batch(ControlType.COMMIT, producer_id=8, producer_epoch=0, timestamp_ms=TS,
                        base_offset=6)
        + _batch(7, 2, producer_id=7, transactional=True)
        + control_batch(ControlType.COMMIT, producer_id=7, producer_epoch=0, timestamp_ms=TS,
                        base_offset=9)
        + _batch(10, 2)
    )  # fmt: skip
    aborted = [{"producer_id": 7, "first_offset": 0}]
    _feed(f, subs, raw, aborted_transactions=aborted)
    assert [r.offset for r in _drain(f)] == [3, 4, 7, 8, 10, 11]
    assert subs.assignment[TP].position == 12


def test_read_uncommitted_keeps_aborted_records() -> None:
    f, subs = _fetcher()
    raw = _batch(0, 3, producer_id=7, transactional=True) + control_batch(
        ControlType.ABORT, producer_id=7, producer_epoch=0, timestamp_ms=TS, base_offset=3
    )
    _feed(f, subs, raw)
    assert [r.offset for r in _drain(f)] == [0, 1, 2]


def _corrupt(raw: bytes) -> bytes:
    damaged = bytearray(raw)
    damaged[-3] ^= 0x01  # inside the last value: decodable, but the CRC no longer matches
    return bytes(damaged)


def test_crc_damage_raises_when_checking() -> None:
    f, subs = _fetcher()
    with pytest.raises(KafkaError) as info:
        _feed(f, subs, _corrupt(_batch(0, 5)))
        _drain(f)
    assert info.value.code == ErrorCode.CORRUPT_MESSAGE


def test_crc_not_checked_when_disabled() -> None:
    f, subs = _fetcher(**{"check.crcs": False})
    _feed(f, subs, _corrupt(_batch(0, 5)))
    assert [r.offset for r in _drain(f)] == list(range(5))


def test_deserializers_apply_to_keys_and_values() -> None:
    f, subs = _fetcher(
        **{
            "key.deserializer": lambda b: None if b is None else b.decode(),
            "value.deserializer": lambda b: None if b is None else len(b),
        }
    )
    _feed(f, subs, _batch(0, 10))
    recs = _drain(f)
    assert [r.key for r in recs] == [None if i % 5 == 4 else f"k{i}" for i in range(10)]
    assert [r.value for r in recs] == [None if i % 7 == 6 else i for i in range(10)]


def test_seek_drops_buffered_records() -> None:
    f, subs = _fetcher()
    _feed(f, subs, _batch(0, 10))
    assert [r.offset for r in f.fetched_records(3)] == [0, 1, 2]
    subs.seek(TP, 8)
    assert f.fetched_records(100) == []
    _feed(f, subs, _batch(0, 10))
    assert [r.offset for r in _drain(f)] == [8, 9]


def test_a_response_of_only_markers_moves_the_position_past_them() -> None:
    f, subs = _fetcher()
    marker = control_batch(ControlType.COMMIT, producer_id=7, producer_epoch=0, timestamp_ms=TS)
    _feed(f, subs, marker)
    assert f.fetched_records(10) == []
    assert subs.assignment[TP].position == 1


def test_damage_after_good_batches_hands_those_out_first() -> None:
    f, subs = _fetcher()
    _feed(f, subs, _batch(0, 4) + _corrupt(_batch(4, 4)) + _batch(8, 4))
    assert [r.offset for r in f.fetched_records(100)] == [0, 1, 2, 3]
    assert subs.assignment[TP].position == 4
    with pytest.raises(KafkaError) as info:
        f.fetched_records(100)
    assert info.value.code == ErrorCode.CORRUPT_MESSAGE
    assert subs.assignment[TP].position == 4
    assert TP not in f._fetch_offsets  # the next fetch starts again at the position


def test_two_partitions_drain_each_record_once() -> None:
    f, subs = _fetcher()
    tp1 = TopicPartition("t", 1)
    subs.assign_from_user([TP, tp1])
    subs.seek(TP, 0)
    subs.seek(tp1, 0)
    for tp in (TP, tp1):
        st = subs.assignment[tp]
        p = {"error_code": 0, "high_watermark": 20, "records": _batch(0, 10) + _batch(10, 10)}
        f._handle_partition(tp, st, p, st.epoch, 0)
    got = [(r.partition, r.offset) for r in _drain(f, 25)]
    assert sorted(got) == [(p, o) for p in (0, 1) for o in range(20)]
    assert subs.assignment[TP].position == subs.assignment[tp1].position == 20
