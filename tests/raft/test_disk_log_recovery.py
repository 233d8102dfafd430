"""DiskRaftLog after crashes and damage: what opening the directory recovers.

A crash is simulated by abandoning a log without closing it and cutting the
active segment to a length the disk may have kept (never below what was
flushed), possibly with a torn write after it.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.protocol.batches.record_batch import iter_batches
from samsa.raft.errors import RaftInvariantError
from samsa.raft.persistence import exact_truncation
from samsa.raft.persistence.disk_log import DiskRaftLog
from samsa.raft.persistence.exact_truncation import PENDING_TRUNCATION_FILE
from samsa.raft.records import Entry, LeaderChange, SnapshotId
from samsa.raft.voters import VoterSet
from samsa.storage import Log, LogConfig
from samsa.storage.files.snapshot_files import SnapshotId as StoredSnapshotId
from samsa.storage.files.snapshot_files import SnapshotWriter

NOW_MS = 1_700_000_000_000
SMALL_SEGMENTS = LogConfig(segment_bytes=600, retention_ms=-1, retention_bytes=-1)
FIRST_SEGMENT = "00000000000000000000.log"


def clock() -> int:
    return NOW_MS


def open_log(data_dir: Path, config: LogConfig | None = None) -> DiskRaftLog:
    if config is None:
        return DiskRaftLog.open(data_dir, clock=clock)
    return DiskRaftLog.open(data_dir, clock=clock, config=config)


def snapshot_bytes(snapshot_id: SnapshotId) -> bytes:
    """A snapshot as a leader would send it."""
    with tempfile.TemporaryDirectory() as tmp:
        peer = open_log(Path(tmp))
        peer.append_as_follower(
            [Entry(i, snapshot_id.epoch, b"x") for i in range(snapshot_id.offset)]
        )
        peer.create_snapshot(snapshot_id, VoterSet.of([1, 2, 3]), b"")
        chunk = peer.read_snapshot(snapshot_id, 0, 1 << 20)
        peer.close()
    assert chunk is not None
    return chunk.data


def make_writable(path: Path) -> None:
    os.chmod(path, 0o644)  # frozen snapshots are read-only


# -- crashes lose at most what was not flushed ------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    runs=st.lists(st.tuples(st.integers(0, 2), st.integers(1, 30)), min_size=2, max_size=8),
    flushed_runs=st.integers(1, 8),
    cut=st.floats(0, 1),
    torn=st.binary(max_size=40),
)
def test_a_crash_keeps_the_flushed_prefix(
    runs: list[tuple[int, int]], flushed_runs: int, cut: float, torn: bytes
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log = open_log(Path(tmp))
        written: list[Entry] = []
        epoch = 1
        flushed_size = 0
        for index, (bump, count) in enumerate(runs):
            epoch += bump
            payloads = [b"%d-%d" % (epoch, log.end_offset + i) for i in range(count)]
            first = log.append_as_leader(payloads, epoch).start
            written += [Entry(first + i, epoch, p) for i, p in enumerate(payloads)]
            if index + 1 == flushed_runs:
                log.flush(log.end_offset)
                flushed_size = (log.directory / FIRST_SEGMENT).stat().st_size
        flushed = log.flushed_end_offset
        segment = log.directory / FIRST_SEGMENT
        size = segment.stat().st_size
        os.truncate(segment, flushed_size + int((size - flushed_size) * cut))
        with open(segment, "ab") as f:
            f.write(torn)

        recovered = open_log(Path(tmp))  # the crashed instance is never closed
        assert recovered.end_offset >= flushed
        assert recovered.read(0, 10_000) == written[: recovered.end_offset]
        assert recovered.last_fetched_epoch == (
            written[recovered.end_offset - 1].epoch if recovered.end_offset else 0
        )
        assert recovered.flushed_end_offset == recovered.end_offset
        recovered.append_as_leader([b"after"], epoch)
        assert recovered.read(recovered.end_offset - 1, 1)[0].payload == b"after"
        recovered.close()


class Crash(Exception):
    pass


def test_a_crash_inside_an_exact_truncation_keeps_the_flushed_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = open_log(tmp_path)
    log.append_as_leader([b"e%d" % i for i in range(10)], 1)  # one batch
    log.flush(10)

    def crash(*args: object, **kwargs: object) -> None:
        raise Crash

    with monkeypatch.context() as patch:
        patch.setattr(Log, "append", crash)  # the log is cut to the batch start, then...
        with pytest.raises(Crash):
            log.truncate_to(6)
    assert (log.directory / PENDING_TRUNCATION_FILE).exists()

    recovered = open_log(tmp_path)
    assert [e.payload for e in recovered.read(0, 100)] == [b"e%d" % i for i in range(6)]
    assert recovered.flushed_end_offset == 6
    assert not (recovered.directory / PENDING_TRUNCATION_FILE).exists()
    recovered.close()


def test_a_crash_before_an_exact_truncation_touches_the_log_leaves_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = open_log(tmp_path)
    log.append_as_leader([b"e%d" % i for i in range(10)], 1)
    log.flush(10)

    def crash(*args: object, **kwargs: object) -> None:
        raise Crash

    with monkeypatch.context() as patch:
        patch.setattr(Log, "truncate_to", crash)
        with pytest.raises(Crash):
            log.truncate_to(6)

    recovered = open_log(tmp_path)
    assert recovered.end_offset == 10  # the truncation had not happened
    assert not (recovered.directory / PENDING_TRUNCATION_FILE).exists()
    recovered.close()


def test_an_unflushed_prefix_needs_no_pending_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = open_log(tmp_path)
    log.append_as_leader([b"e%d" % i for i in range(10)], 1)
    written: list[str] = []
    real_write = exact_truncation.atomic_write

    def recording_write(path: Path, data: bytes) -> None:
        written.append(path.name)
        real_write(path, data)

    monkeypatch.setattr(exact_truncation, "atomic_write", recording_write)
    log.truncate_to(6)
    assert written == []
    log.flush(6)
    log.truncate_to(3)
    assert written == [PENDING_TRUNCATION_FILE]
    assert [e.payload for e in log.read(0, 10)] == [b"e0", b"e1", b"e2"]
    log.close()


def test_a_damaged_pending_truncation_is_ignored(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append_as_leader([b"e%d" % i for i in range(10)], 1)
    log.close()
    (log.directory / PENDING_TRUNCATION_FILE).write_bytes(b"\x00" * 70)
    recovered = open_log(tmp_path)
    assert recovered.end_offset == 10
    assert not (recovered.directory / PENDING_TRUNCATION_FILE).exists()
    recovered.close()


# -- snapshot files at open ---------------------------------------------------------------


def test_stray_part_and_deleted_snapshot_files_are_removed(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append_as_leader([b"a", b"b"], 1)
    log.create_snapshot(SnapshotId(1, 1), None, b"")
    log.close()
    strays = [
        "00000000000000000002-0000000001.checkpoint.part",
        "00000000000000000002-0000000001-8c1f7e.checkpoint.part",  # Kafka's .part names
        "00000000000000000000-0000000000.checkpoint.deleted",
    ]
    for name in strays:
        (log.directory / name).write_bytes(b"half a snapshot")
    recovered = open_log(tmp_path)
    assert sorted(p.name for p in recovered.directory.glob("*.checkpoint*")) == [
        "00000000000000000001-0000000001.checkpoint"
    ]
    assert recovered.latest_snapshot_id == SnapshotId(1, 1)
    recovered.close()


@pytest.mark.parametrize("damage", ["flip", "cut", "empty"])
def test_a_corrupt_snapshot_is_deleted_at_open(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    log = open_log(tmp_path)
    log.append_as_leader([b"a", b"b", b"c"], 1)
    log.create_snapshot(SnapshotId(2, 1), VoterSet.of([1]), b"")
    log.close()
    path = log.directory / "00000000000000000002-0000000001.checkpoint"
    make_writable(path)
    raw = bytearray(path.read_bytes())
    if damage == "flip":
        raw[len(raw) // 2] ^= 0x40
    elif damage == "cut":
        raw = raw[:-5]
    else:
        raw = bytearray()
    path.write_bytes(raw)

    with caplog.at_level(logging.ERROR):
        recovered = open_log(tmp_path)
    assert not path.exists()
    assert "00000000000000000002-0000000001.checkpoint is damaged" in caplog.text
    assert (recovered.latest_snapshot_id, recovered.start_offset, recovered.end_offset) == (
        None,
        0,
        3,
    )
    recovered.close()


@pytest.mark.parametrize("loss", ["corrupt", "deleted"])
def test_a_log_that_starts_above_every_snapshot_refuses_to_open(tmp_path: Path, loss: str) -> None:
    log = open_log(tmp_path, SMALL_SEGMENTS)
    for i in range(60):
        log.append_as_leader([b"entry-%02d" % i + b"." * 40], 1)
    log.create_snapshot(SnapshotId(35, 1), None, b"")
    log.delete_before_snapshot(SnapshotId(35, 1))
    log.close()
    path = log.directory / "00000000000000000035-0000000001.checkpoint"
    if loss == "corrupt":
        make_writable(path)
        path.write_bytes(path.read_bytes()[:-1])
    else:
        path.unlink()
    with pytest.raises(RaftInvariantError, match="no snapshot holds the entries below it"):
        open_log(tmp_path, SMALL_SEGMENTS)


@pytest.mark.parametrize(
    ("snapshot_id", "expected_start"),
    [
        (SnapshotId(20, 1), 20),  # ends beyond the log
        (SnapshotId(5, 3), 5),  # inside the log, but of a newer epoch: the log conflicts
    ],
)
def test_a_log_behind_its_latest_snapshot_is_emptied_at_open(
    tmp_path: Path, snapshot_id: SnapshotId, expected_start: int
) -> None:
    """A follower crashed after freezing an installed snapshot, before emptying its log."""
    log = open_log(tmp_path)
    log.append_as_leader([LeaderChange(1, (1,))], 1)
    log.append_as_leader([b"%d" % i for i in range(9)], 1)
    log.close()
    stored = StoredSnapshotId(snapshot_id.offset, snapshot_id.epoch)
    with SnapshotWriter(log.directory, stored) as writer:
        writer.append(snapshot_bytes(snapshot_id))
        writer.freeze()

    recovered = open_log(tmp_path)
    assert (recovered.start_offset, recovered.end_offset) == (expected_start, expected_start)
    assert recovered.last_fetched_epoch == snapshot_id.epoch
    assert recovered.earliest_snapshot_id == snapshot_id
    assert list(recovered.directory.glob("*.log")) == [
        recovered.directory / f"{expected_start:020d}.log"
    ]
    recovered.close()


def test_a_node_with_only_a_snapshot_starts_from_it(tmp_path: Path) -> None:
    directory = tmp_path / "__cluster_metadata-0"
    directory.mkdir()
    with SnapshotWriter(directory, StoredSnapshotId(7, 2)) as writer:
        writer.append(snapshot_bytes(SnapshotId(7, 2)))
        writer.freeze()
    log = open_log(tmp_path)
    assert (log.start_offset, log.end_offset, log.last_fetched_epoch) == (7, 7, 2)
    snapshot = log.load_snapshot(SnapshotId(7, 2))
    assert snapshot is not None
    assert snapshot.voters == VoterSet.of([1, 2, 3])
    log.close()


# -- install ---------------------------------------------------------------------------


def test_install_refuses_garbage_and_leaves_the_directory_alone(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append_as_leader([b"a", b"b", b"c"], 1)
    log.flush(3)
    before = sorted(p.name for p in log.directory.iterdir())
    good = snapshot_bytes(SnapshotId(2, 1))
    flipped = bytearray(good)
    flipped[len(flipped) // 2] ^= 1
    footer_pos = list(iter_batches(good))[-1][0]
    no_footer = good[:footer_pos]  # whole, intact batches: only the footer is missing
    garbage = [b"", b"\x00" * 200, bytes(flipped), good + b"\x00", good[:-1], no_footer]
    for raw in garbage:
        with pytest.raises(ValueError):
            log.install_snapshot(SnapshotId(2, 1), raw)
    assert sorted(p.name for p in log.directory.iterdir()) == before
    assert (log.start_offset, log.end_offset, log.flushed_end_offset) == (0, 3, 3)
    log.install_snapshot(SnapshotId(2, 1), good)
    assert (log.start_offset, log.end_offset) == (2, 2)
    log.close()
