"""The aborted transaction index: ``<base>.txnindex`` beside each segment, in Kafka's format.

A read_committed consumer drops the records of aborted transactions itself, but
it can only do so if the broker tells it which producers aborted which offset
ranges: the ``aborted_transactions`` list of a Fetch response.  Kafka keeps
that list on disk per segment, one 34-byte big-endian entry per aborted
transaction, in the order of the ABORT markers:

    version int16 (0) | producer id int64 | first offset int64
    | last offset int64 (the marker) | last stable offset int64

The entries live in the segment that holds the marker, so they go with the
segment on retention and are cut with it on truncation.  The file is small
and read whole when the segment opens; a partial entry at its end (a crash
mid-write) is dropped, and recovery re-adds whatever the replayed log tail
holds (see ``transaction_replay``).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import NamedTuple

TXN_INDEX_SUFFIX = ".txnindex"
_ENTRY = struct.Struct(">hqqqq")
_VERSION = 0

__all__ = ["TXN_INDEX_SUFFIX", "AbortedTxn", "TransactionIndex", "parse_entries"]


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


def parse_entries(data: bytes | memoryview) -> list[AbortedTxn]:
    """The whole entries of an index file's bytes (a torn last entry is left out):
    also how a reader outside the broker reads a remote segment's ``.txnindex``."""
    whole = len(data) - len(data) % _ENTRY.size
    return [AbortedTxn(*fields) for _, *fields in _ENTRY.iter_unpack(data[:whole])]


class TransactionIndex:
    """The aborted transactions of one segment; ``path`` None keeps them in memory only."""

    def __init__(self, path: Path | tuple[Path, str] | None, *, exists: bool | None = None) -> None:
        """``path`` may be (directory, file name), made a Path when first needed
        (most segments never have this file).  ``exists``: whether the file is
        there, when the caller knows it from a directory listing (None: look)."""
        self._path: Path | None = None if isinstance(path, tuple) else path
        self._where: tuple[Path, str] | None = path if isinstance(path, tuple) else None
        self._entries: list[AbortedTxn] = []
        if exists is None:
            exists = self.path is not None and self.path.exists()
        if exists and self.path is not None:
            data = self.path.read_bytes()
            self._entries = parse_entries(data)
            if len(data) % _ENTRY.size:
                self._rewrite()

    @property
    def path(self) -> Path | None:
        if self._where is not None:
            directory, file_name = self._where
            self._path, self._where = directory / file_name, None
        return self._path

    @path.setter
    def path(self, path: Path | None) -> None:
        self._path, self._where = path, None

    @property
    def entries(self) -> list[AbortedTxn]:
        return list(self._entries)

    def append(self, txn: AbortedTxn) -> None:
        """Add the entry of an ABORT marker; markers come in offset order."""
        if self._entries and txn.last_offset <= self._entries[-1].last_offset:
            raise ValueError(
                f"aborted transaction ending at {txn.last_offset} is not after "
                f"{self._entries[-1].last_offset}"
            )
        self._entries.append(txn)
        if self.path is not None:
            with open(self.path, "ab") as f:
                f.write(_ENTRY.pack(_VERSION, *txn))

    def collect(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """Entries that overlap [fetch_offset, upper_bound): Kafka's ``collectAbortedTxns``."""
        return [
            t
            for t in self._entries
            if t.last_offset >= fetch_offset and t.first_offset < upper_bound
        ]

    def truncate_to(self, offset: int) -> None:
        """Forget the entries whose marker is at or past ``offset`` (the log was cut there)."""
        kept = [t for t in self._entries if t.last_offset < offset]
        if len(kept) != len(self._entries):
            self._entries = kept
            self._rewrite()

    def flush(self) -> None:
        if self.path is not None and self._entries:
            fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def rename(self, path: Path) -> None:
        if self.path is not None and self.path.exists():
            self.path.rename(path)
        if self.path is not None:
            self.path = path

    def delete(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)
        self._entries = []

    def _rewrite(self) -> None:
        if self.path is None:
            return
        if not self._entries:
            self.path.unlink(missing_ok=True)
            return
        self.path.write_bytes(b"".join(_ENTRY.pack(_VERSION, *t) for t in self._entries))
