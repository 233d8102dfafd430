"""Remote segments' indexes, fetched once and kept on local disk: Kafka's RemoteIndexCache.

Every remote read starts with an index lookup (offset -> position, timestamp ->
offset), and fetching an index from the object store for each read would
double its latency.  So the offset, time and transaction indexes of a remote
segment are fetched together on first use, written into
``<log dir>/remote-log-index-cache/`` under Kafka's names
(``<start offset>_<segment id>.index`` / ``.timeindex`` / ``.txnindex``) and
opened with Samsa's own index classes (``samsa.storage.segments.index``,
``samsa.storage.segments.transaction_index``), which read Kafka's formats.  The cache
keeps at most ``max_bytes`` of index files, evicting the least recently used
segment's; files left by a previous run are reused (they are immutable copies).

``position_for_offset`` and ``position_for_timestamp`` are the pure lookups;
``RemoteIndexCache`` adds the fetching and caching.

Threading: the cache lives on the event loop; fetching goes through the
(async) remote storage manager and every file operation runs on the cache's
worker thread, so the loop only does in-memory binary searches.  Two reads of
the same segment at once share one fetch.

Crash behaviour: files are written atomically (temporary name, rename), so a
crash leaves a complete file or none; a segment is usable only when all three
files are there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from samsa.storage.files.atomic_file import TMP_SUFFIX, atomic_write
from samsa.storage.segments.index import OffsetIndex, TimeIndex
from samsa.storage.segments.transaction_index import TransactionIndex
from samsa.tiered.metadata.model import RemoteLogSegmentMetadata, uuid_str
from samsa.tiered.segment_objects import RemoteStorageManager, SegmentFile

__all__ = [
    "INDEX_CACHE_DIR",
    "RemoteIndexCache",
    "RemoteIndexes",
    "position_for_offset",
    "position_for_timestamp",
]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

INDEX_CACHE_DIR = "remote-log-index-cache"
DEFAULT_MAX_BYTES = 1024 * 1024 * 1024
"""Kafka's ``remote.log.index.file.cache.total.size.bytes`` default (1 GiB)."""

_SUFFIXES = {
    SegmentFile.OFFSET_INDEX: ".index",
    SegmentFile.TIME_INDEX: ".timeindex",
    SegmentFile.TRANSACTION_INDEX: ".txnindex",
}
_NO_LIMIT = 1 << 40  # index objects are read, never appended to


def position_for_offset(offset_index: OffsetIndex, offset: int) -> int:
    """Where to start reading the segment for ``offset``: the position of the
    last indexed batch at or before it (0 when none is)."""
    return offset_index.lookup(offset)[1]


def position_for_timestamp(
    offset_index: OffsetIndex, time_index: TimeIndex, timestamp: int, starting_offset: int
) -> int:
    """Where to start scanning for the first record at or after ``timestamp``
    and ``starting_offset`` (Kafka's ``RemoteIndexCache.lookupTimestamp``)."""
    _, offset = time_index.lookup(timestamp)
    return offset_index.lookup(max(offset, starting_offset))[1]


@dataclass(slots=True)
class RemoteIndexes:
    """The three indexes of one remote segment, loaded in memory."""

    offset_index: OffsetIndex
    time_index: TimeIndex
    transaction_index: TransactionIndex
    size_bytes: int

    def close(self) -> None:
        self.offset_index.close()
        self.time_index.close()


