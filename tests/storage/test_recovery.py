"""Recovery after a crash: torn tails, bad CRCs, lost indexes."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from samsa.protocol.batches.record_batch import iter_batches
from samsa.storage.log import Log
from samsa.storage.log_loader import _tidy_bases
from samsa.storage.segments.file_region import FileRegion
from samsa.storage.topic_config.log_config import LogConfig

from .log_helpers import make_batch

CONFIG = LogConfig.from_dict({"segment.bytes": "600", "index.interval.bytes": "100"})


def write_log(tmp_path: Path, batches: int = 12) -> Path:
    log = Log.open(tmp_path / "t-0", "t", 0, CONFIG)
    for i in range(batches):
        log.append(make_batch(2, timestamp=1000 + i))
    # simulate a crash: no close, nothing flushed (recovery point 0)
    return tmp_path / "t-0"


def reopen(directory: Path, recovery_point: int = 0) -> Log:
    return Log.open(directory, "t", 0, CONFIG, recovery_point=recovery_point)


def all_offsets(log: Log) -> list[int]:
    return [h.base_offset for h in log.iter_batch_headers()]


def segment_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.log"))


def test_torn_tail_is_truncated_to_last_valid_batch(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = write_log(tmp_path)
    last = segment_files(directory)[-1]
    size = last.stat().st_size
    os.truncate(last, size - 10)  # a SIGKILL mid-write
    with caplog.at_level(logging.WARNING, logger="samsa.storage"):
        log = reopen(directory)
    assert log.log_end_offset == 22
    assert all_offsets(log)[-1] == 20
    assert "[t-0] recovery truncated segment" in caplog.text
    assert "dropped" in caplog.text and "bytes" in caplog.text
    assert log.append(make_batch(1)).first_offset == 22


def test_corrupt_crc_truncates_there_and_drops_later_segments(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = write_log(tmp_path)
    files = segment_files(directory)
    assert len(files) >= 3
    victim = files[1]
    data = bytearray(victim.read_bytes())
    positions = [pos for pos, _ in iter_batches(data)]
    data[positions[2] + 70] ^= 0xFF  # a record byte of the third batch: CRC mismatch
    victim.write_bytes(data)
    with caplog.at_level(logging.WARNING, logger="samsa.storage"):
        log = reopen(directory)
    assert len(log.segments) == 2
    assert log.segments[1].size == positions[2]
    base = int(victim.name[:20])
    assert log.log_end_offset == base + 4
    assert "CRC" in caplog.text
    assert "deleting segment" in caplog.text
    assert segment_files(directory) == files[:2]


def test_segments_below_recovery_point_are_not_rescanned(tmp_path: Path) -> None:
    directory = write_log(tmp_path)
    files = segment_files(directory)
    data = bytearray(files[0].read_bytes())
    data[70] ^= 0xFF  # corrupt, but below the recovery point: trusted (it was fsynced)
    files[0].write_bytes(data)
    log = reopen(directory, recovery_point=int(files[-1].name[:20]))
    assert log.log_end_offset == 24


def test_missing_and_corrupt_indexes_are_rebuilt(tmp_path: Path) -> None:
    directory = write_log(tmp_path)
    log = reopen(directory)
    expected = [(s.offset_index.entries, s.time_index.entries) for s in log.segments]
    log.close()
    first = sorted(directory.glob("*.index"))[0]
    first.unlink()
    with open(sorted(directory.glob("*.timeindex"))[1], "ab") as f:
        f.write(b"\x01\x02")  # torn entry
    log = reopen(directory, recovery_point=24)
    assert [(s.offset_index.entries, s.time_index.entries) for s in log.segments] == expected
    data = log.read(5, 100_000).records
    assert isinstance(data, FileRegion)
    first_batch = next(iter_batches(data.read_bytes()))[1]
    assert first_batch.base_offset == 4


def test_leftover_and_orphan_files_are_removed(tmp_path: Path) -> None:
    directory = write_log(tmp_path, batches=2)
    (directory / "00000000000000000099.index").write_bytes(b"")
    (directory / "00000000000000000000.log.deleted").write_bytes(b"x")
    log = reopen(directory)
    names = sorted(p.name for p in directory.iterdir())
    assert "00000000000000000099.index" not in names
    assert not any(n.endswith(".deleted") for n in names)
    assert log.log_end_offset == 4


def test_an_orphan_index_alone_is_removed(tmp_path: Path) -> None:
    """With no leftover beside it (the quick listing of a tidy directory must
    still notice an index whose log is gone)."""
    directory = write_log(tmp_path, batches=2)
    (directory / "00000000000000000099.timeindex").write_bytes(b"")
    log = reopen(directory)
    assert "00000000000000000099.timeindex" not in os.listdir(directory)
    assert log.log_end_offset == 4


def test_a_tidy_listing_gives_its_segments_in_order() -> None:
    listing = [
        "00000000000000000200.log",
        "00000000000000000000.index",
        "00000000000000000000.log",
        "00000000000000000200.index",
        "00000000000000000200.timeindex",
        "00000000000000000200.snapshot",
        "leader-epoch-checkpoint",
        "partition.metadata",
    ]
    assert _tidy_bases(listing) == [0, 200]
    for untidy in ("00000000000000000000.log.swap", "00000000000000000000.index.tmp"):
        assert _tidy_bases([*listing, untidy]) is None
    assert _tidy_bases([*listing, "00000000000000000300.txnindex"]) is None


def test_garbage_only_segment_recovers_to_empty(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    directory.mkdir()
    (directory / "00000000000000000000.log").write_bytes(b"\xab\x00\x17" * 170)
    log = reopen(directory)
    assert log.log_end_offset == 0
    assert log.append(make_batch(2)).first_offset == 0
