"""The fault tests' checker catches what it claims to: each test plants one kind
of damage in an otherwise clean history and expects exactly that to be found.

A checker that finds nothing on a clean history proves nothing by itself;
these prove it fails when a record is lost, duplicated, reordered, misplaced
or read before it was truncated away.
"""

from __future__ import annotations

import pytest
from tests.cluster.checker import Ack, Seen, check, decode_value, encode_value


def _clean() -> tuple[list[Ack], dict[int, list[tuple[int, bytes]]], list[Seen]]:
    """Two producers interleaved on two partitions; everything acknowledged,
    everything in the log once, in order; a consumer that saw all of it."""
    acks: list[Ack] = []
    log: dict[int, list[tuple[int, bytes]]] = {0: [], 1: []}
    order = {"a": 0, "b": 0}
    for seq in range(10):
        for producer in ("a", "b"):
            partition = seq % 2
            offset = len(log[partition])
            log[partition].append((offset, encode_value(producer, seq)))
            acks.append(Ack(producer, seq, partition, offset, order[producer]))
            order[producer] += 1
    seen = [Seen(p, o, v) for p, records in log.items() for o, v in records]
    return acks, log, seen


def test_values_round_trip_and_others_are_not_ours() -> None:
    assert decode_value(encode_value("conf", 42)) == ("conf", 42)
    assert decode_value(encode_value("samsa", 7, pad=100)) == ("samsa", 7)
    assert len(encode_value("samsa", 7, pad=100)) > 100
    assert decode_value(b"hello") is None
    assert decode_value(None) is None
    assert decode_value(b"samsa-check:x:notanumber:") is None
    with pytest.raises(ValueError):
        encode_value("a:b", 1)


def test_a_clean_history_passes() -> None:
    acks, log, seen = _clean()
    report = check(acks, log, seen)
    assert report.ok, report.problems()
    assert (report.acknowledged, report.records_in_log, report.reads_checked) == (20, 20, 20)


def test_unacknowledged_records_in_the_log_are_fine() -> None:
    acks, log, seen = _clean()
    del acks[5]  # written, but its acknowledgement never arrived (a timeout)
    assert check(acks, log, seen).ok


def test_an_acknowledged_record_missing_from_the_log_is_lost() -> None:
    acks, log, seen = _clean()
    removed = log[1].pop(3)  # offset 3 of partition 1 disappears; later offsets keep theirs
    report = check(acks, log, [s for s in seen if (s.partition, s.offset) != (1, 3)])
    assert [a.record for a in report.lost] == [decode_value(removed[1])]
    assert not report.phantom_reads and not report.duplicates


def test_a_record_in_the_wrong_partition_is_lost_from_its_own() -> None:
    acks, log, _ = _clean()
    _offset, value = log[0].pop()
    log[1].append((len(log[1]) + 5, value))
    report = check(acks, log)
    assert [a.record for a in report.lost] == [decode_value(value)]


def test_a_lost_tail_that_a_consumer_read_is_a_phantom_read_too() -> None:
    acks, log, seen = _clean()
    truncated = log[0][-2:]
    del log[0][-2:]  # a leader lost its last two records after serving them
    report = check(acks, log, seen)
    assert len(report.lost) == 2
    assert sorted(s.offset for s, held in report.phantom_reads) == [o for o, _ in truncated]
    assert all(held is None for _, held in report.phantom_reads)


def test_a_read_of_a_record_later_replaced_is_a_phantom_read() -> None:
    acks, log, seen = _clean()
    # A deposed leader served offset 9 of partition 1 with a record the new
    # leader never had; the new leader wrote a different record there.
    seen.append(Seen(1, 9, encode_value("zombie", 1)))
    report = check(acks, log, seen)
    assert [s.value for s, _ in report.phantom_reads] == [encode_value("zombie", 1)]
    assert report.phantom_reads[0][1] == log[1][9][1]
    assert not report.lost


def test_a_read_beyond_the_final_log_is_a_phantom_read() -> None:
    acks, log, seen = _clean()
    seen.append(Seen(0, 100, encode_value("a", 1000)))
    report = check(acks, log, seen)
    assert report.phantom_reads == [(Seen(0, 100, encode_value("a", 1000)), None)]


def test_a_record_written_twice_is_a_duplicate() -> None:
    acks, log, seen = _clean()
    value = log[0][2][1]
    log[0].append((len(log[0]), value))  # a retry that was not deduplicated
    report = check(acks, log, seen)
    record = decode_value(value)
    assert record is not None
    assert list(report.duplicates) == [record]
    assert report.duplicates[record] == [(0, 2), (0, len(log[0]) - 1)]
    assert not report.lost and not report.reordered


def test_swapped_records_are_reordered() -> None:
    acks, log, _seen = _clean()
    # Producer a's seq 2 and seq 4 (both partition 0) trade places in the log.
    index = {decode_value(v): i for i, (_, v) in enumerate(log[0])}
    i, j = index[("a", 2)], index[("a", 4)]
    (oi, vi), (oj, vj) = log[0][i], log[0][j]
    log[0][i], log[0][j] = (oi, vj), (oj, vi)
    acks = [
        Ack(a.producer, a.seq, a.partition, -1, a.order) if a.producer == "a" else a for a in acks
    ]
    report = check(acks, log)
    assert report.reordered, report.problems()
    assert any("seq 2" in line and "seq 4" in line for line in report.reordered)
    assert not report.lost and not report.duplicates


def test_acknowledgements_out_of_log_order_are_reordered() -> None:
    acks, log, _ = _clean()
    # The log is in send order, but the producer was told of seq 4 before seq 2.
    swapped = []
    for a in acks:
        if a.record == ("b", 2):
            a = Ack(a.producer, a.seq, a.partition, a.offset, order=9)
        elif a.record == ("b", 4):
            a = Ack(a.producer, a.seq, a.partition, a.offset, order=2)
        swapped.append(a)
    report = check(swapped, log)
    assert len(report.reordered) >= 1
    assert all("ack #" in line for line in report.reordered)


def test_an_acknowledged_offset_holding_another_record_is_misplaced() -> None:
    acks, log, _ = _clean()
    first = acks[0]
    acks[0] = Ack(first.producer, first.seq, first.partition, first.offset + 2, first.order)
    report = check(acks, log)
    assert [(a.record, held) for a, held in report.misplaced] == [
        (first.record, log[first.partition][2][1])
    ]


def test_acknowledgements_without_offsets_are_found_by_value() -> None:
    acks, log, seen = _clean()
    acks = [Ack(a.producer, a.seq, a.partition, -1, a.order) for a in acks]
    assert check(acks, log, seen).ok


def test_foreign_records_and_a_malformed_log_are_reported() -> None:
    acks, log, _ = _clean()
    log[1].append((len(log[1]), b"not ours"))
    log[0].append((0, encode_value("c", 0)))
    report = check(acks, log)
    assert report.foreign == [(1, len(log[1]) - 1, b"not ours")]
    assert report.bad_log
    assert len(report.problems()) == 2


def test_problems_name_counts_and_examples() -> None:
    acks, log, seen = _clean()
    log[0].clear()
    report = check(acks, log, seen)
    lines = report.problems(limit=2)
    assert lines[0].startswith("10 lost acknowledged records") and "(+8 more)" in lines[0]
    assert "lost=10" in report.summary()
