"""Offset and time index files: Kafka's entry layout, lookups, sanity checks."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from samsa.storage.segments.index import CorruptIndexError, OffsetIndex, TimeIndex


def test_offset_index_writes_kafka_entries_and_looks_up(tmp_path: Path) -> None:
    idx = OffsetIndex(tmp_path / "00000000000000000100.index", 100, 1024)
    idx.append(104, 0)
    idx.append(120, 4096)
    idx.append(150, 9000)
    raw = (tmp_path / "00000000000000000100.index").read_bytes()
    assert raw == struct.pack(">ii", 4, 0) + struct.pack(">ii", 20, 4096) + struct.pack(
        ">ii", 50, 9000
    )
    assert idx.lookup(99) == (100, 0)
    assert idx.lookup(104) == (104, 0)
    assert idx.lookup(130) == (120, 4096)
    assert idx.lookup(10_000) == (150, 9000)
    assert idx.lookup_by_position(5000) == (120, 4096)
    assert idx.last_entry() == (150, 9000)


def test_offset_index_rejects_entries_that_go_backwards(tmp_path: Path) -> None:
    idx = OffsetIndex(tmp_path / "a.index", 0, 1024)
    idx.append(10, 100)
    with pytest.raises(ValueError):
        idx.append(10, 200)


def test_offset_index_reopens_and_truncates(tmp_path: Path) -> None:
    path = tmp_path / "a.index"
    idx = OffsetIndex(path, 0, 1024)
    for i in range(1, 6):
        idx.append(i * 10, i * 100)
    idx.close()
    idx = OffsetIndex(path, 0, 1024)
    assert idx.entries == 5
    idx.truncate_to_position(300)
    assert idx.entries == 2 and path.stat().st_size == 16
    assert idx.lookup(1000) == (20, 200)


def test_full_index(tmp_path: Path) -> None:
    idx = OffsetIndex(tmp_path / "a.index", 0, 16)
    idx.append(1, 1)
    assert not idx.is_full()
    idx.append(2, 2)
    assert idx.is_full()


def test_torn_index_fails_sanity_check(tmp_path: Path) -> None:
    path = tmp_path / "a.index"
    path.write_bytes(struct.pack(">ii", 1, 0) + b"\x00\x00\x00")
    idx = OffsetIndex(path, 0, 1024)
    with pytest.raises(CorruptIndexError):
        idx.sanity_check(log_size=100)


def test_index_pointing_past_the_log_fails_sanity_check(tmp_path: Path) -> None:
    idx = OffsetIndex(tmp_path / "a.index", 0, 1024)
    idx.append(5, 500)
    idx.sanity_check(log_size=600)
    with pytest.raises(CorruptIndexError):
        idx.sanity_check(log_size=400)


def test_time_index_appends_only_growing_timestamps(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000010.timeindex"
    idx = TimeIndex(path, 10, 1200)
    idx.maybe_append(1000, 12)
    idx.maybe_append(900, 15)  # not larger: ignored
    idx.maybe_append(2000, 20)
    assert path.read_bytes() == struct.pack(">qi", 1000, 2) + struct.pack(">qi", 2000, 10)
    assert idx.lookup(500) == (-1, 10)
    assert idx.lookup(1500) == (1000, 12)
    assert idx.lookup(2000) == (2000, 20)
    idx.truncate_to_offset(20)
    assert idx.last_entry() == (1000, 12)
