"""The Raft metadata log's directory is left to the Raft layer: LogManager
never loads, creates, retains, flushes, checkpoints or cleans it."""

from __future__ import annotations

from pathlib import Path

import pytest

from samsa.errors import ErrorCode, KafkaError
from samsa.storage import CLUSTER_METADATA_TOPIC, METADATA_LOG_DIR, Log, LogConfig, LogManager
from samsa.storage.files.checkpoint import read_checkpoint

from .log_helpers import ManualClock, make_batch

AGGRESSIVE = LogConfig.from_dict(
    {"segment.bytes": "200", "retention.ms": "1", "retention.bytes": "1", "flush.ms": "1"}
)


def write_metadata_log(data_dir: Path) -> Log:
    log = Log.open(data_dir / METADATA_LOG_DIR, CLUSTER_METADATA_TOPIC, 0, AGGRESSIVE)
    for epoch in (1, 1, 2, 2, 3):
        log.append(make_batch(2, timestamp=1), leader_epoch=epoch)
    return log


def snapshot_of(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_the_metadata_dir_name_is_kafkas() -> None:
    assert METADATA_LOG_DIR == "__cluster_metadata-0"


def test_log_manager_leaves_the_metadata_log_alone(tmp_path: Path) -> None:
    metadata = write_metadata_log(tmp_path)
    metadata.close()
    before = snapshot_of(tmp_path / METADATA_LOG_DIR)
    assert len([n for n in before if n.endswith(".log")]) > 1

    # An unclean start (no clean-shutdown marker) recovers every log it loads.
    clock = ManualClock(10**12)
    manager = LogManager(tmp_path, AGGRESSIVE, clock=clock)
    assert manager.all_logs() == {}
    assert manager.get_log(CLUSTER_METADATA_TOPIC, 0) is None
    user = manager.create_log("orders", 0)
    for _ in range(5):
        user.append(make_batch(2, timestamp=1))
    assert manager.run_retention(clock()) > 0  # retention ran, on the user log only
    manager.flush_dirty(clock())
    manager.close()

    assert snapshot_of(tmp_path / METADATA_LOG_DIR) == before
    for checkpoint in ("recovery-point-offset-checkpoint", "log-start-offset-checkpoint"):
        assert set(read_checkpoint(tmp_path / checkpoint)) == {("orders", 0)}

    # The Raft layer still opens it directly.
    reopened = Log.open(tmp_path / METADATA_LOG_DIR, CLUSTER_METADATA_TOPIC, 0, AGGRESSIVE)
    assert (reopened.log_start_offset, reopened.log_end_offset) == (0, 10)
    assert reopened.leader_epoch_cache.entries() == [(1, 0), (2, 4), (3, 8)]


def test_the_metadata_topic_cannot_be_created_as_a_partition(tmp_path: Path) -> None:
    manager = LogManager(tmp_path, AGGRESSIVE, clock=ManualClock())
    with pytest.raises(KafkaError) as e:
        manager.create_log(CLUSTER_METADATA_TOPIC, 0)
    assert e.value.code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert not (tmp_path / METADATA_LOG_DIR).exists()
