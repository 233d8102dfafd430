"""``DiskRaftLog``: the ``RaftLog`` protocol on ``samsa.storage``, in Kafka's layout.

The metadata log lives in ``<data dir>/__cluster_metadata-0/`` exactly as Kafka
keeps it: RecordBatch v2 segments (``00000000000000000000.log`` with its
``.index`` and ``.timeindex``), the ``leader-epoch-checkpoint`` and snapshots named
``<end offset, 20 digits>-<epoch, 10 digits>.checkpoint``.  Entries become
batches as ``entry_codec`` describes; snapshot files are laid out as
``snapshot_codec`` describes; opening the directory recovers it as
``disk_log_recovery`` describes.

It keeps the promises of ``samsa.raft.persistence.raft_log`` and behaves as ``MemoryRaftLog``
does (a conformance suite runs the same cases against both).  Where it differs:

* ``append_as_follower`` checks every entry before writing any, so a bad entry
  leaves the log as it was (the memory log keeps the entries before it).
* ``create_snapshot`` requires ``data`` to be whole data RecordBatches (the
  metadata records).
* Entry timestamps are not replicated: each node stamps the batches it writes
  with its own clock.

Durability, and what a crash leaves:

* Appends are one write of whole batches, not fsynced; ``flush`` fsyncs and
  moves ``flushed_end_offset`` (the Log's recovery point).  A crash keeps at
  least the flushed entries; a torn tail is cut at the next open.
* ``truncate_to`` is exact even inside a batch (see ``exact_truncation``); the
  entries below the truncation point that were flushed survive any crash.
* Snapshots are written to ``.part`` files, fsynced and renamed (``freeze``): a
  crash leaves no snapshot or a whole one.  ``install_snapshot`` freezes the
  snapshot before it empties the log, so a crash in between is finished at the
  next open (the log is behind its latest snapshot, and is emptied then).
* ``delete_before_snapshot`` moves the log start first, then deletes whole
  segments below it and older snapshots; a crash in between leaves files the next
  open deletes or ignores.

Threading: ``flush`` may run in a worker thread while the owner appends and reads
(the storage Log serialises them); every other method is called from one thread.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from pathlib import Path

from samsa.protocol.batches.record_batch import read_batch_header
from samsa.raft.persistence.disk_log_recovery import (
    reconcile_log_and_snapshots,
    recover_snapshot_files,
)
from samsa.raft.persistence.entry_codec import (
    DEFAULT_MAX_BATCH_BYTES,
    ReadEntries,
    decode_entries,
    encode_entries,
    encode_payloads,
    whole_batches_between,
)
from samsa.raft.persistence.exact_truncation import truncate_exactly
from samsa.raft.persistence.raft_log import Snapshot, SnapshotChunk
from samsa.raft.persistence.snapshot_codec import (
    check_snapshot_data,
    parse_snapshot,
    snapshot_footer,
    snapshot_header,
)
from samsa.raft.records import Entry, OffsetAndEpoch, Payload, SnapshotId
from samsa.raft.voters import VoterSet
from samsa.storage import CLUSTER_METADATA_TOPIC, METADATA_LOG_DIR, Log, LogConfig
from samsa.storage.files import snapshot_files as files
from samsa.storage.log import Clock, wall_clock_ms
from samsa.storage.log_dir_failure import IoErrorReport

__all__ = ["METADATA_LOG_CONFIG", "DiskRaftLog"]

METADATA_LOG_CONFIG = LogConfig(retention_ms=-1, retention_bytes=-1)
"""Kafka's metadata log settings: 1 GiB segments (metadata.log.segment.bytes),
rolled weekly (metadata.log.segment.ms), never deleted by age or size: only
below snapshots.  Nothing is fsynced but by ``flush``."""

_MIN_READ_BYTES = 16 * 1024
_MAX_READ_BYTES = 4 * 1024 * 1024
_READ_BYTES_PER_ENTRY = 128


class DiskRaftLog:
    """The metadata log of one node (see the module doc).  Open with ``open``."""

    def __init__(
        self, log: Log, snapshot_ids: list[SnapshotId], *, clock: Clock, max_batch_bytes: int
    ) -> None:
        self._log = log
        self._snapshot_ids = sorted(snapshot_ids)
        self._clock = clock
        self._max_batch_bytes = max_batch_bytes

    @classmethod
    def open(
        cls,
        data_dir: Path,
        *,
        config: LogConfig = METADATA_LOG_CONFIG,
        clock: Clock = wall_clock_ms,
        max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
        refetch_lost_prefix: bool = False,
    ) -> DiskRaftLog:
        """Open (creating it if needed) and recover ``<data_dir>/__cluster_metadata-0``.

        Raises RaftInvariantError when the log starts above every snapshot (the
        snapshot holding its first entries is lost); see ``disk_log_recovery``.
        """
        directory = data_dir / METADATA_LOG_DIR
        directory.mkdir(parents=True, exist_ok=True)
        snapshot_ids = recover_snapshot_files(directory)
        log = Log.open(directory, CLUSTER_METADATA_TOPIC, 0, config, clock=clock)
        try:
            kept = reconcile_log_and_snapshots(
                log, snapshot_ids, refetch_lost_prefix=refetch_lost_prefix
            )
        except BaseException:
            log.close()
            raise
        return cls(log, kept, clock=clock, max_batch_bytes=max_batch_bytes)

    @property
    def directory(self) -> Path:
        return self._log.directory

    def close(self) -> None:
        """fsync and close the segments (a clean shutdown)."""
        self._log.close()

    def report_io_errors_to(self, report: IoErrorReport) -> None:
        """Who hears of an I/O error here: the node takes the dir offline and stops."""
        self._log.io_error_report = report

    def mark_offline(self, reason: str) -> None:
        """Its dir failed: no more reads or writes, and ``close`` only closes."""
        self._log.mark_offline(reason)

    # -- positions -------------------------------------------------------------------

    @property
    def start_offset(self) -> int:
        return self._log.log_start_offset

    @property
    def end_offset(self) -> int:
        return self._log.log_end_offset

    @property
    def flushed_end_offset(self) -> int:
        # Entries below the start are in a snapshot, which is durable.
        return max(self._log.recovery_point, self._log.log_start_offset)

    @property
    def last_fetched_epoch(self) -> int:
        if self._log.log_end_offset > self._log.log_start_offset:
            latest = self._log.latest_epoch()
            if latest >= 0:
                return latest
        base = self.earliest_snapshot_id
        return base.epoch if base is not None else 0

    @property
    def latest_snapshot_id(self) -> SnapshotId | None:
        return self._snapshot_ids[-1] if self._snapshot_ids else None

    @property
    def earliest_snapshot_id(self) -> SnapshotId | None:
        start = self._log.log_start_offset
        if start == 0:
            return None
        index = bisect.bisect_left(self._snapshot_ids, SnapshotId(start, -1))
        if index < len(self._snapshot_ids) and self._snapshot_ids[index].offset == start:
            return self._snapshot_ids[index]
        return None

    # -- entries ---------------------------------------------------------------------

    def append_as_leader(self, payloads: Sequence[Payload], epoch: int) -> range:
        last = self.last_fetched_epoch
        if epoch < last:
            raise ValueError(f"epoch {epoch} is below the last epoch {last}")
        first = self._log.log_end_offset
        if payloads:
            batches = encode_payloads(
                payloads,
                base_offset=first,
                epoch=epoch,
                timestamp_ms=self._clock(),
                max_batch_bytes=self._max_batch_bytes,
            )
            self._log.append(batches, assign_offsets=False)
        return range(first, first + len(payloads))

    def append_as_follower(self, entries: Sequence[Entry]) -> None:
        expected = self._log.log_end_offset
        last_epoch = self.last_fetched_epoch
        for entry in entries:
            if entry.offset != expected:
                raise ValueError(f"entry at {entry.offset}, log ends at {expected}")
            if entry.epoch < last_epoch:
                raise ValueError(f"epoch {entry.epoch} below last epoch {last_epoch}")
            expected += 1
            last_epoch = entry.epoch
        if entries:
            batches = encode_entries(
                entries, timestamp_ms=self._clock(), max_batch_bytes=self._max_batch_bytes
            )
            self._log.append(batches, assign_offsets=False)

    def truncate_to(self, offset: int) -> None:
        start = self._log.log_start_offset
        if offset < start:
            raise ValueError(f"cannot truncate to {offset}, below the log start {start}")
        truncate_exactly(self._log, offset)

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        last = self.last_fetched_epoch
        start, end = self._log.log_start_offset, self._log.log_end_offset
        if epoch >= last:
            return OffsetAndEpoch(end, last)
        # (epoch, first offset) of each epoch with entries here, the snapshot the
        # log starts from first: Kafka's leader epoch cache plus KafkaMetadataLog's
        # "the epoch is older than the log: answer the start snapshot".
        boundaries = [
            (entry.epoch, entry.start_offset)
            for entry in self._log.leader_epoch_cache.entries()
            if entry.start_offset < end
        ]
        base = self.earliest_snapshot_id
        if base is not None and (not boundaries or boundaries[0][0] != base.epoch):
            boundaries.insert(0, (base.epoch, start))
        index = bisect.bisect_right([boundary_epoch for boundary_epoch, _ in boundaries], epoch)
        if index == 0:
            return OffsetAndEpoch(start, epoch)
        return OffsetAndEpoch(boundaries[index][1], boundaries[index - 1][0])

    def read(self, from_offset: int, max_entries: int, max_bytes: int | None = None) -> list[Entry]:
        start, end = self._log.log_start_offset, self._log.log_end_offset
        if from_offset < start or from_offset > end:
            raise ValueError(f"read at {from_offset} outside [{start}, {end}]")
        wanted = max(1, max_entries)
        entries: list[Entry] = []
        raw: list[bytes] | None = []  # the stored batches, while reads end on their bounds
        total_bytes = 0
        offset = from_offset
        while offset < end:
            budget = max((wanted - len(entries)) * _READ_BYTES_PER_ENTRY, _MIN_READ_BYTES)
            if max_bytes is not None:
                budget = min(budget, max(max_bytes - total_bytes, 0) + _READ_BYTES_PER_ENTRY)
            fetched = self._log.read(offset, min(budget, _MAX_READ_BYTES))
            data = bytes(fetched.records)
            decoded, next_offset = decode_entries(
                data, offset, until_offset=offset + wanted - len(entries)
            )
            for entry in decoded:
                if max_bytes is not None:
                    total_bytes += entry.size_bytes()
                    if total_bytes > max_bytes and entries:
                        return ReadEntries(entries, _joined(raw, data, offset, entry.offset))
                entries.append(entry)
                if len(entries) == wanted:
                    return ReadEntries(entries, _joined(raw, data, offset, entry.offset + 1))
            if next_offset <= offset:
                break
            if raw is not None:
                batches = whole_batches_between(data, offset, next_offset)
                raw = None if batches is None else [*raw, batches]
            offset = next_offset
        return ReadEntries(entries, _joined(raw, b"", offset, offset))

    def control_entries(self, from_offset: int) -> Iterator[Entry]:
        offset = max(from_offset, self._log.log_start_offset)
        while offset < self._log.log_end_offset:
            fetched = self._log.read(offset, _MAX_READ_BYTES)
            decoded, next_offset = decode_entries(bytes(fetched.records), offset, control_only=True)
            yield from decoded
            if next_offset <= offset:
                return
            offset = next_offset

    def flush(self, up_to_offset: int) -> None:
        self._log.flush(up_to_offset)

    # -- snapshots -------------------------------------------------------------------

    def create_snapshot(
        self, snapshot_id: SnapshotId, voters: VoterSet | None, data: bytes
    ) -> None:
        start, end = self._log.log_start_offset, self._log.log_end_offset
        if not start <= snapshot_id.offset <= end:
            raise ValueError(f"snapshot {snapshot_id} outside the log [{start}, {end}]")
        data_end_offset = check_snapshot_data(data)
        now = self._clock()
        header = snapshot_header(
            voters,
            epoch=snapshot_id.epoch,
            timestamp_ms=now,
            last_contained_log_timestamp_ms=self._timestamp_before(snapshot_id.offset, now),
        )
        footer = snapshot_footer(
            epoch=snapshot_id.epoch,
            timestamp_ms=now,
            base_offset=max(read_batch_header(header).next_offset, data_end_offset),
        )
        with files.SnapshotWriter(self.directory, _stored(snapshot_id)) as writer:
            writer.append(header)
            writer.append(data)
            writer.append(footer)
            writer.freeze()
        if snapshot_id not in self._snapshot_ids:  # the same id again replaces the file
            bisect.insort(self._snapshot_ids, snapshot_id)

    def read_snapshot(
        self, snapshot_id: SnapshotId, position: int, max_bytes: int
    ) -> SnapshotChunk | None:
        if snapshot_id not in self._snapshot_ids:
            return None
        stored = _stored(snapshot_id)
        try:
            size = files.snapshot_size_bytes(self.directory, stored)
            data = files.read_snapshot_chunk(self.directory, stored, position, max_bytes)
        except FileNotFoundError:
            return None
        return SnapshotChunk(size, data)

    def install_snapshot(self, snapshot_id: SnapshotId, raw: bytes) -> None:
        parse_snapshot(raw)  # refuse bytes that are not a whole snapshot before dropping the log
        with files.SnapshotWriter(self.directory, _stored(snapshot_id)) as writer:
            writer.append(raw)
            writer.freeze()
        self._log.truncate_fully_and_start_at(snapshot_id.offset)
        kept = [snapshot_id]
        for other in self._snapshot_ids:
            if other.offset > snapshot_id.offset:
                kept.append(other)
            elif other != snapshot_id:
                files.delete_snapshot(self.directory, _stored(other))
        self._snapshot_ids = sorted(kept)

    def load_snapshot(self, snapshot_id: SnapshotId) -> Snapshot | None:
        if snapshot_id not in self._snapshot_ids:
            return None
        try:
            raw = files.read_snapshot(self.directory, _stored(snapshot_id))
        except FileNotFoundError:
            return None
        layout = parse_snapshot(raw)
        return Snapshot(snapshot_id, layout.voters, raw[layout.data_start : layout.data_end])

    def delete_before_snapshot(self, snapshot_id: SnapshotId) -> None:
        if snapshot_id not in self._snapshot_ids:
            raise ValueError(f"no snapshot {snapshot_id}")
        end = self._log.log_end_offset
        if snapshot_id.offset > end:
            raise ValueError(f"snapshot {snapshot_id} is beyond the log end {end}")
        if snapshot_id.offset > self._log.log_start_offset:
            self._log.delete_records(snapshot_id.offset)
        kept = []
        for other in self._snapshot_ids:
            if other.offset < snapshot_id.offset:
                files.delete_snapshot(self.directory, _stored(other))
            else:
                kept.append(other)
        self._snapshot_ids = kept

    def _timestamp_before(self, offset: int, default_ms: int) -> int:
        """The timestamp of the batch holding ``offset - 1`` (the last entry a
        snapshot ending at ``offset`` contains), ``default_ms`` if it is gone."""
        if not self._log.log_start_offset < offset <= self._log.log_end_offset:
            return default_ms
        fetched = self._log.read(offset - 1, 1)
        return read_batch_header(bytes(fetched.records)).max_timestamp


def _stored(snapshot_id: SnapshotId) -> files.SnapshotId:
    return files.SnapshotId(snapshot_id.offset, snapshot_id.epoch)


def _joined(raw: list[bytes] | None, data: bytes, offset: int, end_offset: int) -> bytes | None:
    """The stored batches of a read: those of earlier reads and, of the last one
    (``data`` from ``offset``), those up to ``end_offset``; None if a read
    began or ended inside a batch."""
    if raw is None:
        return None
    if end_offset > offset:
        batches = whole_batches_between(data, offset, end_offset)
        if batches is None:
            return None
        raw = [*raw, batches]
    return b"".join(raw) if raw else None
