"""Several log dirs on one broker (JBOD): placement, start-up, one dir failing."""

from __future__ import annotations

from pathlib import Path

import pytest

from samsa.errors import ErrorCode, KafkaError
from samsa.storage.files import io_faults
from samsa.storage.files.checkpoint import RECOVERY_POINT_CHECKPOINT, read_checkpoint
from samsa.storage.log_dirs import DuplicateLogError, LogDirs
from samsa.storage.log_manager import CLEAN_SHUTDOWN_FILE
from samsa.storage.topic_config.log_config import LogConfig

from .log_helpers import ManualClock, make_batch

CONFIG = LogConfig.from_dict({"segment.bytes": "100000", "flush.ms": "1000"})


def _open(tmp_path: Path, clock: ManualClock | None = None) -> LogDirs:
    return LogDirs.open([tmp_path / "a", tmp_path / "b"], CONFIG, clock=clock or ManualClock())


def test_new_partitions_go_to_the_dir_with_fewest_and_are_found_there_at_start(
    tmp_path: Path,
) -> None:
    dirs = _open(tmp_path)
    for partition in range(4):
        dirs.create_log("orders", partition).append(make_batch(3))
    placed = {key: log.directory.parent for key, log in dirs.all_logs().items()}
    assert sorted(placed.values()).count(tmp_path / "a") == 2
    assert sorted(placed.values()).count(tmp_path / "b") == 2
    dirs.close()
    for sub in ("a", "b"):  # each dir keeps its own checkpoints and clean marker
        assert (tmp_path / sub / CLEAN_SHUTDOWN_FILE).exists()
        held = read_checkpoint(tmp_path / sub / RECOVERY_POINT_CHECKPOINT)
        assert set(held) == {k for k, d in placed.items() if d == tmp_path / sub}

    reopened = _open(tmp_path)
    assert {key: log.directory.parent for key, log in reopened.all_logs().items()} == placed
    assert all(log.log_end_offset == 3 for log in reopened.all_logs().values())
    reopened.delete_log("orders", 0)
    assert reopened.get_log("orders", 0) is None
    reopened.close()


def test_a_partition_in_two_dirs_refuses_to_start(tmp_path: Path) -> None:
    dirs = _open(tmp_path)
    dirs.create_log("orders", 0)
    dirs.close()
    (tmp_path / "b" / "orders-0").mkdir(parents=True, exist_ok=True)
    (tmp_path / "a" / "orders-0").mkdir(parents=True, exist_ok=True)
    with pytest.raises(DuplicateLogError, match="orders-0"):
        _open(tmp_path)


def test_an_io_error_in_one_dir_leaves_the_other_serving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = tmp_path / "io-faults"
    monkeypatch.setattr(io_faults, "_rules_file", str(rules))
    clock = ManualClock()
    dirs = _open(tmp_path, clock)
    in_a = dirs.create_log("orders", 0)
    in_b = dirs.create_log("orders", 1)
    assert in_a.directory.parent != in_b.directory.parent
    failing = in_a.directory.parent
    rules.write_text(f"write {failing}/ EIO\n")
    with pytest.raises(KafkaError) as refused:
        in_a.append(make_batch(1))
    assert refused.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    assert not dirs.offline  # one dir is left
    assert dirs.failure_channel.offline_dirs().keys() == {str(failing)}
    in_b.append(make_batch(2))  # the other dir serves on
    assert in_b.read(0, 10_000)
    # New partitions go to the dir that works, whatever the counts.
    assert dirs.create_log("orders", 2).directory.parent == in_b.directory.parent
    clock.advance(2000)
    dirs.flush_dirty(clock())  # the working dir still checkpoints
    assert read_checkpoint(in_b.directory.parent / RECOVERY_POINT_CHECKPOINT)
    dirs.close()
    assert not (failing / CLEAN_SHUTDOWN_FILE).exists()
    assert (in_b.directory.parent / CLEAN_SHUTDOWN_FILE).exists()

    rules.unlink()
    reopened = _open(tmp_path)
    assert reopened.get_log("orders", 1) is not None
    assert reopened.get_log("orders", 1).log_end_offset == 2  # type: ignore[union-attr]
    reopened.close()


def test_every_dir_failing_takes_the_broker_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = tmp_path / "io-faults"
    monkeypatch.setattr(io_faults, "_rules_file", str(rules))
    dirs = _open(tmp_path)
    logs = [dirs.create_log("orders", p) for p in range(2)]
    rules.write_text(f"write {tmp_path}/ EIO\n")
    for log in logs:
        with pytest.raises(KafkaError):
            log.append(make_batch(1))
    assert dirs.offline
    with pytest.raises(KafkaError) as refused:
        dirs.create_log("orders", 5)
    assert refused.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    dirs.close()
