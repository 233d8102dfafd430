"""Indexes of loaded segments are read at first use, and recovery writes an
index only when the rebuild changed it: what lets a broker of 10,000 idle
partitions start without opening and rewriting 20,000 index files."""

from __future__ import annotations

import os
from pathlib import Path

from samsa.storage.log import Log
from samsa.storage.topic_config.log_config import LogConfig

from .log_helpers import make_batch

CONFIG = LogConfig.from_dict({"segment.bytes": "600", "index.interval.bytes": "100"})


def _written(directory: Path, *, clean: bool) -> Log:
    log = Log.open(directory, "t", 0, CONFIG)
    for i in range(12):
        log.append(make_batch(2, timestamp=1000 + i))
    if clean:
        log.close()
    return log


def _reopen(directory: Path, *, clean: bool, recovery_point: int = 0) -> Log:
    return Log.open(
        directory, "t", 0, CONFIG, recovery_point=recovery_point, had_clean_shutdown=clean
    )


def test_indexes_are_read_only_when_first_used_after_a_clean_shutdown(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    _written(directory, clean=True)
    log = _reopen(directory, clean=True)
    first, *_, last = log.segments
    assert not first._offset_index.loaded and not first._time_index.loaded
    assert not last._time_index.loaded  # the log end came from the offset index alone
    assert log.read(1, 100_000).records.size > 0  # a read of the first segment loads it
    assert first._offset_index.loaded
    assert not first._time_index.loaded
    assert first.max_timestamp == max(h.max_timestamp for _, h in first.iter_headers())
    assert first._time_index.loaded  # read for the max timestamp
    log.close()


def test_a_corrupt_index_is_rebuilt_at_its_first_use(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    _written(directory, clean=True)
    index = sorted(directory.glob("*.index"))[0]
    good = index.read_bytes()
    assert good
    index.write_bytes(good[:-8] + b"\x7f\xff\xff\xff\x7f\xff\xff\xff")  # points past the log
    log = _reopen(directory, clean=True)
    assert index.read_bytes() != good  # untouched at load
    assert [h.base_offset for h in log.iter_batch_headers()][:3] == [0, 2, 4]
    assert index.read_bytes() == good  # rebuilt when first read
    log.close()


def test_recovery_leaves_intact_indexes_unwritten(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    _written(directory, clean=True)
    indexes = sorted(directory.glob("*index"))
    before = {p: (p.read_bytes(), os.stat(p).st_mtime_ns) for p in indexes}
    log = _reopen(directory, clean=False)  # a crash: every segment is recovered
    assert log.log_end_offset == 24
    assert {p: (p.read_bytes(), os.stat(p).st_mtime_ns) for p in indexes} == before
    log.close()


def test_recovery_rewrites_an_index_a_crash_left_behind(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log = _written(directory, clean=True)
    expected = [s.offset_index.entries for s in _reopen(directory, clean=True).segments]
    last_index = sorted(directory.glob("*.index"))[-2]
    last_index.write_bytes(last_index.read_bytes()[:-8])  # an entry lost in the crash
    log = _reopen(directory, clean=False)
    assert [s.offset_index.entries for s in log.segments] == expected
    assert len(last_index.read_bytes()) == 8 * expected[-2]
    log.close()
