"""A data dir that fails an I/O operation goes offline; a restart recovers it.

The full disk is real (a tmpfs of a few hundred KB, so root only); fsync and
write errors, which the kernel gives only through device-mapper, come from
``io_faults`` rules."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from tests.diskfaults.disk import fill, small_tmpfs

from samsa.config.broker_config import BrokerConfig
from samsa.errors import ErrorCode, KafkaError
from samsa.storage.files import io_faults
from samsa.storage.log_manager import CLEAN_SHUTDOWN_FILE, LogManager
from samsa.storage.topic_config.log_config import LogConfig

from .log_helpers import ManualClock, make_batch

CONFIG = LogConfig.from_dict({"segment.bytes": "100000", "flush.ms": "1000"})


@pytest.fixture
def fault_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    rules = tmp_path / "io-faults"
    monkeypatch.setattr(io_faults, "_rules_file", str(rules))
    return rules


def test_full_disk_refuses_the_append_and_takes_the_dir_offline(tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "disk", "512k") as disk:
        manager = LogManager(disk / "data", CONFIG, clock=ManualClock())
        log = manager.create_log("orders", 0)
        for _ in range(5):
            log.append(make_batch(10))
        other = manager.create_log("orders", 1)
        filler = fill(disk)
        with pytest.raises(KafkaError) as refused:
            log.append(make_batch(50, value_size=200))
        assert refused.value.code == ErrorCode.KAFKA_STORAGE_ERROR
        assert "No space left" in str(refused.value)
        assert manager.offline
        # Every log of the dir refuses from now on, reads too.
        for failed in (log, other):
            with pytest.raises(KafkaError) as offline:
                failed.read(0, 1000)
            assert offline.value.code == ErrorCode.KAFKA_STORAGE_ERROR
        with pytest.raises(KafkaError):
            manager.create_log("orders", 2)
        manager.close()
        assert not (disk / "data" / CLEAN_SHUTDOWN_FILE).exists()

        filler.unlink()  # space comes back; a restart recovers
        reopened = LogManager(disk / "data", CONFIG, clock=ManualClock())
        recovered = reopened.get_log("orders", 0)
        assert recovered is not None
        assert recovered.log_end_offset == 50  # the refused batch left nothing
        assert sum(h.records_count for h in recovered.iter_batch_headers()) == 50
        recovered.append(make_batch(1))
        reopened.close()


def test_fsync_error_takes_the_dir_offline_and_restart_recovers(
    tmp_path: Path, fault_rules: Path
) -> None:
    clock = ManualClock()
    manager = LogManager(tmp_path / "data", CONFIG, clock=clock)
    log = manager.create_log("orders", 0)
    log.append(make_batch(10))
    fault_rules.write_text(f"fsync {tmp_path / 'data'}/\n")
    clock.advance(2000)
    manager.flush_dirty(clock())  # the periodic flush meets EIO: logged, dir offline
    assert manager.offline
    assert log.recovery_point == 0  # never advanced past a failed fsync
    with pytest.raises(KafkaError) as refused:
        log.append(make_batch(1))
    assert refused.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    assert "offline" in str(refused.value)
    manager.close()
    assert not (tmp_path / "data" / CLEAN_SHUTDOWN_FILE).exists()

    fault_rules.unlink()
    reopened = LogManager(tmp_path / "data", CONFIG, clock=ManualClock())
    recovered = reopened.get_log("orders", 0)
    assert recovered is not None and recovered.log_end_offset == 10
    reopened.close()


def test_write_error_of_an_index_or_checkpoint_takes_the_dir_offline(
    tmp_path: Path, fault_rules: Path
) -> None:
    manager = LogManager(tmp_path / "data", CONFIG, clock=ManualClock())
    log = manager.create_log("orders", 0)
    fault_rules.write_text(f"write {tmp_path / 'data'}/recovery ENOSPC\n")
    with pytest.raises(KafkaError) as refused:
        manager.checkpoint_recovery_points()
    assert refused.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    assert os.strerror(errno.ENOSPC) in str(refused.value)
    assert manager.offline and log.offline


def test_a_closed_log_is_no_dir_failure(tmp_path: Path) -> None:
    manager = LogManager(tmp_path / "data", CONFIG, clock=ManualClock())
    log = manager.create_log("orders", 0)
    manager.delete_log("orders", 0)
    with pytest.raises(KafkaError):
        log.flush()
    assert not manager.offline
    manager.close()


def test_an_index_write_error_refuses_the_append_and_recovery_rebuilds_the_index(
    tmp_path: Path, fault_rules: Path
) -> None:
    every_batch_indexed = LogConfig.from_dict({"index.interval.bytes": "1"})
    manager = LogManager(tmp_path / "data", every_batch_indexed, clock=ManualClock())
    log = manager.create_log("orders", 0)
    log.append(make_batch(5))
    fault_rules.write_text(f"write {log.directory}/00000000000000000000.index\n")
    with pytest.raises(KafkaError) as refused:
        log.append(make_batch(5))
    assert refused.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    assert manager.offline
    manager.close()
    fault_rules.unlink()
    reopened = LogManager(tmp_path / "data", every_batch_indexed, clock=ManualClock())
    recovered = reopened.get_log("orders", 0)
    # The refused batch reached the .log before its index entry failed: recovery
    # keeps it (it was never acknowledged, and an idempotent retry is a duplicate).
    assert recovered is not None and recovered.log_end_offset in (5, 10)
    assert len(recovered.read(recovered.log_end_offset - 1, 100_000).records) > 0
    reopened.close()


def test_log_dirs_lists_every_dir_and_the_data_dir_is_the_first() -> None:
    config = BrokerConfig({"log.dirs": "/disks/a,/disks/b"})
    assert config.log_dirs == [Path("/disks/a"), Path("/disks/b")]
    assert config.data_dir == Path("/disks/a")
