"""Sparse offset and time indexes of a segment, in Kafka's on-disk format.

``<base>.index`` (OffsetIndex) holds 8-byte entries: relative offset (int32,
offset - segment base) and file position (int32) of a batch.  ``<base>.timeindex``
(TimeIndex) holds 12-byte entries: timestamp (int64) and relative offset
(int32).  All big-endian, no header, entries sorted by both fields.

Kafka preallocates index files to ``segment.index.bytes`` and trims them on
roll; we simply append entries, so a file's length is always a whole number of
valid entries and Kafka's tools can read it at any moment.  The entries are
mirrored in memory (a few MB at most per 1 GB segment) so lookups are a binary
search without syscalls.  As Kafka's LazyIndex, an index opened ``lazy`` reads
its file only when first used: a broker of 10,000 idle partitions starts without
opening 20,000 index files, and keeps no mirror of indexes nothing asks for.

Indexes are caches.  The log is written before its index entries, so after a
crash an index may lag behind the log or end with a torn entry; the loader
runs ``sanity_check`` and rebuilds any index that fails it (or is missing) by
scanning the segment.  Nothing else depends on an index being durable.
"""

from __future__ import annotations

import contextlib
import os
import struct
from pathlib import Path

from samsa.storage.files import io_faults
from samsa.storage.segments.lazy_path import LazilyNamed, PathOrParts

_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")


class CorruptIndexError(Exception):
    """An index file that fails its sanity check; the caller rebuilds it."""


