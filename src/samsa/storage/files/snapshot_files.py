"""KRaft snapshot files in a log directory, named and written as Kafka does.

A snapshot holds the metadata image as RecordBatches (built by the caller;
this module only moves bytes) up to, excluding, its end offset.  Its id is
(end offset, epoch of the record before that offset) and its file name is
Kafka's (Snapshots.java)::

    00000000000000001234-0000000007.checkpoint        a complete snapshot
    00000000000000001234-0000000007.checkpoint.part   being written
    00000000000000001234-0000000007.checkpoint.deleted  on its way out (Kafka)

Crash behaviour: a snapshot is written to its ``.part`` file, which on
``freeze`` is fsynced, made read-only, renamed to ``.checkpoint`` and the
directory fsynced.  A crash leaves either no snapshot (a ``.part`` file that
``recover_snapshots`` deletes at start) or a complete one; nothing ever writes
to a ``.checkpoint`` file.  Bytes that rot on disk afterwards are caught by
``validate_snapshot`` (every batch's size and CRC-32C), so a node can delete a
bad snapshot at start and fetch it again from a voter.

Nothing here keeps state between calls: the Raft layer owns the list of
snapshots and decides which to keep (``delete_snapshots_before``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from types import TracebackType
from typing import NamedTuple

from samsa.errors import KafkaError
from samsa.protocol.batches.record_batch import BufferLike, iter_batches, validate_batch
from samsa.storage.files.atomic_file import fsync_dir

__all__ = [
    "DELETED_SUFFIX",
    "PARTIAL_SUFFIX",
    "SNAPSHOT_SUFFIX",
    "ParsedSnapshotName",
    "SnapshotId",
    "SnapshotWriter",
    "delete_snapshot",
    "delete_snapshots_before",
    "list_snapshots",
    "parse_snapshot_file_name",
    "read_snapshot",
    "read_snapshot_chunk",
    "recover_snapshots",
    "snapshot_file_name",
    "snapshot_path",
    "snapshot_size_bytes",
    "validate_snapshot",
    "validate_snapshot_file",
]

logger = logging.getLogger("samsa.storage")

SNAPSHOT_SUFFIX = ".checkpoint"
PARTIAL_SUFFIX = SNAPSHOT_SUFFIX + ".part"
DELETED_SUFFIX = SNAPSHOT_SUFFIX + ".deleted"
_OFFSET_WIDTH = 20
_EPOCH_WIDTH = 10


class SnapshotId(NamedTuple):
    """Kafka's OffsetAndEpoch for a snapshot; orders by end offset, then epoch."""

    end_offset: int
    epoch: int


class ParsedSnapshotName(NamedTuple):
    snapshot_id: SnapshotId
    partial: bool
    deleted: bool


def snapshot_file_name(snapshot_id: SnapshotId) -> str:
    """``<end offset, 20 digits>-<epoch, 10 digits>.checkpoint``."""
    return (
        f"{snapshot_id.end_offset:0{_OFFSET_WIDTH}d}-{snapshot_id.epoch:0{_EPOCH_WIDTH}d}"
        f"{SNAPSHOT_SUFFIX}"
    )


def snapshot_path(directory: Path, snapshot_id: SnapshotId) -> Path:
    return directory / snapshot_file_name(snapshot_id)


def parse_snapshot_file_name(name: str) -> ParsedSnapshotName | None:
    """The id and state of a snapshot file name, None for any other file.

    Reads the fixed-width fields as Kafka does, so Kafka's own ``.part``
    names (``<id>-<random>.checkpoint.part``) are recognised too."""
    partial = name.endswith(PARTIAL_SUFFIX)
    deleted = name.endswith(DELETED_SUFFIX)
    if not (partial or deleted or name.endswith(SNAPSHOT_SUFFIX)):
        return None
    offset = name[:_OFFSET_WIDTH]
    epoch = name[_OFFSET_WIDTH + 1 : _OFFSET_WIDTH + 1 + _EPOCH_WIDTH]
    if (
        name[_OFFSET_WIDTH : _OFFSET_WIDTH + 1] != "-"
        or len(epoch) != _EPOCH_WIDTH
        or not (offset.isdigit() and epoch.isdigit())
    ):
        return None
    return ParsedSnapshotName(SnapshotId(int(offset), int(epoch)), partial, deleted)


