"""The ``.log`` file of one segment: append-only bytes and positional reads.

This is the bottom layer (file -> index -> segment -> log).  It knows nothing of
batches; it writes what it is given at the end of the file and reads ranges
back.  One descriptor stays open for the life of the segment, so reads never
reopen the file.

Crash behaviour: ``append`` does not fsync (the page cache holds the bytes, as
Kafka leaves it); a crash can lose or tear the unflushed tail, which the log's
recovery truncates to the last valid batch.  A failed write (disk full) is
undone by truncating back to the size before the write, so the in-memory size
and the file never disagree.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from samsa.errors import ErrorCode, KafkaError
from samsa.storage.files import io_faults
from samsa.storage.segments.file_region import FileRegion
from samsa.storage.segments.lazy_path import LazilyNamed, PathOrParts


class FileRecords(LazilyNamed):
    """Owner of one segment data file's descriptor and logical size."""

    def __init__(self, path: PathOrParts, fd: int, size: int) -> None:
        """``path``: the file, or (directory, file name) to make it of when first
        needed (see lazy_path)."""
        self._name(path)
        self._fd = fd
        self._size = size
        self._closed = False

    @classmethod
    def open(cls, path: PathOrParts) -> FileRecords:
        """Open (creating if missing) ``path`` for reading and appending."""
        target = path if isinstance(path, Path) else os.path.join(*path)
        fd = os.open(target, os.O_RDWR | os.O_CREAT, 0o644)
        return cls(path, fd, os.fstat(fd).st_size)

    @property
    def size(self) -> int:
        return self._size

    def fileno(self) -> int:
        return self._fd

    def append(self, data: bytes | bytearray | memoryview) -> int:
        """Write ``data`` at the end; return the position it was written at.

        On an I/O error the file is cut back to its previous size and the error
        is raised as KAFKA_STORAGE_ERROR, so no partial write stays behind."""
        position = self._size
        size = len(data)
        try:
            io_faults.check("write", self.path)
            # One pwrite nearly always takes it all; loop only on a short write.
            written = os.pwrite(self._fd, data, position)
            if written < size:
                view = memoryview(data)
                while written < size:
                    written += os.pwrite(self._fd, view[written:], position + written)
        except OSError as e:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, position)
            raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, f"write to {self.path}: {e}") from e
        self._size = position + written
        return position

    def read(self, position: int, size: int) -> bytes:
        """Read up to ``size`` bytes at ``position`` (fewer only at end of file)."""
        size = max(0, min(size, self._size - position))
        if size == 0:
            return b""
        data = os.pread(self._fd, size, position)
        while len(data) < size:
            more = os.pread(self._fd, size - len(data), position + len(data))
            if not more:
                break
            data += more
        return data

    def region(self, position: int, size: int) -> FileRegion:
        return FileRegion(self, position, size)

    def truncate_to(self, size: int) -> int:
        """Cut the file to ``size`` bytes; return how many bytes were removed.

        Crash behaviour: ftruncate is a metadata change; if it is lost the
        recovery pass sees the old bytes again and decides anew."""
        if size < 0 or size > self._size:
            raise ValueError(f"cannot truncate {self.path} of {self._size} bytes to {size}")
        removed = self._size - size
        if removed:
            os.ftruncate(self._fd, size)
            self._size = size
        return removed

    def flush(self) -> None:
        """fsync the data so it survives power loss."""
        io_faults.check("fsync", self.path)
        os.fsync(self._fd)

    def rename(self, path: Path) -> None:
        """Rename the file; the open descriptor keeps working."""
        os.replace(self.path, path)
        self.path = path

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self._fd)

    def delete(self) -> None:
        """Unlink the file but leave the descriptor to be closed when the last
        ``FileRegion`` referring to it is dropped: an in-flight fetch of a
        segment deleted by retention still sends what it promised."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    def __del__(self) -> None:
        if not getattr(self, "_closed", True):
            self._closed = True
            with contextlib.suppress(OSError):
                os.close(self._fd)
