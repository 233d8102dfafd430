"""A tiered log (``remote.storage.enable``): its two starts, local retention behind the
remote tier, and a restart that must keep the remote part of the log start."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.storage.log_helpers import ManualClock, make_batch

from samsa.errors import ErrorCode, KafkaError
from samsa.storage.files.checkpoint import LOG_START_OFFSET_CHECKPOINT, write_checkpoint
from samsa.storage.leader_epoch_cache import EpochEntry
from samsa.storage.log import Log
from samsa.storage.log_manager import LogManager
from samsa.storage.topic_config.log_config import LogConfig

TIERED = {"remote.storage.enable": "true", "local.retention.bytes": "1", "segment.bytes": "250"}


def open_log(path: Path, **overrides: str) -> Log:
    config = LogConfig.from_dict(overrides)
    return Log.open(path / "orders-0", "orders", 0, config, clock=ManualClock())


def fill(log: Log, segments: int) -> None:
    for _ in range(segments):
        log.append(make_batch(3), leader_epoch=0)
    assert [s.base_offset for s in log.segments] == [3 * i for i in range(segments)]


def test_local_retention_waits_for_the_copy_and_keeps_the_log_start(tmp_path: Path) -> None:
    log = open_log(tmp_path, **TIERED)
    fill(log, 4)
    assert log.run_retention(now_ms=0) == 0  # nothing is in the remote tier yet
    log.update_highest_offset_in_remote_storage(4)  # segment 0 whole, segment 3 not
    assert log.run_retention(now_ms=0) == 1
    assert [s.base_offset for s in log.segments] == [3, 6, 9]
    assert (log.log_start_offset, log.local_log_start_offset) == (0, 3)
    with pytest.raises(KafkaError) as raised:
        log.read(2, 1000)  # the remote tier answers that, not the local log
    assert raised.value.code is ErrorCode.OFFSET_OUT_OF_RANGE
    assert log.read(3, 1000).records
    log.update_highest_offset_in_remote_storage(8)
    assert log.run_retention(now_ms=0) == 2
    assert log.local_log_start_offset == 9  # never the active segment
    assert log.leader_epoch_cache.entries() == [(0, 0)], "the remote part's epochs were cut"


def test_copy_disabled_retention_needs_no_copy(tmp_path: Path) -> None:
    log = open_log(tmp_path, **TIERED, **{"remote.log.copy.disable": "true"})
    fill(log, 3)
    assert log.run_retention(now_ms=0) == 2
    assert log.log_start_offset == 0


def test_local_retention_by_time_uses_local_retention_ms(tmp_path: Path) -> None:
    overrides = {**TIERED, "local.retention.bytes": "-2", "local.retention.ms": "10"}
    log = open_log(tmp_path, **overrides)
    for i in range(3):
        log.append(make_batch(3, timestamp=1_000 + i), leader_epoch=0)
    log.update_highest_offset_in_remote_storage(100)
    assert log.run_retention(now_ms=1_005) == 0
    assert log.run_retention(now_ms=1_020) == 2


def test_the_remote_tier_moves_the_log_start_up_only(tmp_path: Path) -> None:
    log = open_log(tmp_path, **TIERED)
    fill(log, 4)
    log.update_highest_offset_in_remote_storage(8)
    log.run_retention(now_ms=0)
    log.update_log_start_offset_from_remote(4)
    assert (log.log_start_offset, log.local_log_start_offset) == (4, 9)
    log.update_log_start_offset_from_remote(2)
    assert log.log_start_offset == 4
    log.update_log_start_offset_from_remote(10)  # past the local start: local segments go
    assert (log.log_start_offset, [s.base_offset for s in log.segments]) == (10, [9])


def test_a_restart_keeps_the_remote_part_of_the_log_start(tmp_path: Path) -> None:
    """Logs load before the topic configs arrive, so the load raises the log
    start to the first local segment; the first config of a tiered log puts
    the checkpointed start back (epochs included), that of another log not."""
    data = tmp_path / "data"
    manager = LogManager(data, LogConfig())
    tiered = manager.create_log("orders", 0, LogConfig.from_dict(TIERED))
    plain = manager.create_log("plain", 0, LogConfig.from_dict({"segment.bytes": "250"}))
    for log in (tiered, plain):
        fill(log, 3)
    tiered.update_highest_offset_in_remote_storage(5)
    tiered.run_retention(now_ms=0)
    manager.close()
    # A crash after retention deleted plain's first segment, before its checkpoint.
    for path in sorted((data / "plain-0").glob("00000000000000000000.*")):
        path.unlink()
    write_checkpoint(data / LOG_START_OFFSET_CHECKPOINT, {("orders", 0): 0, ("plain", 0): 0})

    reopened = LogManager(data, LogConfig())
    tiered, plain = reopened.get_log("orders", 0), reopened.get_log("plain", 0)
    assert tiered is not None and plain is not None
    assert (tiered.log_start_offset, plain.log_start_offset) == (6, 3)
    tiered.update_config(LogConfig.from_dict(TIERED))
    plain.update_config(LogConfig.from_dict({"segment.bytes": "250"}))
    assert (tiered.log_start_offset, tiered.local_log_start_offset) == (0, 6)
    assert plain.log_start_offset == 3
    assert tiered.leader_epoch_cache.entries() == [(0, 0)]
    reopened.close()


def test_a_rebuilt_follower_starts_past_its_log_start(tmp_path: Path) -> None:
    log = open_log(tmp_path, **TIERED)
    fill(log, 2)
    log.truncate_fully_and_start_at(120, 40)
    log.restore_leader_epochs([EpochEntry(0, 0), EpochEntry(3, 90)])
    assert (log.log_start_offset, log.local_log_start_offset, log.log_end_offset) == (40, 120, 120)
    assert log.latest_epoch() == 3
    log.append(make_batch(2, base_offset=120), assign_offsets=False)
    assert log.log_end_offset == 122
