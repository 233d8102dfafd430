"""KRaft snapshot files: Kafka's names, write/freeze with crash safety, listing,
reading in chunks, deletion, and detection of corrupt snapshots."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from samsa.protocol.batches.record_batch import iter_batches
from samsa.storage.files.snapshot_files import (
    SnapshotId,
    SnapshotWriter,
    delete_snapshot,
    delete_snapshots_before,
    list_snapshots,
    parse_snapshot_file_name,
    read_snapshot,
    read_snapshot_chunk,
    recover_snapshots,
    snapshot_file_name,
    snapshot_size_bytes,
    validate_snapshot,
    validate_snapshot_file,
)
from samsa.storage.log import Log
from samsa.storage.topic_config.log_config import LogConfig

from .log_helpers import ManualClock, make_batch, make_batches


def snapshot_bytes() -> bytearray:
    return make_batches(
        make_batch(1, base_offset=0), make_batch(3, base_offset=1), make_batch(2, base_offset=4)
    )


def write_snapshot(directory: Path, snapshot_id: SnapshotId, data: bytes | bytearray) -> Path:
    with SnapshotWriter(directory, snapshot_id) as writer:
        writer.append(data)
        return writer.freeze()


def test_file_names_are_kafkas() -> None:
    assert snapshot_file_name(SnapshotId(1234, 7)) == ("00000000000000001234-0000000007.checkpoint")
    assert parse_snapshot_file_name("00000000000000001234-0000000007.checkpoint") == (
        (SnapshotId(1234, 7), False, False)
    )
    assert parse_snapshot_file_name("00000000000000001234-0000000007.checkpoint.part") == (
        (SnapshotId(1234, 7), True, False)
    )
    # Kafka's own temporary names carry a random part after the id.
    kafka_part = "00000000000000001234-0000000007-8841253311.checkpoint.part"
    assert parse_snapshot_file_name(kafka_part) == ((SnapshotId(1234, 7), True, False))
    assert parse_snapshot_file_name("00000000000000001234-0000000007.checkpoint.deleted") == (
        (SnapshotId(1234, 7), False, True)
    )
    for other in [
        "leader-epoch-checkpoint",
        "00000000000000000000.log",
        "recovery-point-offset-checkpoint",
        "x.checkpoint",
        "0000000000000000123a-0000000007.checkpoint",
        "00000000000000001234_0000000007.checkpoint",
    ]:
        assert parse_snapshot_file_name(other) is None


def test_write_freeze_list_and_read(tmp_path: Path) -> None:
    data = snapshot_bytes()
    with SnapshotWriter(tmp_path, SnapshotId(6, 2)) as writer:
        writer.append(data[:30])
        writer.append(memoryview(data)[30:])
        assert writer.size_bytes == len(data)
        assert list_snapshots(tmp_path) == []  # invisible until frozen
        path = writer.freeze()
        with pytest.raises(ValueError):
            writer.append(b"more")
    assert path.name == "00000000000000000006-0000000002.checkpoint"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]
    assert not stat.S_IMODE(path.stat().st_mode) & 0o222  # read-only, as Kafka leaves it
    assert list_snapshots(tmp_path) == [(6, 2)]
    assert read_snapshot(tmp_path, SnapshotId(6, 2)) == data
    assert snapshot_size_bytes(tmp_path, SnapshotId(6, 2)) == len(data)
    assert validate_snapshot_file(tmp_path, SnapshotId(6, 2))


def test_snapshots_are_listed_oldest_first(tmp_path: Path) -> None:
    for snapshot_id in [SnapshotId(20, 3), SnapshotId(5, 1), SnapshotId(20, 2), SnapshotId(9, 1)]:
        write_snapshot(tmp_path, snapshot_id, snapshot_bytes())
    assert list_snapshots(tmp_path) == [(5, 1), (9, 1), (20, 2), (20, 3)]


def test_chunks_cover_the_file_and_need_not_align_with_batches(tmp_path: Path) -> None:
    data = snapshot_bytes()
    write_snapshot(tmp_path, SnapshotId(6, 2), data)
    chunks = []
    position = 0
    while chunk := read_snapshot_chunk(tmp_path, SnapshotId(6, 2), position, 50):
        chunks.append(chunk)
        position += len(chunk)
    assert b"".join(chunks) == data
    assert [len(c) for c in chunks[:-1]] == [50] * (len(chunks) - 1)
    assert read_snapshot_chunk(tmp_path, SnapshotId(6, 2), len(data) + 10, 50) == b""
    with pytest.raises(FileNotFoundError):
        read_snapshot_chunk(tmp_path, SnapshotId(7, 2), 0, 50)
    with pytest.raises(FileNotFoundError):
        read_snapshot(tmp_path, SnapshotId(7, 2))


def test_leaving_without_freeze_abandons_the_snapshot(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), SnapshotWriter(tmp_path, SnapshotId(6, 2)) as writer:
        writer.append(snapshot_bytes())
        raise RuntimeError("the state machine failed mid-snapshot")
    assert list(tmp_path.iterdir()) == []


def test_a_crash_before_the_rename_leaves_no_snapshot_and_the_part_is_removed_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_snapshot(tmp_path, SnapshotId(3, 1), snapshot_bytes())
    writer = SnapshotWriter(tmp_path, SnapshotId(6, 2))
    writer.append(snapshot_bytes())

    def power_loss(src: object, dst: object) -> None:
        raise OSError("power lost between fsync and rename")

    monkeypatch.setattr(os, "replace", power_loss)
    with pytest.raises(OSError):
        writer.freeze()
    monkeypatch.undo()
    # The process is gone: nobody closes the writer.  What a restart finds:
    assert list_snapshots(tmp_path) == [(3, 1)]
    assert (tmp_path / "00000000000000000006-0000000002.checkpoint.part").exists()
    (tmp_path / "00000000000000000001-0000000001.checkpoint.deleted").write_bytes(b"x")
    assert recover_snapshots(tmp_path) == [(3, 1)]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "00000000000000000003-0000000001.checkpoint"
    ]


def test_a_stray_part_of_the_same_id_is_overwritten(tmp_path: Path) -> None:
    (tmp_path / "00000000000000000006-0000000002.checkpoint.part").write_bytes(b"old junk" * 100)
    data = snapshot_bytes()
    write_snapshot(tmp_path, SnapshotId(6, 2), data)
    assert read_snapshot(tmp_path, SnapshotId(6, 2)) == data


def test_delete_snapshots_before(tmp_path: Path) -> None:
    for snapshot_id in [SnapshotId(5, 1), SnapshotId(9, 1), SnapshotId(9, 2), SnapshotId(20, 3)]:
        write_snapshot(tmp_path, snapshot_id, snapshot_bytes())
    assert delete_snapshots_before(tmp_path, SnapshotId(9, 2)) == [(5, 1), (9, 1)]
    assert list_snapshots(tmp_path) == [(9, 2), (20, 3)]
    assert delete_snapshots_before(tmp_path, SnapshotId(9, 2)) == []
    assert delete_snapshot(tmp_path, SnapshotId(20, 3))
    assert not delete_snapshot(tmp_path, SnapshotId(20, 3))
    assert list_snapshots(tmp_path) == [(9, 2)]


# -- validation ---------------------------------------------------------------


def test_valid_batches_validate() -> None:
    assert validate_snapshot(snapshot_bytes())
    assert validate_snapshot(bytes(make_batch(5)))


def corrupt_cases() -> dict[str, bytes]:
    data = snapshot_bytes()
    positions = [pos for pos, _ in iter_batches(data)]
    flipped = bytearray(data)
    flipped[positions[1] + 70] ^= 0x01  # a record byte of the second batch
    bad_crc = bytearray(data)
    bad_crc[positions[2] + 17] ^= 0xFF  # the stored CRC of the third batch
    bad_length = bytearray(data)
    bad_length[positions[1] + 11] = 0x05  # batch_length below the header size
    bad_magic = bytearray(data)
    bad_magic[positions[1] + 16] = 7
    return {
        "empty": b"",
        "record byte flipped": bytes(flipped),
        "crc field damaged": bytes(bad_crc),
        "impossible length": bytes(bad_length),
        "unknown magic": bytes(bad_magic),
        "truncated mid-batch": bytes(data[:-7]),
        "truncated mid-header": bytes(data[: positions[2] + 20]),
        "trailing bytes": bytes(data + b"\x00\x00\x00"),
        "zeros": bytes(200),
    }


@pytest.mark.parametrize("case", sorted(corrupt_cases()))
def test_corrupt_snapshots_are_detected(tmp_path: Path, case: str) -> None:
    data = corrupt_cases()[case]
    assert not validate_snapshot(data)
    write_snapshot(tmp_path, SnapshotId(6, 2), data)
    assert not validate_snapshot_file(tmp_path, SnapshotId(6, 2))


def test_a_missing_snapshot_does_not_validate(tmp_path: Path) -> None:
    assert not validate_snapshot_file(tmp_path, SnapshotId(6, 2))


def test_snapshots_live_beside_the_metadata_log_without_disturbing_it(tmp_path: Path) -> None:
    directory = tmp_path / "__cluster_metadata-0"
    config = LogConfig.from_dict({})
    log = Log.open(directory, "__cluster_metadata", 0, config, clock=ManualClock())
    for _ in range(3):
        log.append(make_batch(2), leader_epoch=1)
    write_snapshot(directory, SnapshotId(4, 1), snapshot_bytes())
    (directory / "00000000000000000006-0000000001.checkpoint.part").write_bytes(b"half")
    log.close()
    reopened = Log.open(directory, "__cluster_metadata", 0, config, clock=ManualClock())
    assert reopened.log_end_offset == 6
    assert recover_snapshots(directory) == [(4, 1)]
    # Deleting the log below the snapshot goes through the Log's own API.
    assert reopened.delete_records(4) == 4
    assert reopened.leader_epoch_cache.entries() == [(1, 4)]
