"""LogManager: loading a data dir, checkpoints, clean and unclean restarts, deletion."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from samsa.errors import KafkaError
from samsa.storage.files.checkpoint import read_checkpoint
from samsa.storage.log import Log
from samsa.storage.log_manager import CLEAN_SHUTDOWN_FILE, LogManager
from samsa.storage.topic_config.log_config import LogConfig

from .log_helpers import ManualClock, make_batch

DEFAULT = LogConfig.from_dict({"segment.bytes": "500", "retention.ms": "60000"})


def test_create_append_close_reopen(tmp_path: Path) -> None:
    manager = LogManager(tmp_path, DEFAULT, clock=ManualClock())
    a = manager.create_log("orders", 0)
    b = manager.create_log("my-topic", 3)
    assert manager.create_log("orders", 0) is a
    for _ in range(10):
        a.append(make_batch(3))
    b.append(make_batch(1))
    a.delete_records(4)
    manager.close()
    assert (tmp_path / CLEAN_SHUTDOWN_FILE).exists()
    assert (tmp_path / "recovery-point-offset-checkpoint").read_text() == (
        "0\n2\nmy-topic 3 1\norders 0 30\n"
    )
    assert read_checkpoint(tmp_path / "log-start-offset-checkpoint") == {
        ("orders", 0): 4,
        ("my-topic", 3): 0,
    }

    manager = LogManager(tmp_path, DEFAULT, clock=ManualClock())
    assert not (tmp_path / CLEAN_SHUTDOWN_FILE).exists()
    a = manager.get_log("orders", 0)
    b = manager.get_log("my-topic", 3)
    assert a is not None and b is not None
    assert (a.log_start_offset, a.log_end_offset) == (4, 30)
    assert b.log_end_offset == 1
    assert a.recovery_point == 30


def test_unclean_restart_recovers_from_recovery_point(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    manager = LogManager(tmp_path, DEFAULT, clock=ManualClock())
    log = manager.create_log("t", 0)
    for _ in range(10):
        log.append(make_batch(3))
    manager.flush_all()  # recovery point 30, checkpointed
    log.append(make_batch(3))
    log.append(make_batch(3))
    active = log.active_segment.log.path
    os.truncate(active, active.stat().st_size - 5)  # torn, then "kill -9": no close

    with caplog.at_level(logging.WARNING, logger="samsa.storage"):
        manager = LogManager(tmp_path, DEFAULT, clock=ManualClock())
    log2 = manager.get_log("t", 0)
    assert log2 is not None
    assert log2.log_end_offset == 33
    assert "[t-0] recovery truncated segment" in caplog.text
    assert "at offset 33" in caplog.text


def test_corrupt_checkpoint_means_full_recovery(tmp_path: Path) -> None:
    manager = LogManager(tmp_path, DEFAULT)
    manager.create_log("t", 0).append(make_batch(2))
    manager.close()
    (tmp_path / "recovery-point-offset-checkpoint").write_text("garbage")
    (tmp_path / CLEAN_SHUTDOWN_FILE).unlink()
    manager = LogManager(tmp_path, DEFAULT)
    log = manager.get_log("t", 0)
    assert log is not None and log.log_end_offset == 2 and log.recovery_point == 0


def test_delete_log_renames_then_removes(tmp_path: Path) -> None:
    manager = LogManager(tmp_path, DEFAULT)
    log = manager.create_log("t", 0)
    log.append(make_batch(2))
    region = log.read(0, 1000).records
    manager.delete_log("t", 0)
    assert manager.get_log("t", 0) is None
    assert not (tmp_path / "t-0").exists()  # renamed at once: the name is free
    manager.wait_for_deletions()  # the files go in the background
    assert not any(p.is_dir() for p in tmp_path.iterdir())
    assert len(region) > 0 and len(bytes(region)) == len(region)  # in-flight read still works
    with pytest.raises(KafkaError):
        manager.delete_log("t", 0)
    manager.checkpoint_recovery_points()
    assert read_checkpoint(tmp_path / "recovery-point-offset-checkpoint") == {}


def test_leftover_delete_dirs_are_removed_on_start(tmp_path: Path) -> None:
    doomed = tmp_path / "t-0.0123456789abcdef0123456789abcdef-delete"
    doomed.mkdir()
    (doomed / "00000000000000000000.log").write_bytes(b"")
    (tmp_path / "not-a-partition").mkdir()
    manager = LogManager(tmp_path, DEFAULT)
    assert not doomed.exists()
    assert manager.all_logs() == {}


def test_retention_and_config_updates(tmp_path: Path) -> None:
    manager = LogManager(tmp_path, DEFAULT)
    log = manager.create_log("t", 0)
    for i in range(6):
        log.append(make_batch(3, timestamp=1_000 * i))
    assert [s.base_offset for s in log.segments] == [0, 9]  # 3 batches of 3 records per segment
    assert manager.run_retention(now_ms=10_000) == 0
    manager.update_config(
        "t", LogConfig.from_dict({"segment.bytes": "500", "retention.ms": "2500"})
    )
    assert manager.run_retention(now_ms=6_000) == 1
    assert read_checkpoint(tmp_path / "log-start-offset-checkpoint") == {("t", 0): 9}
    assert manager.create_log(
        "u", 0, LogConfig.from_dict({"cleanup.policy": "compact"})
    ).config.compact


class RetentionFailingLog(Log):
    """A real log whose retention raises, standing in for any one broken log."""

    def run_retention(self, now_ms: int, high_watermark: int | None = None) -> int:
        raise RuntimeError("injected retention fault")


def test_one_log_failing_retention_does_not_stop_the_others(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    short = LogConfig.from_dict({"segment.bytes": "500", "retention.ms": "2500"})
    manager = LogManager(tmp_path, short)
    broken = manager.create_log("a-broken", 0)
    healthy = manager.create_log("b-healthy", 0)
    for i in range(6):
        broken.append(make_batch(3, timestamp=1_000 * i))
        healthy.append(make_batch(3, timestamp=1_000 * i))
    broken.__class__ = RetentionFailingLog

    with caplog.at_level(logging.INFO, logger="samsa.storage"):
        assert manager.run_retention(now_ms=6_000) == 1
        assert manager.run_retention(now_ms=6_000) == 0
        broken.__class__ = Log
        assert manager.run_retention(now_ms=6_000) == 1

    assert healthy.log_start_offset == 9 and broken.log_start_offset == 9
    failures = [r for r in caplog.records if "injected retention fault" in r.getMessage()]
    assert len(failures) == 1 and "a-broken-0" in failures[0].getMessage()
    assert any("works again" in r.getMessage() for r in caplog.records)
    assert read_checkpoint(tmp_path / "log-start-offset-checkpoint") == {
        ("a-broken", 0): 9,
        ("b-healthy", 0): 9,
    }
