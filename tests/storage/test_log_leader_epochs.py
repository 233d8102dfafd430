"""The Log keeps its leader epoch cache in step with its data: appends as
leader and follower, truncation at both ends, recovery, reopening."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from samsa.errors import KafkaError
from samsa.protocol.batches.record_batch import NO_PARTITION_LEADER_EPOCH, stamp_batch
from samsa.storage.files.leader_epoch_checkpoint import (
    LEADER_EPOCH_CHECKPOINT_FILE,
    read_leader_epoch_checkpoint,
    write_leader_epoch_checkpoint,
)
from samsa.storage.leader_epoch_cache import UNDEFINED_EPOCH, EpochEntry
from samsa.storage.log import Log
from samsa.storage.segments.segment import LogSegment
from samsa.storage.topic_config.log_config import LogConfig

from .log_helpers import ManualClock, make_batch, make_batches

SMALL_SEGMENTS = {"segment.bytes": "250"}  # three 3-record batches never share a segment


def open_log(directory: Path, **overrides: str) -> Log:
    config = LogConfig.from_dict(overrides)
    return Log.open(directory, "t", 0, config, clock=ManualClock())


def follower_batch(base_offset: int, epoch: int, count: int = 3) -> bytearray:
    batch = make_batch(count, base_offset=base_offset)
    stamp_batch(batch, 0, base_offset, epoch)
    return batch


def checkpoint_of(log: Log) -> list[EpochEntry] | None:
    return read_leader_epoch_checkpoint(log.directory / LEADER_EPOCH_CHECKPOINT_FILE)


def leader_log(tmp_path: Path, **overrides: str) -> Log:
    """Offsets 0-2 in epoch 1, 3-8 in epoch 2, 9-11 in epoch 4."""
    log = open_log(tmp_path / "t-0", **overrides)
    for epoch in (1, 2, 2, 4):
        log.append(make_batch(3), leader_epoch=epoch)
    return log


def test_batches_without_a_leader_epoch_create_no_entries(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    for _ in range(3):
        log.append(make_batch(2), leader_epoch=NO_PARTITION_LEADER_EPOCH)
    log.append(
        make_batches(make_batch(1, base_offset=6), make_batch(1, base_offset=7)),
        assign_offsets=False,
    )
    assert log.leader_epoch_cache.entries() == []
    assert log.latest_epoch() == UNDEFINED_EPOCH
    assert log.end_offset_for_epoch(0) == (-1, -1)
    assert checkpoint_of(log) is None  # nothing was written on the produce path


def test_leader_appends_assign_each_new_epoch_at_its_first_offset(tmp_path: Path) -> None:
    log = leader_log(tmp_path)
    assert log.leader_epoch_cache.entries() == [(1, 0), (2, 3), (4, 9)]
    assert checkpoint_of(log) == [(1, 0), (2, 3), (4, 9)]
    assert log.latest_epoch() == 4
    assert log.end_offset_for_epoch(4) == (4, 12)
    assert log.end_offset_for_epoch(3) == (2, 9)
    assert log.end_offset_for_epoch(2) == (2, 9)
    assert log.end_offset_for_epoch(0) == (0, 0)


def test_follower_appends_assign_every_newer_epoch_in_one_call(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    fetched = make_batches(
        follower_batch(0, 5), follower_batch(3, 5), follower_batch(6, 7), follower_batch(10, 8)
    )
    log.append(fetched, assign_offsets=False)
    assert log.leader_epoch_cache.entries() == [(5, 0), (7, 6), (8, 10)]
    assert checkpoint_of(log) == [(5, 0), (7, 6), (8, 10)]
    log.append(follower_batch(13, 8), assign_offsets=False)
    assert log.leader_epoch_cache.entries() == [(5, 0), (7, 6), (8, 10)]


def test_a_raft_leader_assigns_its_epoch_at_the_log_end_before_appending(tmp_path: Path) -> None:
    log = leader_log(tmp_path)
    log.maybe_assign_epoch_start_offset(6, log.log_end_offset)
    assert log.end_offset_for_epoch(4) == (4, 12)
    assert log.end_offset_for_epoch(6) == (6, 12)
    log.append(make_batch(2), leader_epoch=6)
    assert log.leader_epoch_cache.entries() == [(1, 0), (2, 3), (4, 9), (6, 12)]


def test_truncate_to_cuts_the_epochs_past_the_new_end(tmp_path: Path) -> None:
    log = leader_log(tmp_path)
    log.truncate_to(10)  # mid-batch: the whole batch 9-11 goes, and epoch 4 with it
    assert log.log_end_offset == 9
    assert log.leader_epoch_cache.entries() == [(1, 0), (2, 3)]
    assert checkpoint_of(log) == [(1, 0), (2, 3)]
    assert log.end_offset_for_epoch(4) == (-1, -1)
    assert log.end_offset_for_epoch(2) == (2, 9)
    # The follower then takes the leader's data of a newer epoch.
    log.append(follower_batch(9, 5), assign_offsets=False)
    assert log.leader_epoch_cache.entries() == [(1, 0), (2, 3), (5, 9)]


def test_truncate_fully_and_start_at_clears_the_cache(tmp_path: Path) -> None:
    log = leader_log(tmp_path)
    log.truncate_fully_and_start_at(100)
    assert log.leader_epoch_cache.entries() == []
    assert checkpoint_of(log) == []
    log.append(make_batch(1), leader_epoch=9)
    assert log.leader_epoch_cache.entries() == [(9, 100)]


def test_truncate_below_the_first_segment_clears_the_cache(tmp_path: Path) -> None:
    log = leader_log(tmp_path, **SMALL_SEGMENTS)
    log.delete_records(4)
    log.truncate_to(0)
    assert log.leader_epoch_cache.entries() == []


def test_delete_records_moves_the_first_epoch_to_the_new_log_start(tmp_path: Path) -> None:
    log = leader_log(tmp_path, **SMALL_SEGMENTS)
    log.delete_records(4)
    assert log.leader_epoch_cache.entries() == [(2, 4), (4, 9)]
    assert checkpoint_of(log) == [(2, 4), (4, 9)]
    log.delete_records(9)
    assert log.leader_epoch_cache.entries() == [(4, 9)]
    assert log.end_offset_for_epoch(1) == (1, 9)


def test_retention_moving_the_log_start_truncates_the_cache(tmp_path: Path) -> None:
    log = leader_log(tmp_path, **SMALL_SEGMENTS, **{"retention.ms": "1000"})
    assert [s.base_offset for s in log.segments] == [0, 3, 6, 9]
    assert log.run_retention(now_ms=10**9) == 3  # every segment but the active one
    assert log.log_start_offset == 9
    assert log.leader_epoch_cache.entries() == [(4, 9)]
    assert checkpoint_of(log) == [(4, 9)]


def test_a_snapshot_end_offset_can_become_the_log_start(tmp_path: Path) -> None:
    # Raft: after a snapshot at offset 7, delete_records drops the segments
    # wholly below it and moves the log start (and the epochs) there.
    log = leader_log(tmp_path, **SMALL_SEGMENTS)
    assert log.delete_records(7) == 7
    assert [s.base_offset for s in log.segments] == [6, 9]
    assert log.leader_epoch_cache.entries() == [(2, 7), (4, 9)]


def test_reopening_reads_the_checkpoint(tmp_path: Path) -> None:
    log = leader_log(tmp_path)
    log.close()
    reopened = open_log(tmp_path / "t-0")
    assert reopened.leader_epoch_cache.entries() == [(1, 0), (2, 3), (4, 9)]


def test_a_log_without_a_checkpoint_rebuilds_it_from_its_batches(tmp_path: Path) -> None:
    log = leader_log(tmp_path, **SMALL_SEGMENTS)
    log.close()
    (tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT_FILE).unlink()
    reopened = open_log(tmp_path / "t-0", **SMALL_SEGMENTS)
    assert reopened.leader_epoch_cache.entries() == [(1, 0), (2, 3), (4, 9)]
    assert checkpoint_of(reopened) == [(1, 0), (2, 3), (4, 9)]


def test_a_corrupt_checkpoint_is_logged_and_rebuilt_from_the_log_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = leader_log(tmp_path, **SMALL_SEGMENTS)
    log.delete_records(4)
    start = log.log_start_offset
    log.close()
    (tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT_FILE).write_bytes(b"0\n7\n1 0\n")
    with caplog.at_level(logging.WARNING, "samsa.storage"):
        reopened = Log.open(
            tmp_path / "t-0",
            "t",
            0,
            LogConfig.from_dict(SMALL_SEGMENTS),
            log_start_offset=start,
            clock=ManualClock(),
        )
        assert "leader epoch" not in caplog.text  # read on first use, not at open
        entries = reopened.leader_epoch_cache.entries()
    assert "[t-0] rebuilding the leader epoch cache" in caplog.text
    assert entries == [(2, 4), (4, 9)]


def test_recovery_cutting_a_torn_tail_cuts_its_epoch(tmp_path: Path) -> None:
    log = leader_log(tmp_path)
    segment = log.segments[-1].log.path
    # A crash: no close; the last batch (epoch 4's first) is torn.
    os.truncate(segment, segment.stat().st_size - 5)
    reopened = open_log(tmp_path / "t-0")
    assert reopened.log_end_offset == 9
    assert reopened.leader_epoch_cache.entries() == [(1, 0), (2, 3)]
    # The file keeps (4, 9) until data would pass it (every load cuts it again).
    assert checkpoint_of(reopened) == [(1, 0), (2, 3), (4, 9)]
    reopened.append(follower_batch(9, 2), assign_offsets=False)
    assert checkpoint_of(reopened) == [(1, 0), (2, 3)]


def test_an_epoch_checkpointed_before_its_data_reached_the_disk_is_dropped(
    tmp_path: Path,
) -> None:
    log = leader_log(tmp_path)
    log.close()
    # The checkpoint is written before the batch; a crash in between leaves
    # an entry at or past the log end.
    write_leader_epoch_checkpoint(
        tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT_FILE,
        [EpochEntry(1, 0), EpochEntry(2, 3), EpochEntry(4, 9), EpochEntry(5, 12)],
    )
    reopened = open_log(tmp_path / "t-0")
    assert reopened.leader_epoch_cache.entries() == [(1, 0), (2, 3), (4, 9)]
    assert reopened.end_offset_for_epoch(5) == (-1, -1)


def test_a_failed_data_write_takes_back_the_epoch_it_assigned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = leader_log(tmp_path)

    def disk_full(self: LogSegment, *args: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(LogSegment, "append", disk_full)
    # Raised as KAFKA_STORAGE_ERROR, the code a producer or fetcher gets (log_dir_failure).
    with pytest.raises(KafkaError) as failed:
        log.append(follower_batch(20, 7), assign_offsets=False)
    assert isinstance(failed.value.__cause__, OSError)
    assert log.leader_epoch_cache.entries() == [(1, 0), (2, 3), (4, 9)]
    assert checkpoint_of(log) == [(1, 0), (2, 3), (4, 9)]


def test_the_cache_follows_a_renamed_directory(tmp_path: Path) -> None:
    log = leader_log(tmp_path)
    moved = tmp_path / "t-0.abc-delete"
    log.rename_dir(moved)
    log.append(make_batch(1), leader_epoch=8)
    assert read_leader_epoch_checkpoint(moved / LEADER_EPOCH_CHECKPOINT_FILE) == [
        (1, 0),
        (2, 3),
        (4, 9),
        (8, 12),
    ]
    assert not (tmp_path / "t-0").exists()


def test_data_passing_an_entry_the_load_cut_rewrites_the_file_first(tmp_path: Path) -> None:
    """The load cuts entries past the log end in memory only; a follower that
    then appends older-epoch data past such an entry must not leave it in the
    file, or the next load would believe that epoch wrote this data."""
    log = open_log(tmp_path / "t-0")
    log.append(follower_batch(0, 3), assign_offsets=False)
    log.close()
    write_leader_epoch_checkpoint(
        tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT_FILE, [EpochEntry(3, 0), EpochEntry(5, 3)]
    )
    log = open_log(tmp_path / "t-0")
    assert log.leader_epoch_cache.entries() == [(3, 0)]
    log.append(follower_batch(3, 3), assign_offsets=False)
    assert checkpoint_of(log) == [(3, 0)]
    log.close()
    assert open_log(tmp_path / "t-0").leader_epoch_cache.entries() == [(3, 0)]


def test_a_new_leaders_epoch_reaches_the_file_with_its_first_batch(tmp_path: Path) -> None:
    """Taking over thousands of idle partitions must not write thousands of
    files: the entry waits in memory until data of that epoch is appended."""
    log = leader_log(tmp_path)
    log.maybe_assign_epoch_start_offset(7, log.log_end_offset)
    assert log.leader_epoch_cache.entries()[-1] == (7, 12)
    assert checkpoint_of(log) == [(1, 0), (2, 3), (4, 9)]
    log.append(make_batch(3), leader_epoch=7)
    assert checkpoint_of(log) == [(1, 0), (2, 3), (4, 9), (7, 12)]


def test_a_new_logs_first_epoch_is_written_before_its_first_batch(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.maybe_assign_epoch_start_offset(0, 0)
    assert checkpoint_of(log) is None
    log.append(make_batch(3), leader_epoch=0)
    assert checkpoint_of(log) == [(0, 0)]