class _Index(LazilyNamed):
    """Append-only file of fixed-size entries plus its in-memory mirror.

    Lookups read only the mirror, so the file is open only while it is being
    written: it is read whole and closed at first use, reopened by the first
    write, and closed again by ``release`` when the segment stops being active.
    A broker of 10,000 mostly idle partitions thus keeps one descriptor per
    partition (the active ``.log``) instead of three."""

    entry_struct: struct.Struct

    def __init__(
        self,
        path: PathOrParts,
        base_offset: int,
        max_index_bytes: int,
        *,
        lazy: bool = False,
    ) -> None:
        """``path``: the file, or (directory, file name) to make it of when first
        needed (a lazy index nothing uses never needs it; pathlib costs a few
        microseconds a path, for 10,000 partitions at start-up)."""
        self._name(path)
        self.base_offset = base_offset
        self.max_entries = max(1, max_index_bytes // self.entry_struct.size)
        self._fd = -1
        self._unsynced = False  # written since the last fsync (perhaps through a closed fd)
        self._data: bytearray | None = None  # the mirror, None until first use
        self._entries = 0
        self._torn = False
        self._before_rebuild: bytes | None = None
        if not lazy:
            self._mirror()

    @property
    def loaded(self) -> bool:
        """Whether the file was read (a lazy index that nothing used is not)."""
        return self._data is not None

    def _mirror(self) -> bytearray:
        """The entries in memory, reading the file (creating it if missing) on first use."""
        if self._data is not None:
            return self._data
        size = self.entry_struct.size
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            data = bytearray()
            length = os.fstat(fd).st_size
            while len(data) < length:
                chunk = os.pread(fd, length - len(data), len(data))
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(fd)
        self._torn = len(data) % size != 0
        del data[len(data) - len(data) % size :]
        self._data = data
        self._entries = len(data) // size
        return data

    @property
    def entries(self) -> int:
        self._mirror()
        return self._entries

    def is_full(self) -> bool:
        return self.entries >= self.max_entries

    def size_bytes(self) -> int:
        return len(self._mirror())

    def _entry(self, n: int) -> tuple[int, int]:
        a, b = self.entry_struct.unpack_from(self._mirror(), n * self.entry_struct.size)
        return int(a), int(b)

    def _writable(self) -> int:
        """The descriptor, opened on first use after open or ``release``."""
        if self._fd < 0:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        self._unsynced = True
        return self._fd

    def _append_entry(self, a: int, b: int) -> None:
        raw = self.entry_struct.pack(a, b)
        data = self._mirror()
        if self._before_rebuild is None:
            io_faults.check("write", self.path)
            os.pwrite(self._writable(), raw, len(data))
        data += raw
        self._entries += 1

    def _truncate_entries(self, n: int) -> None:
        data = self._mirror()
        if n < self._entries or self._torn:
            self._entries = n
            del data[n * self.entry_struct.size :]
            os.ftruncate(self._writable(), len(data))
            self._torn = False

    def _search(self, target: int, field: int) -> int:
        """Index of the last entry whose ``field`` <= target, or -1."""
        lo, hi = 0, self.entries - 1
        found = -1
        while lo <= hi:
            mid = (lo + hi) >> 1
            if self._entry(mid)[field] <= target:
                found = mid
                lo = mid + 1
            else:
                hi = mid - 1
        return found

    def begin_rebuild(self) -> None:
        """Drop every entry in memory before a rebuild; the file is left as it is
        until ``finish_rebuild``, which rewrites it only if the rebuilt entries
        differ.  Recovering a segment whose index was right thus writes nothing
        (after a crash, most of 10,000 idle partitions' indexes are right)."""
        data = self._mirror()
        self._before_rebuild = b"" if self._torn else bytes(data)
        self._data = bytearray()
        self._entries = 0

    def finish_rebuild(self) -> None:
        """Write the rebuilt entries if they differ from the file (or it was torn).

        Crash behaviour: a crash mid-write leaves an index that fails the next
        recovery's comparison or sanity check and is rebuilt again."""
        before, self._before_rebuild = self._before_rebuild, None
        data = self._mirror()
        if before == data and not self._torn:
            return
        io_faults.check("write", self.path)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if before and data.startswith(before):
                os.pwrite(fd, data[len(before) :], len(before))  # only new entries
            else:
                os.ftruncate(fd, len(data))
                if data:
                    os.pwrite(fd, data, 0)
        finally:
            os.close(fd)
        self._unsynced = True
        self._torn = False

    def reset(self) -> None:
        """Drop every entry, in memory and in the file."""
        self.begin_rebuild()
        self.finish_rebuild()

    def flush(self) -> None:
        """fsync what was written, even through a descriptor since released
        (fsync flushes the file, whichever descriptor wrote it)."""
        if not self._unsynced:
            return
        io_faults.check("fsync", self.path)
        if self._fd >= 0:
            os.fsync(self._fd)
        else:
            fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        self._unsynced = False

    def rename(self, path: Path) -> None:
        os.replace(self.path, path)
        self.path = path

    def release(self) -> None:
        """Close the descriptor until the next write (the mirror stays)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def close(self) -> None:
        self.release()

    def delete(self) -> None:
        self.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    def __del__(self) -> None:
        if getattr(self, "_fd", -1) >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)


class OffsetIndex(_Index):
    """Maps an offset to the file position of the batch to start scanning from.

    Each entry is (last offset of a batch, position of that batch), as Kafka
    writes them, so the batch holding offset ``o`` starts at or after the
    position of the last entry whose offset is <= ``o``."""

    entry_struct = _OFFSET_ENTRY

    def sanity_check(self, log_size: int) -> None:
        if self._torn:
            raise CorruptIndexError(f"{self.path}: length is not a multiple of 8")
        if self.entries:
            rel, pos = self._entry(self.entries - 1)
            if rel < 0 or pos < 0 or pos >= log_size:
                raise CorruptIndexError(f"{self.path}: last entry ({rel}, {pos}) is out of range")
            if self.entries > 1 and self._entry(self.entries - 2) >= (rel, pos):
                raise CorruptIndexError(f"{self.path}: entries are not increasing")

    def last_entry(self) -> tuple[int, int]:
        """(offset, position) of the last entry, or (base_offset, 0)."""
        if not self.entries:
            return self.base_offset, 0
        rel, pos = self._entry(self.entries - 1)
        return self.base_offset + rel, pos

    def append(self, offset: int, position: int) -> None:
        """Add an entry; entries must grow in both offset and position.

        Crash behaviour: written after the log bytes it points to and never
        fsynced here; a lost or torn entry is repaired by the rebuild."""
        rel = offset - self.base_offset
        if self.entries:
            last_rel, last_pos = self._entry(self.entries - 1)
            if rel <= last_rel or position <= last_pos:
                raise ValueError(
                    f"{self.path}: entry ({offset}, {position}) does not follow "
                    f"({self.base_offset + last_rel}, {last_pos})"
                )
        self._append_entry(rel, position)

    def lookup(self, offset: int) -> tuple[int, int]:
        """(offset, position) of the last entry with offset <= ``offset``, or
        (base_offset, 0) when there is none."""
        n = self._search(offset - self.base_offset, 0)
        if n < 0:
            return self.base_offset, 0
        rel, pos = self._entry(n)
        return self.base_offset + rel, pos

    def lookup_by_position(self, position: int) -> tuple[int, int]:
        """(offset, position) of the last entry with position <= ``position``."""
        n = self._search(position, 1)
        if n < 0:
            return self.base_offset, 0
        rel, pos = self._entry(n)
        return self.base_offset + rel, pos

    def truncate_to_position(self, position: int) -> None:
        """Drop entries that point at or beyond ``position`` (the log was cut there)."""
        self._truncate_entries(self._search(position - 1, 1) + 1)


class TimeIndex(_Index):
    """Maps a timestamp to the offset from which to scan for it.

    Entries are (max timestamp seen so far in the segment, offset of the batch
    that raised it) and are added only when the timestamp grows, so every batch
    before an entry's offset has only timestamps below the entry's."""

    entry_struct = _TIME_ENTRY

    def sanity_check(self, log_size: int) -> None:
        del log_size
        if self._torn:
            raise CorruptIndexError(f"{self.path}: length is not a multiple of 12")
        if self.entries:
            ts, rel = self._entry(self.entries - 1)
            if rel < 0 or ts < self._entry(0)[0]:
                raise CorruptIndexError(f"{self.path}: last entry ({ts}, {rel}) is out of order")

    def last_entry(self) -> tuple[int, int]:
        """(timestamp, offset) of the last entry, or (-1, base_offset)."""
        if not self.entries:
            return -1, self.base_offset
        ts, rel = self._entry(self.entries - 1)
        return ts, self.base_offset + rel

    def maybe_append(self, timestamp: int, offset: int, *, skip_full_check: bool = False) -> None:
        """Add (timestamp, offset) if the timestamp is larger than the last entry's.

        ``skip_full_check`` lets the final entry be written when a segment is
        rolled or closed, even into a full index (as Kafka does), so the
        segment's max timestamp survives a restart.  Crash behaviour: as for the
        offset index, a lost entry is rebuilt from the log."""
        if timestamp < 0:
            return
        if self.is_full() and not skip_full_check:
            raise ValueError(f"{self.path}: time index is full")
        if self.entries:
            last_ts, last_rel = self._entry(self.entries - 1)
            if timestamp <= last_ts:
                return
            rel = max(offset - self.base_offset, last_rel)
        else:
            rel = offset - self.base_offset
        self._append_entry(timestamp, rel)

    def lookup(self, timestamp: int) -> tuple[int, int]:
        """(timestamp, offset) of the last entry with timestamp <= ``timestamp``,
        or (-1, base_offset) when there is none."""
        n = self._search(timestamp, 0)
        if n < 0:
            return -1, self.base_offset
        ts, rel = self._entry(n)
        return ts, self.base_offset + rel

    def truncate_to_offset(self, offset: int) -> None:
        """Drop entries whose offset is >= ``offset``."""
        rel = offset - self.base_offset
        n = self.entries
        while n > 0 and self._entry(n - 1)[1] >= rel:
            n -= 1
        self._truncate_entries(n)
