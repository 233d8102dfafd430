"""A byte range of an open segment file, handed to the network layer unread.

A fetch response carries its records as a ``FileRegion`` instead of bytes so the
server can ``os.sendfile`` them straight from the page cache to the socket: the
broker never copies or decodes fetched records.  The codec splices any
non-``bytes`` records value into its output chunk list and needs only ``len()``
to write the length prefix, so ``__len__`` is the size of the range.

The region keeps a reference to the object that owns the file descriptor (a
``FileRecords``), never a bare integer, so the descriptor cannot be closed and
reused for another file while a response that points at it is in flight: a
deleted segment unlinks its files but closes its descriptor only when the last
region referring to it is dropped.
"""

from __future__ import annotations

import os
from typing import Protocol


class HasFileno(Protocol):
    def fileno(self) -> int: ...


class FileRegion:
    """``size`` bytes at ``position`` of an open file; not thread-safe to mutate."""

    __slots__ = ("_owner", "position", "size")

    def __init__(self, file: HasFileno | int, position: int, size: int) -> None:
        if position < 0 or size < 0:
            raise ValueError(f"bad file region position={position} size={size}")
        self._owner = file
        self.position = position
        self.size = size

    def fileno(self) -> int:
        """The descriptor to pass to ``os.sendfile`` (valid while this region lives)."""
        owner = self._owner
        return owner if isinstance(owner, int) else owner.fileno()

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"FileRegion(fd={self.fileno()}, position={self.position}, size={self.size})"

    def read_bytes(self) -> bytes:
        """Copy the region into memory: the fallback when sendfile is unavailable
        (TLS, tests).  Raises ``OSError`` if the file shrank underneath the region
        (a truncation raced the fetch), because sending fewer bytes than the
        length already written would corrupt the response framing."""
        fd = self.fileno()
        chunks: list[bytes] = []
        pos, remaining = self.position, self.size
        while remaining > 0:
            chunk = os.pread(fd, remaining, pos)
            if not chunk:
                raise OSError(f"file region {self!r} extends past the end of the file")
            chunks.append(chunk)
            pos += len(chunk)
            remaining -= len(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def __bytes__(self) -> bytes:
        return self.read_bytes()

    def slice(self, offset: int, size: int) -> FileRegion:
        """A sub-range, relative to this region's start."""
        if offset < 0 or size < 0 or offset + size > self.size:
            raise ValueError(f"slice {offset}+{size} outside region of {self.size} bytes")
        return FileRegion(self._owner, self.position + offset, size)