class SnapshotWriter:
    """Appends a snapshot's bytes to its ``.part`` file until ``freeze``.

    Use as a context manager: leaving the block without ``freeze`` abandons
    the snapshot and deletes the ``.part`` file.  Not thread-safe."""

    def __init__(self, directory: Path, snapshot_id: SnapshotId) -> None:
        """Start writing ``snapshot_id`` in ``directory`` (a leftover ``.part``
        of the same id is overwritten)."""
        self.snapshot_id = snapshot_id
        self.path = snapshot_path(directory, snapshot_id)
        self.partial_path = self.path.with_name(self.path.name + ".part")
        self._fd = os.open(
            self.partial_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644
        )
        self._size = 0
        self.frozen = False

    @property
    def size_bytes(self) -> int:
        return self._size

    def append(self, data: BufferLike) -> None:
        """Write ``data`` (whole RecordBatches built by the caller) at the end."""
        self._check_writable("append")
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]
        self._size += len(data)

    def freeze(self) -> Path:
        """Make the snapshot durable and visible under its final name; see the
        module doc for what a crash at any point leaves.  Returns the path."""
        self._check_writable("freeze")
        try:
            os.fsync(self._fd)
        finally:
            os.close(self._fd)
            self._fd = -1
        os.chmod(self.partial_path, 0o444)
        os.replace(self.partial_path, self.path)
        fsync_dir(self.path.parent)
        self.frozen = True
        return self.path

    def close(self) -> None:
        """Abandon the snapshot unless it was frozen (idempotent)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if not self.frozen:
            self.partial_path.unlink(missing_ok=True)

    def __enter__(self) -> SnapshotWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _check_writable(self, operation: str) -> None:
        if self.frozen or self._fd < 0:
            state = "frozen" if self.frozen else "closed"
            raise ValueError(f"{operation} of snapshot {self.snapshot_id}: writer is {state}")


def list_snapshots(directory: Path) -> list[SnapshotId]:
    """Ids of the complete snapshots in ``directory``, oldest first."""
    ids = []
    for name in os.listdir(directory):
        parsed = parse_snapshot_file_name(name)
        if parsed is not None and not (parsed.partial or parsed.deleted):
            ids.append(parsed.snapshot_id)
    return sorted(ids)


def recover_snapshots(directory: Path) -> list[SnapshotId]:
    """At start: delete what interrupted writes and deletions left (``.part``,
    ``.deleted``) and return the complete snapshots, oldest first."""
    removed = False
    for name in os.listdir(directory):
        parsed = parse_snapshot_file_name(name)
        if parsed is not None and (parsed.partial or parsed.deleted):
            logger.info("[%s] removing unfinished snapshot file %s", directory.name, name)
            (directory / name).unlink(missing_ok=True)
            removed = True
    if removed:
        fsync_dir(directory)
    return list_snapshots(directory)


def snapshot_size_bytes(directory: Path, snapshot_id: SnapshotId) -> int:
    return snapshot_path(directory, snapshot_id).stat().st_size


def read_snapshot(directory: Path, snapshot_id: SnapshotId) -> bytes:
    """The whole snapshot; FileNotFoundError if there is none with that id."""
    return snapshot_path(directory, snapshot_id).read_bytes()


def read_snapshot_chunk(
    directory: Path, snapshot_id: SnapshotId, position: int, max_bytes: int
) -> bytes:
    """Up to ``max_bytes`` from ``position`` (FetchSnapshot; chunks need not
    end on a batch boundary); b"" at or past the end."""
    if position < 0 or max_bytes < 0:
        raise ValueError(f"bad snapshot chunk: position {position}, max_bytes {max_bytes}")
    fd = os.open(snapshot_path(directory, snapshot_id), os.O_RDONLY)
    try:
        return os.pread(fd, max_bytes, position)
    finally:
        os.close(fd)


def delete_snapshot(directory: Path, snapshot_id: SnapshotId) -> bool:
    """Delete one snapshot; False if it was not there.  A reader that has the
    file open keeps reading it (POSIX unlink)."""
    try:
        snapshot_path(directory, snapshot_id).unlink()
    except FileNotFoundError:
        return False
    fsync_dir(directory)
    logger.info("[%s] deleted snapshot %s", directory.name, snapshot_file_name(snapshot_id))
    return True


def delete_snapshots_before(directory: Path, snapshot_id: SnapshotId) -> list[SnapshotId]:
    """Delete every snapshot older than ``snapshot_id`` (by end offset, then
    epoch), oldest first, so a crash midway leaves the newer ones; return the
    ids deleted."""
    doomed = [old for old in list_snapshots(directory) if old < snapshot_id]
    return [old for old in doomed if delete_snapshot(directory, old)]


def validate_snapshot(data: BufferLike) -> bool:
    """True if ``data`` is whole, intact RecordBatches: each batch's magic,
    length and CRC-32C check out and no bytes trail the last one.  Empty data
    is not a snapshot (Kafka's start with a SnapshotHeader control batch)."""
    end = 0
    try:
        for pos, header in iter_batches(data):
            validate_batch(data, pos, header)
            end = pos + header.size
    except KafkaError:
        return False
    return 0 < end == len(data)


def validate_snapshot_file(directory: Path, snapshot_id: SnapshotId) -> bool:
    """``validate_snapshot`` of the file; False (and logged) if it cannot be read."""
    try:
        data = read_snapshot(directory, snapshot_id)
    except OSError as e:
        logger.warning("[%s] cannot read snapshot %s: %s", directory.name, snapshot_id, e)
        return False
    return validate_snapshot(data)
