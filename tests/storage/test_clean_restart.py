"""Start-up after a clean stop reads nothing an idle partition does not need:
the log end comes from the recovery-point checkpoint, the leader epoch
checkpoint and the producer-state snapshot are read when first used.  Each
lazily read file, when damaged, takes the same recovery path as before."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.storage.files.leader_epoch_checkpoint import LEADER_EPOCH_CHECKPOINT_FILE
from samsa.storage.log import Log
from samsa.storage.log_manager import LogManager
from samsa.storage.producers.producer_state import ProducerStateManager
from samsa.storage.producers.snapshot import snapshot_path
from samsa.storage.producers.transaction_replay import load_producer_state
from samsa.storage.topic_config.log_config import LogConfig

from .log_helpers import ManualClock, make_batch

CONFIG = LogConfig.from_dict({"segment.bytes": "600", "index.interval.bytes": "100"})
PID = 7


def producer_batch(sequence: int, count: int = 2) -> bytearray:
    builder = RecordBatchBuilder(producer_id=PID, producer_epoch=0, base_sequence=sequence)
    for i in range(count):
        builder.append(1_000 + i, b"k", b"v" * 20)
    return bytearray(builder.build())


def manager(directory: Path) -> LogManager:
    return LogManager(directory, CONFIG, clock=ManualClock())


def test_the_log_end_after_a_clean_stop_comes_from_the_checkpoint(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    log = logs.create_log("t", 0)
    for i in range(12):
        log.append(make_batch(2, timestamp=1000 + i))
    assert len(log.segments) > 2
    logs.close()
    again = manager(tmp_path)
    reopened = again.get_log("t", 0)
    assert reopened is not None
    assert reopened.log_end_offset == 24
    assert not reopened.segments[-1]._offset_index.loaded  # nothing was read for it
    reopened.append(make_batch(1))  # and the log goes on from there
    assert reopened.log_end_offset == 25
    again.close()


def test_a_log_missing_from_the_checkpoint_reads_its_end(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    log = logs.create_log("t", 0)
    for i in range(3):
        log.append(make_batch(2, timestamp=1000 + i))
    logs.close()
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n0\n")
    again = manager(tmp_path)
    reopened = again.get_log("t", 0)
    assert reopened is not None and reopened.log_end_offset == 6
    again.close()


def test_the_log_end_after_a_crash_is_read_from_the_data(tmp_path: Path) -> None:
    logs = manager(tmp_path)
    log = logs.create_log("t", 0)
    log.append(make_batch(2))
    log.flush()
    logs.checkpoint_recovery_points()
    log.append(make_batch(3))  # not flushed, not checkpointed: no clean close
    again = manager(tmp_path)
    reopened = again.get_log("t", 0)
    assert reopened is not None and reopened.log_end_offset == 5
    again.close()


def leader_log(directory: Path) -> Log:
    log = Log.open(directory, "t", 0, CONFIG)
    for epoch in (1, 1, 3):
        log.append(make_batch(2), leader_epoch=epoch)
    return log


def test_the_leader_epoch_checkpoint_is_read_at_first_use(tmp_path: Path) -> None:
    leader_log(tmp_path / "t-0").close()
    reopened = Log.open(tmp_path / "t-0", "t", 0, CONFIG, had_clean_shutdown=True)
    assert reopened._epochs is None
    assert reopened.latest_epoch() == 3
    assert reopened.leader_epoch_cache.entries() == [(1, 0), (3, 4)]


def test_a_corrupt_epoch_checkpoint_is_rebuilt_at_first_use(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    leader_log(tmp_path / "t-0").close()
    (tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT_FILE).write_bytes(b"garbage")
    reopened = Log.open(tmp_path / "t-0", "t", 0, CONFIG, had_clean_shutdown=True)
    with caplog.at_level(logging.WARNING, "samsa.storage"):
        assert reopened.end_offset_for_epoch(1) == (1, 4)
    assert "rebuilding the leader epoch cache" in caplog.text
    assert reopened.leader_epoch_cache.entries() == [(1, 0), (3, 4)]


def test_an_epoch_cache_not_read_yet_follows_a_renamed_directory(tmp_path: Path) -> None:
    leader_log(tmp_path / "t-0").close()
    reopened = Log.open(tmp_path / "t-0", "t", 0, CONFIG, had_clean_shutdown=True)
    reopened.rename_dir(tmp_path / "t-0.x-delete")
    assert reopened.leader_epoch_cache.entries() == [(1, 0), (3, 4)]


def test_a_new_leaders_epoch_waits_for_the_cache_to_be_read(tmp_path: Path) -> None:
    leader_log(tmp_path / "t-0").close()
    reopened = Log.open(tmp_path / "t-0", "t", 0, CONFIG, had_clean_shutdown=True)
    reopened.maybe_assign_epoch_start_offset(5, 6)  # taking over leadership
    assert reopened._epochs is None  # no file read for it
    reopened.append(make_batch(1), leader_epoch=5)
    assert reopened.leader_epoch_cache.entries() == [(1, 0), (3, 4), (5, 6)]
    reopened.close()
    again = Log.open(tmp_path / "t-0", "t", 0, CONFIG, had_clean_shutdown=True)
    assert again.leader_epoch_cache.entries() == [(1, 0), (3, 4), (5, 6)]  # on file


def test_a_truncation_drops_an_epoch_assigned_past_it(tmp_path: Path) -> None:
    leader_log(tmp_path / "t-0").close()
    reopened = Log.open(tmp_path / "t-0", "t", 0, CONFIG, had_clean_shutdown=True)
    reopened.maybe_assign_epoch_start_offset(5, 6)
    reopened.truncate_to(4)
    assert reopened.leader_epoch_cache.entries() == [(1, 0)]


def written_with_snapshot(directory: Path) -> None:
    """A partition of one idempotent producer, closed cleanly with its snapshot."""
    log = Log.open(directory, "t", 0, CONFIG)
    state = ProducerStateManager(directory)
    for sequence in (0, 2, 4):
        log.append(producer_batch(sequence))
    load_producer_state(log, state, None)  # no snapshot yet: replayed from the log
    state.take_snapshot(log.log_end_offset)
    log.close()


def reopened_state(directory: Path) -> tuple[Log, ProducerStateManager]:
    log = Log.open(directory, "t", 0, CONFIG, had_clean_shutdown=True)
    state = ProducerStateManager(directory)
    load_producer_state(log, state, log.take_file_names_at_open())
    return log, state


def test_a_snapshot_at_the_log_end_is_read_at_first_use(tmp_path: Path) -> None:
    written_with_snapshot(tmp_path / "t-0")
    _, state = reopened_state(tmp_path / "t-0")
    assert not state.loaded
    assert state.map_end_offset == 6
    # The first use loads it: a retry of the last batch is a duplicate.
    assert state.check(PID, 0, 4, 5).is_duplicate
    assert state.loaded


def test_the_periodic_expiry_pass_does_not_load_a_deferred_state(tmp_path: Path) -> None:
    written_with_snapshot(tmp_path / "t-0")
    _, state = reopened_state(tmp_path / "t-0")
    assert state.remove_expired(now_ms=10**12, producer_id_expiration_ms=1) == []
    assert not state.loaded
    assert state.last_entry(PID) is not None  # loaded now, expired or not
    assert state.remove_expired(now_ms=10**12, producer_id_expiration_ms=1) == [PID]


def test_a_corrupt_snapshot_read_at_first_use_falls_back_to_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = tmp_path / "t-0"
    written_with_snapshot(directory)
    snapshot_path(directory, 6).write_bytes(b"rotten")
    log, state = reopened_state(directory)
    assert not state.loaded
    with caplog.at_level(logging.WARNING):
        entry = state.last_entry(PID)
    assert "ignoring producer state snapshot" in caplog.text
    assert entry is not None and entry.last_seq == 5  # replayed from the log instead
    assert state.map_end_offset == log.log_end_offset


def test_batches_appended_before_the_first_use_are_replayed_once(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    written_with_snapshot(directory)
    snapshot_path(directory, 6).write_bytes(b"rotten")  # the load must replay the log
    log, state = reopened_state(directory)
    # A follower appends first and replays what it appended after.
    follower_batch = producer_batch(6)
    log.append(follower_batch)
    state.replay_header(next(iter(log.iter_batch_headers(6))))
    entry = state.last_entry(PID)
    assert entry is not None and entry.last_seq == 7
    assert state.check(PID, 0, 8, 9).outcome.name == "OK"


def test_an_unclean_stop_loads_the_state_at_once(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    written_with_snapshot(directory)
    log = Log.open(directory, "t", 0, CONFIG)
    log.append(producer_batch(6))  # past the snapshot: must be replayed
    state = ProducerStateManager(directory)
    load_producer_state(log, state, None)
    assert state.loaded
    entry = state.last_entry(PID)
    assert entry is not None and entry.last_seq == 7
