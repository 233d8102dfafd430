"""Producer state snapshots at segment ends, for the copy task to upload with each segment.

Kafka writes a producer snapshot at every segment roll, and tiered storage
uploads the one at a segment's end with the segment: a follower that rebuilds
from the remote tier (``samsa.tiered.follower_state``) restores its producers
from it, so an idempotent producer's retry is still caught after a leader
change.

Here a tiered partition's roll (``Log.on_roll``, on the append path, under the
log's lock) only encodes the producers in memory, a few dozen bytes each: the
state then covers exactly the offsets before the new segment.  The copy task
asks for the snapshot at a segment's end (``snapshot_at``); the file is written
then, off the event loop, under ``<first log dir>/remote-log-snapshots/`` (a
directory the log manager ignores, cleared at start), and deleted once a newer
one of the partition is asked for.  A roll the broker did not see (it happened
before a restart, or before the topic was tiered) has no encoded state: the
snapshot is then rebuilt off the loop from the partition's newest snapshot file
at or below the offset and the batch headers after it, as recovery does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import tempfile
from pathlib import Path

from samsa.replication.partition import Partition
from samsa.storage.files.atomic_file import atomic_write
from samsa.storage.log import Log
from samsa.storage.producers.producer_state import ProducerStateManager
from samsa.storage.producers.snapshot import (
    CorruptSnapshotError,
    encode_snapshot,
    list_snapshot_files,
    snapshot_path,
)
from samsa.storage.producers.transaction_replay import parse_marker

__all__ = ["SNAPSHOT_DIR", "SegmentSnapshots"]

log = logging.getLogger(__name__)

SNAPSHOT_DIR = "remote-log-snapshots"
_KEPT_ENCODED = 64
"""Encoded roll states kept per partition: the copy task takes them in order,
so more than this only means it lags by that many segments (the rest are
rebuilt from the log)."""


class SegmentSnapshots:
    """Producer snapshots at segment ends of every tiered partition (see the module doc)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._encoded: dict[str, dict[int, bytes]] = {}
        self._written: dict[str, Path] = {}

    def clear_directory(self) -> None:
        """Remove what a previous run left (blocking: call at start, off the loop)."""
        shutil.rmtree(self.directory, ignore_errors=True)
        self.directory.mkdir(parents=True, exist_ok=True)

    def watch(self, partition: Partition) -> None:
        """Encode the producers at each roll of ``partition`` from now on."""
        name = partition.name
        encoded = self._encoded.setdefault(name, {})
        state = partition.producer_state

        def on_roll(base_offset: int) -> None:
            encoded[base_offset] = encode_snapshot(state.active_producers().values())
            while len(encoded) > _KEPT_ENCODED:
                del encoded[next(iter(encoded))]

        partition.log.on_roll = on_roll

    def forget(self, partition: Partition) -> Path | None:
        """Stop watching ``partition``; the path of its last snapshot file, for
        the caller to remove off the loop (None: there is none)."""
        partition.log.on_roll = None
        self._encoded.pop(partition.name, None)
        return self._written.pop(partition.name, None)

    async def snapshot_at(self, partition: Partition, offset: int) -> Path:
        """A snapshot file of ``partition``'s producers before ``offset``."""
        name = partition.name
        encoded = self._encoded.get(name, {})
        data = encoded.get(offset)
        for taken in [o for o in encoded if o <= offset]:
            del encoded[taken]
        target = self.directory / f"{name}-{offset:020d}.snapshot"
        previous = self._written.get(name)
        stale = previous if previous is not None and previous != target else None
        if data is not None:
            await asyncio.to_thread(_write, target, data, stale)
        else:
            log.debug("[%s] rebuilding the producer snapshot at %d from the log", name, offset)
            await asyncio.to_thread(_rebuild, partition.log, offset, target, stale)
        self._written[name] = target
        return target


def _write(path: Path, data: bytes, stale: Path | None = None) -> None:
    """Write the snapshot and remove the partition's previous one (worker thread)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, data, sync=False)  # uploaded, then deleted: never recovered from
    if stale is not None:
        stale.unlink(missing_ok=True)


def _rebuild(log_: Log, offset: int, target: Path, stale: Path | None = None) -> None:
    """The producers before ``offset`` from the newest snapshot at or below it
    and the headers after it (worker thread; the log is thread-safe)."""
    start = log_.local_log_start_offset
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".rebuild-") as scratch:
        scratch_dir = Path(scratch)
        candidates = [
            (o, p) for o, p in list_snapshot_files(log_.directory).items() if start <= o <= offset
        ]
        if candidates:
            found, path = max(candidates)
            with contextlib.suppress(OSError):  # retention may have taken it: replay all
                shutil.copyfile(path, snapshot_path(scratch_dir, found))
        state = ProducerStateManager(scratch_dir)
        try:
            replay_from = state.load(start, offset)
        except CorruptSnapshotError:
            replay_from = state.load(start, start)
        for header in log_.iter_batch_headers(replay_from):
            if header.base_offset >= offset:
                break
            if header.is_control and header.producer_id >= 0:
                control, coordinator_epoch = parse_marker(
                    log_.control_batch_bytes(header), 0, header
                )
                state.replay_header(
                    header, coordinator_epoch=coordinator_epoch, control_type=control
                )
            else:
                state.replay_header(header)
        _write(target, encode_snapshot(state.active_producers().values()), stale)