class RemoteIndexCache:
    """Fetched indexes of remote segments, on local disk, bounded (see the module doc)."""

    def __init__(
        self,
        manager: RemoteStorageManager,
        directory: Path,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self.manager = manager
        self.directory = directory
        self.max_bytes = max_bytes
        self._entries: OrderedDict[bytes, RemoteIndexes] = OrderedDict()
        self._loading: dict[bytes, asyncio.Future[RemoteIndexes]] = {}
        self._bytes = 0
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="remote-index")

    @property
    def size_bytes(self) -> int:
        return self._bytes

    async def lookup_offset(self, metadata: RemoteLogSegmentMetadata, offset: int) -> int:
        return position_for_offset((await self.get(metadata)).offset_index, offset)

    async def lookup_timestamp(
        self, metadata: RemoteLogSegmentMetadata, timestamp: int, starting_offset: int
    ) -> int:
        indexes = await self.get(metadata)
        return position_for_timestamp(
            indexes.offset_index, indexes.time_index, timestamp, starting_offset
        )

    async def get(self, metadata: RemoteLogSegmentMetadata) -> RemoteIndexes:
        """The segment's indexes, fetched and cached on first use."""
        key = metadata.segment_id.id
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            return entry
        loading = self._loading.get(key)
        if loading is None:
            loading = asyncio.ensure_future(self._load(metadata))
            self._loading[key] = loading
            loading.add_done_callback(lambda _: self._loading.pop(key, None))
        return await asyncio.shield(loading)

    async def remove(self, segment_ids: list[bytes]) -> None:
        """Forget deleted segments and delete their files."""
        paths: list[Path] = []
        for segment_id in segment_ids:
            entry = self._entries.pop(segment_id, None)
            if entry is not None:
                self._bytes -= entry.size_bytes
                entry.close()
            paths.extend(self.directory.glob(f"*_{uuid_str(segment_id)}.*"))
        await self._in_thread(_unlink_all, paths)

    async def close(self) -> None:
        for entry in self._entries.values():
            entry.close()
        self._entries.clear()
        self._executor.shutdown(wait=True)

    # -- loading ------------------------------------------------------------

    async def _load(self, metadata: RemoteLogSegmentMetadata) -> RemoteIndexes:
        paths = {
            kind: self.directory
            / f"{metadata.start_offset}_{uuid_str(metadata.segment_id.id)}{suffix}"
            for kind, suffix in _SUFFIXES.items()
        }
        missing = await self._in_thread(lambda: [k for k, p in paths.items() if not p.exists()])
        if missing:
            fetched = await asyncio.gather(
                *(self.manager.fetch_index(metadata, k) for k in missing)
            )
            await self._in_thread(
                _write_all, {paths[k]: d for k, d in zip(missing, fetched, strict=True)}
            )
        entry = await self._in_thread(_open, metadata.start_offset, paths)
        self._entries[metadata.segment_id.id] = entry
        self._bytes += entry.size_bytes
        await self._evict()
        return entry

    async def _evict(self) -> None:
        victims: list[bytes] = []
        while self._bytes > self.max_bytes and len(self._entries) > 1:
            segment_id, _ = next(iter(self._entries.items()))
            victims.append(segment_id)
            entry = self._entries.pop(segment_id)
            self._bytes -= entry.size_bytes
            entry.close()
        if victims:
            logger.debug("evicting the indexes of %d remote segments", len(victims))
            paths = [p for v in victims for p in self.directory.glob(f"*_{uuid_str(v)}.*")]
            await self._in_thread(_unlink_all, paths)

    async def _in_thread(self, fn: Callable[..., _T], *args: Any) -> _T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)


def _write_all(files: dict[Path, bytes]) -> None:
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data, sync=False)


def _open(base_offset: int, paths: dict[SegmentFile, Path]) -> RemoteIndexes:
    offset_index = OffsetIndex(paths[SegmentFile.OFFSET_INDEX], base_offset, _NO_LIMIT)
    time_index = TimeIndex(paths[SegmentFile.TIME_INDEX], base_offset, _NO_LIMIT)
    txn = TransactionIndex(paths[SegmentFile.TRANSACTION_INDEX])
    size = sum(p.stat().st_size for p in paths.values())
    return RemoteIndexes(offset_index, time_index, txn, size)


def _unlink_all(paths: list[Path]) -> None:
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def remove_temporaries(directory: Path) -> None:
    """Delete what an interrupted write left in the cache directory (blocking)."""
    if directory.is_dir():
        _unlink_all([p for p in directory.iterdir() if p.name.endswith(TMP_SUFFIX)])
