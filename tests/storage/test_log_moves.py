"""Moving a log between two dirs of one broker: future logs, the swap, and crashes around it.

Every state a crash can leave on disk is built here as the swap leaves it,
and the dirs are opened again as a restarted broker opens them: each ends
with exactly one log of the partition, holding every batch it had.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from samsa.protocol.batches.record_batch import iter_batches
from samsa.storage.files.checkpoint import RECOVERY_POINT_CHECKPOINT, read_checkpoint
from samsa.storage.log import Log
from samsa.storage.log_dirs import LogDirs
from samsa.storage.moves.names import (
    future_dir_name,
    future_name_too_long,
    parse_future_dir,
)
from samsa.storage.moves.swap import replace_current_with_future
from samsa.storage.topic_config.log_config import LogConfig

from .log_helpers import ManualClock, make_batch

CONFIG = LogConfig.from_dict({"segment.bytes": "2000"})


def _open(tmp_path: Path) -> LogDirs:
    return LogDirs.open([tmp_path / "a", tmp_path / "b"], CONFIG, clock=ManualClock())


def _log_bytes(log: Log) -> bytes:
    """Every batch of the log, segment after segment (a read stops at a segment's end)."""
    out = bytearray()
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        records = log.read(offset, 1 << 30).records
        chunk = records if isinstance(records, bytes) else records.read_bytes()
        out += chunk
        offset = [h for _, h in iter_batches(memoryview(chunk))][-1].next_offset
    return bytes(out)


def _fill(log: Log, batches: int) -> None:
    for _ in range(batches):
        log.append(make_batch(5, value_size=40))


def _copy(source: Log, future: Log) -> None:
    """The copier's work, as its bytes land: every batch, offsets kept."""
    future.append(bytearray(_log_bytes(source)), assign_offsets=False)


def _moving(tmp_path: Path) -> tuple[LogDirs, Log, Log]:
    """orders-0 in a/ with data, its future log in b/ holding the same."""
    dirs = _open(tmp_path)
    a, b = dirs.managers
    dirs.prefer_dir("orders", 0, a)
    current = dirs.create_log("orders", 0)
    _fill(current, 12)  # several segments
    future = dirs.create_future_log("orders", 0, b, CONFIG)
    _copy(current, future)
    return dirs, current, future


def test_names_are_kafkas() -> None:
    name = future_dir_name("orders", 3)
    assert name.startswith("orders-3.") and name.endswith("-future")
    assert len(name) == len("orders-3.") + 32 + len("-future")
    assert parse_future_dir(name) == ("orders", 3)
    assert parse_future_dir("my-topic-12." + "ab" * 16 + "-future") == ("my-topic", 12)
    for other in (
        "orders-3",
        "orders-3." + "a" * 32 + "-delete",
        "orders-x." + "a" * 32 + "-future",
    ):
        assert parse_future_dir(other) is None
    assert not future_name_too_long("t" * 200, 0)
    assert future_name_too_long("t" * 249, 0)  # 249 + "-0." + 32 + "-future" > 255


def test_a_move_asked_before_the_partition_exists_places_it_there(tmp_path: Path) -> None:
    dirs = _open(tmp_path)
    a, b = dirs.managers
    dirs.create_log("other", 0)  # a/ now holds one more: new logs would go to b/
    dirs.prefer_dir("orders", 0, a)
    assert dirs.create_log("orders", 0).directory.parent == a.data_dir
    # The preference is used once: the next partition goes by count again.
    assert dirs.create_log("orders", 1).directory.parent == b.data_dir
    dirs.close()


def test_the_swap_leaves_one_log_with_everything_in_the_target_dir(tmp_path: Path) -> None:
    dirs, current, future = _moving(tmp_path)
    a, b = dirs.managers
    before = _log_bytes(current)
    old, new = replace_current_with_future(a, b, "orders", 0)
    assert (old, new) == (current, future)
    assert dirs.get_log("orders", 0) is future and dirs.future_log("orders", 0) is None
    assert future.directory == b.data_dir / "orders-0"
    assert _log_bytes(future) == before
    future.append(make_batch(2))  # the new log takes writes
    a.wait_for_deletions()
    assert not any(p.name.startswith("orders-0") for p in a.data_dir.iterdir())
    dirs.close()
    assert ("orders", 0) in read_checkpoint(b.data_dir / RECOVERY_POINT_CHECKPOINT)
    reopened = _open(tmp_path)
    log = reopened.get_log("orders", 0)
    assert log is not None and log.directory.parent == tmp_path / "b"
    assert log.log_end_offset == 62
    reopened.close()


def test_a_crash_before_the_swap_resumes_the_copy_with_both_logs(tmp_path: Path) -> None:
    dirs, current, future = _moving(tmp_path)
    end = future.log_end_offset
    current.append(make_batch(3))  # written after the last copy pass
    for manager in dirs.managers:  # SIGKILL: no close, no clean-shutdown marker
        manager.checkpoint_recovery_points()
    reopened = _open(tmp_path)
    a, b = reopened.managers
    log = reopened.get_log("orders", 0)
    found = reopened.future_log("orders", 0)
    assert log is not None and log.directory.parent == a.data_dir
    assert log.log_end_offset == end + 3
    assert found is not None and found[0] is b and found[1].log_end_offset == end
    reopened.close()


def test_a_crash_inside_the_swap_finishes_it_at_start(tmp_path: Path) -> None:
    """Killed after the current dir became ``-delete`` and before the future dir
    took the partition's name: the future log alone holds the partition."""
    dirs, current, _ = _moving(tmp_path)
    a, _ = dirs.managers
    expected = _log_bytes(current)
    current.rename_dir(a.doomed_dir("orders", 0))  # step 1 of the swap, then SIGKILL
    reopened = _open(tmp_path)
    log = reopened.get_log("orders", 0)
    assert log is not None and log.directory == tmp_path / "b" / "orders-0"
    assert reopened.future_log("orders", 0) is None
    assert _log_bytes(log) == expected
    assert [p.name for p in (tmp_path / "a").iterdir() if p.name.startswith("orders")] == []
    reopened.close()
    again = _open(tmp_path)  # and it stays so
    assert again.get_log("orders", 0) is not None
    again.close()


def test_a_crash_after_the_swap_leaves_the_new_log(tmp_path: Path) -> None:
    dirs, current, _ = _moving(tmp_path)
    a, b = dirs.managers
    expected = _log_bytes(current)
    # Both renames done, the old files not removed yet: a -delete dir remains.
    current.rename_dir(a.doomed_dir("orders", 0))
    name = next(p for p in b.data_dir.iterdir() if p.name.endswith("-future"))
    name.rename(b.data_dir / "orders-0")
    reopened = _open(tmp_path)
    log = reopened.get_log("orders", 0)
    assert log is not None and log.directory.parent == tmp_path / "b"
    assert _log_bytes(log) == expected
    reopened.close()


def test_a_future_log_beside_its_current_log_is_dropped(tmp_path: Path) -> None:
    dirs = _open(tmp_path)
    a, _ = dirs.managers
    dirs.prefer_dir("orders", 0, a)
    _fill(dirs.create_log("orders", 0), 2)
    dirs.close()
    (a.data_dir / future_dir_name("orders", 0)).mkdir()
    reopened = _open(tmp_path)
    assert reopened.future_log("orders", 0) is None
    log = reopened.get_log("orders", 0)
    assert log is not None and log.log_end_offset == 10
    reopened.close()


def test_deleting_a_moving_partition_deletes_both_logs(tmp_path: Path) -> None:
    dirs, _, _ = _moving(tmp_path)
    dirs.delete_log("orders", 0)
    for manager in dirs.managers:
        manager.wait_for_deletions()
        assert not [p for p in manager.data_dir.iterdir() if p.name.startswith("orders")]
    dirs.close()


def test_a_future_log_is_flushed_checkpointed_and_reopened_clean(tmp_path: Path) -> None:
    dirs, _, future = _moving(tmp_path)
    end = future.log_end_offset
    dirs.close()
    b = tmp_path / "b"
    assert read_checkpoint(b / RECOVERY_POINT_CHECKPOINT) == {("orders", 0): end}
    reopened = _open(tmp_path)
    found = reopened.future_log("orders", 0)
    assert found is not None and found[1].log_end_offset == end
    assert found[1].recovery_point == end
    reopened.close()


def test_no_future_log_while_a_dir_is_offline(tmp_path: Path) -> None:
    from samsa.errors import ErrorCode, KafkaError

    dirs = _open(tmp_path)
    a, b = dirs.managers
    dirs.prefer_dir("orders", 0, a)
    dirs.create_log("orders", 0)
    a.report_io_error(OSError(5, "injected"))
    with pytest.raises(KafkaError) as refused:
        dirs.create_future_log("orders", 0, b, CONFIG)
    assert refused.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    dirs.close()
