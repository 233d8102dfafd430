"""Producer state snapshot files, byte-compatible with Kafka's ``<offset>.snapshot``.

A snapshot lets a restarting broker rebuild producer state by reading one small
file and replaying only the batches after it, instead of scanning the whole log.
Keeping Kafka's exact layout means a Samsa partition directory stays readable by
Kafka's tools (and the other way round), as DESIGN.md promises for the log.

Layout (big-endian, Kafka's ``PID_SNAPSHOT_MAP_SCHEMA`` version 1)::

    version   int16   = 1
    crc       uint32  CRC-32C of every byte after this field
    entries   int32 count, then per producer:
        producer_id int64, epoch int16, last_sequence int32, last_offset int64,
        offset_delta int32, timestamp int64, coordinator_epoch int32,
        current_txn_first_offset int64 (-1 when no transaction is open)

Only the newest batch of each producer is stored (as Kafka does): after a restart
duplicates of older in-flight batches are caught by replaying the log tail.

The file name is the offset up to which the state is complete (exclusive), as 20
zero-padded digits; files are written to a temporary name, fsynced and renamed so
a crash never leaves a half-written ``.snapshot`` behind.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from pathlib import Path

import crc32c

from samsa.errors import SamsaError
from samsa.storage.files.atomic_file import TMP_SUFFIX, atomic_write
from samsa.storage.producers.entry import BatchMetadata, ProducerStateEntry

SNAPSHOT_SUFFIX = ".snapshot"
SNAPSHOT_VERSION = 1

_HEADER = struct.Struct(">hI")  # version, crc
_COUNT = struct.Struct(">i")
_ENTRY = struct.Struct(">qhiqiqiq")
_CRC_START = _HEADER.size  # the CRC covers the entry count and the entries


class CorruptSnapshotError(SamsaError):
    """A snapshot file that cannot be trusted (bad version, CRC, or length)."""


def snapshot_path(partition_dir: Path, offset: int) -> Path:
    """Kafka's name for the snapshot of the state before ``offset``."""
    return partition_dir / f"{offset:020d}{SNAPSHOT_SUFFIX}"


def list_snapshot_files(partition_dir: Path) -> dict[int, Path]:
    """Snapshot files in ``partition_dir`` by offset; names that are not ``<digits>.snapshot`` are skipped."""
    return scan_snapshot_dir(partition_dir)[0]


def scan_snapshot_dir(
    partition_dir: Path, file_names: Iterable[str] | None = None
) -> tuple[dict[int, Path], list[Path]]:
    """The snapshot files by offset and the temp files a crash left, in one
    directory read, or none when the caller knows ``file_names`` (the log's
    load just listed the directory; a broker of 10,000 partitions would read
    10,000 directories again at start-up)."""
    found: dict[int, Path] = {}
    stray: list[Path] = []
    if file_names is None:
        try:
            file_names = [e.name for e in os.scandir(partition_dir) if e.is_file()]
        except (FileNotFoundError, NotADirectoryError):
            return found, stray
    for name in file_names:
        if name.endswith(SNAPSHOT_SUFFIX):
            stem = name[: -len(SNAPSHOT_SUFFIX)]
            if stem.isdigit():
                found[int(stem)] = partition_dir / name
        elif name.endswith(SNAPSHOT_SUFFIX + TMP_SUFFIX):
            stray.append(partition_dir / name)
    return found, stray


def newest_snapshot_offset(file_names: Iterable[str]) -> int | None:
    """The offset of the newest snapshot among ``file_names``; None if there is
    none, or if a temp file a crash left behind needs the full load's clean-up."""
    newest: int | None = None
    for name in file_names:
        if name.endswith(SNAPSHOT_SUFFIX):
            stem = name[: -len(SNAPSHOT_SUFFIX)]
            if stem.isdigit() and (newest is None or int(stem) > newest):
                newest = int(stem)
        elif name.endswith(SNAPSHOT_SUFFIX + TMP_SUFFIX):
            return None
    return newest


def encode_snapshot(entries: Iterable[ProducerStateEntry]) -> bytes:
    """Serialize producer entries (sorted by producer id, so equal state gives equal bytes)."""
    ordered = sorted(entries, key=lambda e: e.producer_id)
    body = bytearray(_COUNT.pack(len(ordered)))
    for entry in ordered:
        txn_first = -1 if entry.current_txn_first_offset is None else entry.current_txn_first_offset
        body += _ENTRY.pack(
            entry.producer_id,
            entry.producer_epoch,
            entry.last_seq,
            entry.last_data_offset,
            entry.last_offset_delta,
            entry.last_timestamp,
            entry.coordinator_epoch,
            txn_first,
        )
    return _HEADER.pack(SNAPSHOT_VERSION, crc32c.crc32c(bytes(body))) + bytes(body)


def decode_snapshot(data: bytes) -> list[ProducerStateEntry]:
    """Parse a snapshot, raising CorruptSnapshotError rather than returning doubtful state."""
    if len(data) < _HEADER.size + _COUNT.size:
        raise CorruptSnapshotError(f"snapshot too short ({len(data)} bytes)")
    version, stored_crc = _HEADER.unpack_from(data, 0)
    if version != SNAPSHOT_VERSION:
        raise CorruptSnapshotError(f"unknown snapshot version {version}")
    computed_crc = crc32c.crc32c(data[_CRC_START:])
    if stored_crc != computed_crc:
        raise CorruptSnapshotError(f"CRC mismatch: stored {stored_crc}, computed {computed_crc}")
    (count,) = _COUNT.unpack_from(data, _CRC_START)
    expected = _CRC_START + _COUNT.size + count * _ENTRY.size
    if count < 0 or len(data) != expected:
        raise CorruptSnapshotError(f"{count} entries need {expected} bytes, file has {len(data)}")
    entries = []
    for index in range(count):
        (pid, epoch, last_seq, last_offset, delta, timestamp, coord_epoch, txn_first) = (
            _ENTRY.unpack_from(data, _CRC_START + _COUNT.size + index * _ENTRY.size)
        )
        entry = ProducerStateEntry(
            producer_id=pid,
            producer_epoch=epoch,
            coordinator_epoch=coord_epoch,
            last_timestamp=timestamp,
            current_txn_first_offset=txn_first if txn_first >= 0 else None,
        )
        # An entry whose only state is a transaction marker has no data batch (-1).
        if last_offset >= 0:
            entry.batches.append(BatchMetadata(last_seq, last_offset, delta, timestamp))
        entries.append(entry)
    return entries


def read_snapshot_file(path: Path) -> list[ProducerStateEntry]:
    return decode_snapshot(path.read_bytes())


def write_snapshot_file(path: Path, entries: Iterable[ProducerStateEntry]) -> None:
    """Write atomically: temp file, fsync, rename over ``path``, fsync the directory."""
    atomic_write(path, encode_snapshot(entries))
