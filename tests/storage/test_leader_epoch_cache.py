"""LeaderEpochFileCache: Kafka's semantics for assign, endOffsetFor, truncation,
and its checkpoint file (format, atomic replacement, rebuild when unreadable)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from samsa.protocol.batches.record_batch import BatchHeader, read_batch_header, stamp_batch
from samsa.storage.files.checkpoint import CorruptCheckpointError
from samsa.storage.files.leader_epoch_checkpoint import (
    LEADER_EPOCH_CHECKPOINT_FILE,
    format_leader_epoch_checkpoint,
    parse_leader_epoch_checkpoint,
    read_leader_epoch_checkpoint,
    write_leader_epoch_checkpoint,
)
from samsa.storage.leader_epoch_cache import (
    UNDEFINED_EPOCH,
    EpochEndOffset,
    EpochEntry,
    LeaderEpochFileCache,
    load_leader_epoch_cache,
)

from .log_helpers import make_batch


def cache_at(tmp_path: Path, *entries: tuple[int, int]) -> LeaderEpochFileCache:
    cache = LeaderEpochFileCache(tmp_path / LEADER_EPOCH_CHECKPOINT_FILE, "t-0")
    for epoch, start in entries:
        cache.assign(epoch, start)
    return cache


def file_entries(tmp_path: Path) -> list[EpochEntry] | None:
    return read_leader_epoch_checkpoint(tmp_path / LEADER_EPOCH_CHECKPOINT_FILE)


# -- the checkpoint file ----------------------------------------------------


def test_file_format_is_kafkas_byte_for_byte(tmp_path: Path) -> None:
    # LeaderEpochCheckpointFile's javadoc example: version, count, "epoch offset" lines.
    assert format_leader_epoch_checkpoint([EpochEntry(0, 1), EpochEntry(1, 2)]) == (
        b"0\n2\n0 1\n1 2\n"
    )
    assert format_leader_epoch_checkpoint([]) == b"0\n0\n"
    cache_at(tmp_path, (3, 0), (7, 1_234_567_890_123))
    path = tmp_path / LEADER_EPOCH_CHECKPOINT_FILE
    assert path.read_bytes() == b"0\n2\n3 0\n7 1234567890123\n"


def test_reads_what_kafka_reads(tmp_path: Path) -> None:
    assert parse_leader_epoch_checkpoint("0\n2\n0 1\n1 2\n") == [(0, 1), (1, 2)]
    # Kafka splits entry lines on any whitespace and reads an empty or
    # version-only file as no entries.
    assert parse_leader_epoch_checkpoint("0\n1\n4 \t 99\n") == [(4, 99)]
    assert parse_leader_epoch_checkpoint("") == []
    assert parse_leader_epoch_checkpoint("0\n") == []
    assert read_leader_epoch_checkpoint(tmp_path / "missing") is None


@pytest.mark.parametrize(
    "text",
    ["1\n0\n", "x\n0\n", "0\ntwo\n", "0\n2\n0 1\n", "0\n1\n0 1 2\n", "0\n1\nzero 1\n"],
)
def test_malformed_files_are_reported(text: str) -> None:
    with pytest.raises(CorruptCheckpointError):
        parse_leader_epoch_checkpoint(text)


def test_undecodable_bytes_are_corrupt(tmp_path: Path) -> None:
    path = tmp_path / LEADER_EPOCH_CHECKPOINT_FILE
    path.write_bytes(b"0\n1\n\xff\xfe 1\n")
    with pytest.raises(CorruptCheckpointError):
        read_leader_epoch_checkpoint(path)


# -- assign -----------------------------------------------------------------


def test_assign_appends_new_epochs_and_ignores_a_later_start_of_the_latest(
    tmp_path: Path,
) -> None:
    cache = cache_at(tmp_path)
    assert cache.latest_epoch == UNDEFINED_EPOCH and cache.latest_entry() is None
    assert cache.assign(2, 6)
    assert not cache.assign(2, 10)  # the same epoch does not move forward
    assert cache.assign(3, 8)
    assert cache.entries() == [(2, 6), (3, 8)]
    assert cache.latest_epoch == 3 and cache.previous_epoch() == 2
    assert cache.earliest_entry() == (2, 6) and cache.latest_entry() == (3, 8)
    assert file_entries(tmp_path) == [(2, 6), (3, 8)]


def test_assign_of_the_latest_epoch_at_an_earlier_offset_moves_its_start(
    tmp_path: Path,
) -> None:
    cache = cache_at(tmp_path, (2, 6), (3, 8))
    assert cache.assign(3, 7)
    assert cache.entries() == [(2, 6), (3, 7)]


def test_a_newer_epoch_at_a_smaller_offset_replaces_the_conflicting_entries(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = cache_at(tmp_path, (2, 6), (3, 8), (4, 10))
    with caplog.at_level(logging.WARNING, "samsa.storage"):
        assert cache.assign(5, 7)
    assert cache.entries() == [(2, 6), (5, 7)]
    assert "truncated conflicting entries" in caplog.text
    assert file_entries(tmp_path) == [(2, 6), (5, 7)]


def test_a_new_leader_replacing_an_empty_epoch_at_the_same_offset_is_not_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = cache_at(tmp_path, (2, 6), (3, 8))
    with caplog.at_level(logging.WARNING, "samsa.storage"):
        assert cache.assign(4, 8)
    assert cache.entries() == [(2, 6), (4, 8)]
    assert caplog.text == ""


def test_an_older_epoch_truncates_every_entry_of_its_epoch_or_later(tmp_path: Path) -> None:
    # Kafka's assign accepts it: entries with epoch >= 3 or start >= 20 go.
    cache = cache_at(tmp_path, (1, 0), (3, 10), (4, 15))
    assert cache.assign(3, 20)
    assert cache.entries() == [(1, 0), (3, 20)]


def test_negative_epochs_and_offsets_are_refused(tmp_path: Path) -> None:
    cache = cache_at(tmp_path)
    with pytest.raises(ValueError):
        cache.assign(-1, 0)
    with pytest.raises(ValueError):
        cache.assign(0, -5)
    assert cache.entries() == []
    assert file_entries(tmp_path) is None


def test_assign_newer_takes_each_batch_that_starts_a_newer_epoch(tmp_path: Path) -> None:
    cache = cache_at(tmp_path, (1, 0))
    headers = []
    for base, epoch in [(5, -1), (6, 1), (7, 2), (8, 2), (9, 1), (10, 4)]:
        buf = make_batch(1, base_offset=base)
        stamp_batch(buf, 0, base, epoch)
        headers.append(read_batch_header(buf))
    assert cache.assign_newer(headers)
    assert cache.entries() == [(1, 0), (2, 7), (4, 10)]
    assert not cache.assign_newer(headers[:2])


# -- endOffsetFor ---------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "expected"),
    [
        (5, (5, 20)),  # the latest epoch ends at the log end offset
        (4, (3, 12)),  # unknown epoch between two: the one before, ending where 5 starts
        (3, (3, 12)),
        (2, (2, 8)),
        (1, (1, 6)),  # older than all: itself, ending where the first known epoch starts
        (0, (0, 6)),
        (6, (-1, -1)),  # newer than all
        (UNDEFINED_EPOCH, (-1, -1)),
    ],
)
def test_end_offset_for_follows_kafka(
    tmp_path: Path, requested: int, expected: tuple[int, int]
) -> None:
    cache = cache_at(tmp_path, (2, 6), (3, 8), (5, 12))
    result = cache.end_offset_for(requested, 20)
    assert result == expected
    assert isinstance(result, EpochEndOffset)


def test_end_offset_for_an_empty_cache_is_unknown(tmp_path: Path) -> None:
    cache = cache_at(tmp_path)
    assert cache.end_offset_for(0, 10) == (-1, -1)
    assert cache.end_offset_for(UNDEFINED_EPOCH, 10) == (-1, -1)


def test_epoch_for_offset(tmp_path: Path) -> None:
    cache = cache_at(tmp_path, (2, 6), (3, 8), (5, 12))
    assert cache.epoch_for_offset(5) == UNDEFINED_EPOCH
    assert cache.epoch_for_offset(6) == 2
    assert cache.epoch_for_offset(7) == 2
    assert cache.epoch_for_offset(8) == 3
    assert cache.epoch_for_offset(11) == 3
    assert cache.epoch_for_offset(1_000) == 5


# -- truncation ---------------------------------------------------------------


def test_truncate_from_end_drops_entries_starting_at_or_after_the_offset(tmp_path: Path) -> None:
    cache = cache_at(tmp_path, (2, 6), (3, 8), (5, 12))
    assert not cache.truncate_from_end(13)
    assert not cache.truncate_from_end(-1)
    assert cache.truncate_from_end(12)
    assert cache.entries() == [(2, 6), (3, 8)]
    assert cache.truncate_from_end(7)
    assert cache.entries() == [(2, 6)] and cache.latest_epoch == 2
    assert cache.truncate_from_end(0)
    assert cache.entries() == [] and cache.latest_epoch == UNDEFINED_EPOCH
    assert file_entries(tmp_path) == []


def test_truncate_from_start_moves_the_covering_epoch_to_the_new_start(tmp_path: Path) -> None:
    cache = cache_at(tmp_path, (0, 5), (1, 7), (2, 10))
    assert not cache.truncate_from_start(4)  # below everything
    assert not cache.truncate_from_start(5)  # the first entry already starts there
    assert cache.truncate_from_start(8)
    assert cache.entries() == [(1, 8), (2, 10)]
    assert file_entries(tmp_path) == [(1, 8), (2, 10)]
    # Exclusive, as Kafka's: an entry starting at the new start is kept.
    assert cache.truncate_from_start(10)
    assert cache.entries() == [(2, 10)]
    assert cache.truncate_from_start(50)
    assert cache.entries() == [(2, 50)]


def test_clear_empties_the_file(tmp_path: Path) -> None:
    cache = cache_at(tmp_path, (0, 5))
    cache.clear()
    assert cache.entries() == [] and file_entries(tmp_path) == []


def test_an_in_memory_cache_writes_nothing(tmp_path: Path) -> None:
    cache = LeaderEpochFileCache(None, "raft")
    cache.assign(1, 0)
    cache.truncate_from_start(3)
    assert cache.entries() == [(1, 3)]
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_the_cache_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = cache_at(tmp_path, (1, 0))

    def crash(src: object, dst: object) -> None:
        raise OSError("power lost between the write and the rename")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        cache.assign(2, 10)
    with pytest.raises(OSError):
        cache.truncate_from_end(0)
    monkeypatch.undo()
    # Memory and file both still hold the old entries; the .tmp is a leftover.
    assert cache.entries() == [(1, 0)] and cache.latest_epoch == 1
    assert file_entries(tmp_path) == [(1, 0)]
    assert (tmp_path / (LEADER_EPOCH_CHECKPOINT_FILE + ".tmp")).exists()
    reloaded = load_leader_epoch_cache(
        tmp_path, "t-0", log_start_offset=0, log_end_offset=100, batch_headers=list
    )
    assert reloaded.entries() == [(1, 0)]


# -- loading ------------------------------------------------------------------


def headers_with_epochs(*pairs: tuple[int, int]) -> list[BatchHeader]:
    out = []
    for base, epoch in pairs:
        buf = make_batch(2, base_offset=base)
        stamp_batch(buf, 0, base, epoch)
        out.append(read_batch_header(buf))
    return out


def test_load_reads_the_file_and_cuts_it_to_the_log(tmp_path: Path) -> None:
    write_leader_epoch_checkpoint(
        tmp_path / LEADER_EPOCH_CHECKPOINT_FILE,
        [EpochEntry(1, 0), EpochEntry(2, 10), EpochEntry(3, 20), EpochEntry(4, 30)],
    )

    def must_not_walk() -> list[BatchHeader]:
        raise AssertionError("the log was walked although the file is fine")

    cache = load_leader_epoch_cache(
        tmp_path, "t-0", log_start_offset=12, log_end_offset=30, batch_headers=must_not_walk
    )
    assert cache.entries() == [(2, 12), (3, 20)]
    # The file is not rewritten for the cut (every load cuts again) ...
    assert file_entries(tmp_path) == [(1, 0), (2, 10), (3, 20), (4, 30)]
    assert cache.file_ahead
    # ... until something is written, or the Log's data would pass (4, 30).
    cache.write()
    assert file_entries(tmp_path) == [(2, 12), (3, 20)]
    assert not cache.file_ahead


def test_a_change_back_to_what_the_file_holds_is_not_written(tmp_path: Path) -> None:
    """Each restart cuts an idle leader's (epoch, log end) entry and its
    leadership assigns it again: 10,000 partitions, no file written."""
    path = tmp_path / LEADER_EPOCH_CHECKPOINT_FILE
    write_leader_epoch_checkpoint(path, [EpochEntry(3, 0)])
    before = path.stat().st_mtime_ns, path.stat().st_ino
    cache = load_leader_epoch_cache(
        tmp_path, "t-0", log_start_offset=0, log_end_offset=0, batch_headers=list
    )
    assert cache.entries() == []
    assert cache.assign(3, 0)
    assert cache.entries() == [(3, 0)] and not cache.file_ahead
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == before


def test_load_without_a_file_rebuilds_from_the_batch_headers(tmp_path: Path) -> None:
    headers = headers_with_epochs((0, -1), (2, 0), (4, 0), (6, 3), (8, 3), (10, 5))
    cache = load_leader_epoch_cache(
        tmp_path, "t-0", log_start_offset=0, log_end_offset=12, batch_headers=lambda: headers
    )
    assert cache.entries() == [(0, 2), (3, 6), (5, 10)]
    assert file_entries(tmp_path) == [(0, 2), (3, 6), (5, 10)]


def test_an_empty_log_gets_no_file_until_its_first_epoch(tmp_path: Path) -> None:
    cache = load_leader_epoch_cache(
        tmp_path, "t-0", log_start_offset=0, log_end_offset=0, batch_headers=list
    )
    assert cache.entries() == [] and file_entries(tmp_path) is None


def test_a_log_without_epochs_gets_an_empty_file_so_it_is_walked_once(tmp_path: Path) -> None:
    headers = headers_with_epochs((0, -1), (2, -1))
    load_leader_epoch_cache(
        tmp_path, "t-0", log_start_offset=0, log_end_offset=4, batch_headers=lambda: headers
    )
    assert (tmp_path / LEADER_EPOCH_CHECKPOINT_FILE).read_bytes() == b"0\n0\n"


@pytest.mark.parametrize("content", [b"0\n3\n1 0\n", b"garbage", b"0\n1\n-1 0\n", b"\x00\x01"])
def test_a_corrupt_file_is_logged_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, content: bytes
) -> None:
    (tmp_path / LEADER_EPOCH_CHECKPOINT_FILE).write_bytes(content)
    headers = headers_with_epochs((0, 1), (2, 1), (4, 2))
    with caplog.at_level(logging.WARNING, "samsa.storage"):
        cache = load_leader_epoch_cache(
            tmp_path, "t-0", log_start_offset=0, log_end_offset=6, batch_headers=lambda: headers
        )
    assert cache.entries() == [(1, 0), (2, 4)]
    assert file_entries(tmp_path) == [(1, 0), (2, 4)]
    assert "[t-0] rebuilding the leader epoch cache" in caplog.text


def test_a_file_with_entries_out_of_order_is_read_as_kafka_reads_it(tmp_path: Path) -> None:
    # Kafka assigns each entry read in turn: a later, smaller one wins.
    (tmp_path / LEADER_EPOCH_CHECKPOINT_FILE).write_bytes(b"0\n3\n1 0\n3 10\n2 5\n")
    cache = load_leader_epoch_cache(
        tmp_path, "t-0", log_start_offset=0, log_end_offset=20, batch_headers=list
    )
    assert cache.entries() == [(1, 0), (2, 5)]
