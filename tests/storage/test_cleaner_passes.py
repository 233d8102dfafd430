"""A cleaner pass over many logs: planning edge cases and failure isolation.

Regression for the bug where one compacted log with only its active segment
made ``plan()`` raise, which abandoned the whole pass, so no log of the broker
was ever compacted again (every ``__consumer_offsets`` partition is such a log).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from samsa.storage.cleaner.manager import LogCleaner, _dirty
from samsa.storage.log import Log
from samsa.storage.segments.segment import LogSegment

from .log_helpers import ManualClock
from .test_cleaner import compact_config, read_all, updates, write


def open_named(tmp_path: Path, clock: ManualClock, topic: str) -> Log:
    return Log.open(tmp_path / f"{topic}-0", topic, 0, compact_config(), clock=clock)


def test_dirty_of_no_inactive_segments_is_empty() -> None:
    assert _dirty([], 0, 0) == []
    assert _dirty([], 5, 17) == []


@pytest.mark.parametrize("lag_ms", ["0", "1000"])
def test_plan_of_a_log_with_only_its_active_segment_is_nothing(tmp_path: Path, lag_ms: str) -> None:
    clock = ManualClock()
    log = Log.open(
        tmp_path / "t-0",
        "t",
        0,
        compact_config(**{"min.compaction.lag.ms": lag_ms}),
        clock=clock,
    )
    cleaner = LogCleaner(tmp_path)
    assert cleaner.plan(("t", 0), log, clock()) is None  # empty log
    write(log, updates(2), per_segment=100)  # records, but no rolled segment
    assert len(log.segments) == 1
    assert cleaner.plan(("t", 0), log, clock()) is None
    assert cleaner.run_pass({("t", 0): log}, clock()) == {}
    assert cleaner.stats.passes == 1 and not cleaner.stats.uncleanable


def test_single_segment_log_does_not_stop_others_from_being_cleaned(tmp_path: Path) -> None:
    clock = ManualClock()
    single = open_named(tmp_path, clock, "offsets")
    write(single, updates(4), per_segment=100)
    rolled = open_named(tmp_path, clock, "rolled")
    write(rolled, updates(9))
    cleaner = LogCleaner(tmp_path)

    results = cleaner.run_pass({("offsets", 0): single, ("rolled", 0): rolled}, clock())

    assert set(results) == {("rolled", 0)}
    assert [key for _, key, _ in read_all(rolled)] == [b"k0", b"k1", b"k2"]
    assert cleaner.stats.logs_cleaned == 1
    assert cleaner.stats.bytes_reclaimed == results[("rolled", 0)].bytes_before - (
        results[("rolled", 0)].bytes_after
    )
    assert cleaner.stats.bytes_reclaimed > 0


class FaultyLog(Log):
    """A real log whose segment list raises, standing in for any bug or
    damage that makes one log fail inside a pass."""

    fault: BaseException = RuntimeError("injected fault")

    @property
    def segments(self) -> list[LogSegment]:
        raise self.fault


def open_faulty(tmp_path: Path, clock: ManualClock, fault: BaseException) -> FaultyLog:
    log = Log.open(tmp_path / "bad-0", "bad", 0, compact_config(), clock=clock)
    log.__class__ = FaultyLog
    assert isinstance(log, FaultyLog)
    log.fault = fault
    return log


def test_a_log_that_raises_is_marked_uncleanable_and_the_rest_are_cleaned(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = ManualClock()
    good = open_named(tmp_path, clock, "good")
    write(good, updates(9))
    bad = open_faulty(tmp_path, clock, RuntimeError("injected fault"))
    cleaner = LogCleaner(tmp_path)
    logs = {("bad", 0): bad, ("good", 0): good}

    with caplog.at_level(logging.INFO, logger="samsa.storage"):
        assert set(cleaner.run_pass(logs, clock())) == {("good", 0)}
        write(good, updates(9))
        assert set(cleaner.run_pass(logs, clock())) == {("good", 0)}

    assert list(cleaner.stats.uncleanable) == ["bad-0"]
    assert "injected fault" in cleaner.stats.uncleanable["bad-0"]
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "bad-0" in errors[0].getMessage()  # logged once
    summaries = [r.getMessage() for r in caplog.records if "log cleaner pass" in r.getMessage()]
    assert summaries and "uncleanable partitions: bad-0" in summaries[-1]
    assert cleaner.stats.passes == 2 and cleaner.stats.logs_cleaned == 2

    # Deleted (or re-created) logs start over: the mark goes with the log.
    cleaner.run_pass({("good", 0): good}, clock())
    assert cleaner.stats.uncleanable == {}


def test_a_transient_failure_is_retried_on_the_next_pass(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = ManualClock()
    flaky = open_faulty(tmp_path, clock, OSError("disk busy"))
    good = open_named(tmp_path, clock, "good")
    write(good, updates(9))
    cleaner = LogCleaner(tmp_path)
    logs: dict[tuple[str, int], Log] = {("bad", 0): flaky, ("good", 0): good}

    with caplog.at_level(logging.INFO, logger="samsa.storage"):
        assert set(cleaner.run_pass(logs, clock())) == {("good", 0)}
        cleaner.run_pass(logs, clock())
        assert not cleaner.stats.uncleanable
        flaky.__class__ = Log  # the fault went away
        write(flaky, updates(9))
        assert set(cleaner.run_pass(logs, clock())) == {("bad", 0)}

    failures = [r for r in caplog.records if "disk busy" in r.getMessage()]
    assert len(failures) == 1  # once, not every pass
    assert [key for _, key, _ in read_all(flaky)] == [b"k0", b"k1", b"k2"]
