"""The cleaner under max.decompressed.message.bytes: a compressed batch whose records
are over the limit fails the pass as Kafka's ``filterTo`` does (INVALID_RECORD),
the partition is marked uncleanable, and nothing of the log changes."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from samsa.protocol.batches.compression import Compression
from samsa.storage.cleaner.manager import LogCleaner
from samsa.storage.log import Log

from .log_helpers import ManualClock
from .test_cleaner import KEY, batch, compact_config, open_log, read_all


def files_of(log: Log) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(log.directory.iterdir()) if p.is_file()}


def refused_pass(tmp_path: Path, log: Log, clock: ManualClock) -> str:
    """Run a pass that must fail on the limit; returns why the log is uncleanable."""
    before = files_of(log)
    cleaner = LogCleaner(tmp_path)
    assert cleaner.run_pass({KEY: log}, clock()) == {}
    assert list(cleaner.stats.uncleanable) == ["t-0"]
    assert files_of(log) == before  # no cleaned segment left behind, nothing swapped
    return cleaner.stats.uncleanable["t-0"]


@pytest.mark.parametrize("codec", [Compression.GZIP, Compression.ZSTD])
def test_a_record_over_the_limit_leaves_the_log_whole_until_the_limit_allows_it(
    tmp_path: Path, codec: Compression, caplog: pytest.LogCaptureFixture
) -> None:
    clock = ManualClock()
    log = open_log(tmp_path, clock, compact_config(**{"max.decompressed.message.bytes": "64"}))
    log.append(batch([(b"a", b"1"), (b"b", b"2")], compression=codec))
    log.append(batch([(b"a", b"x" * 200)], compression=codec))  # a body of ~210 bytes
    log.append(batch([(b"a", b"3")]))
    log.roll()
    written = read_all(log)
    with caplog.at_level(logging.ERROR, logger="samsa.storage"):
        why = refused_pass(tmp_path, log, clock)
    assert read_all(log) == written
    assert "INVALID_RECORD" in why and "max.decompressed.message.bytes" in why
    assert any("marked uncleanable" in r.getMessage() for r in caplog.records)

    # A limit that allows the record: the next broker's cleaner compacts as ever.
    log.update_config(compact_config(**{"max.decompressed.message.bytes": "1000"}))
    assert LogCleaner(tmp_path).clean_log(KEY, log, clock()) is not None
    assert read_all(log) == [(1, b"b", b"2"), (3, b"a", b"3")]


def test_a_bomb_in_the_log_is_refused_without_inflating_it(tmp_path: Path) -> None:
    """A batch that got in before the limit was lowered: 64 MiB of zeros, a few KB of zstd."""
    clock = ManualClock()
    config = compact_config(**{"max.decompressed.message.bytes": str(1 << 20)})
    log = open_log(tmp_path, clock, config)
    log.append(batch([(b"a", b"1")], compression=Compression.ZSTD))
    log.append(batch([(b"a", bytes(64 << 20))], compression=Compression.ZSTD))
    log.append(batch([(b"b", b"2")]))
    log.roll()
    started = time.perf_counter()
    why = refused_pass(tmp_path, log, clock)
    assert time.perf_counter() - started < 5.0
    assert "decompresses to more than" in why
