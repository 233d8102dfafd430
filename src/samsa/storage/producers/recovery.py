"""Rebuilding producer state: replay of the log, snapshots, truncation and expiry.

Kept apart from the live checks because none of it validates: the log already
holds every batch replayed here, so recovery only re-applies them, and the
snapshot files (producer_state_snapshot) let a restart replay only the tail.
Truncation and the log start moving delete the snapshots that describe data
no longer there.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from samsa.storage.producers.entry import (
    NO_COORDINATOR_EPOCH,
    NO_SEQUENCE,
    increment_sequence,
)
from samsa.storage.producers.snapshot import (
    CorruptSnapshotError,
    list_snapshot_files,
    read_snapshot_file,
    scan_snapshot_dir,
    snapshot_path,
    write_snapshot_file,
)
from samsa.storage.producers.state_base import CONTROL_COMMIT, ProducerStateBase
from samsa.storage.segments.transaction_index import AbortedTxn

log = logging.getLogger("samsa.storage.producers.producer_state")

# Kafka's producer.id.expiration.ms default (1 day).
DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000


class BatchHeaderLike(Protocol):
    """The fields of records.BatchHeader that recovery needs (structural, no import)."""

    @property
    def base_offset(self) -> int: ...
    @property
    def last_offset_delta(self) -> int: ...
    @property
    def producer_id(self) -> int: ...
    @property
    def producer_epoch(self) -> int: ...
    @property
    def base_sequence(self) -> int: ...
    @property
    def max_timestamp(self) -> int: ...
    @property
    def is_transactional(self) -> bool: ...
    @property
    def is_control(self) -> bool: ...


class ProducerStateRecovery(ProducerStateBase):
    """Replay, snapshots, truncation and expiry of one partition's producer state."""

    # -- replay ----------------------------------------------------------------------

    def replay_batch(
        self,
        producer_id: int,
        producer_epoch: int,
        base_sequence: int,
        last_offset_delta: int,
        base_offset: int,
        last_offset: int,
        max_timestamp: int,
        is_control: bool,
        is_transactional: bool,
        *,
        coordinator_epoch: int = NO_COORDINATOR_EPOCH,
        control_type: int | None = None,
    ) -> AbortedTxn | None:
        """Re-apply a batch read back from the log, without validation.

        The log already holds it, so it was valid when written (or came from the
        leader); recovery just rebuilds the state. Batches without a producer id
        only advance ``map_end_offset``. For a control batch pass the marker's
        coordinator epoch and type when known; it ends the producer's open
        transaction, and an abort returns its aborted transaction index entry.
        """
        if last_offset != base_offset + last_offset_delta:
            raise ValueError(
                f"last_offset {last_offset} != base_offset {base_offset} + delta {last_offset_delta}"
            )
        aborted = None
        if producer_id >= 0:
            if is_control:
                aborted = self.complete_txn(
                    producer_id,
                    producer_epoch,
                    coordinator_epoch,
                    last_offset,
                    max_timestamp,
                    CONTROL_COMMIT if control_type is None else control_type,
                )
            else:
                last_seq = (
                    NO_SEQUENCE
                    if base_sequence < 0
                    else increment_sequence(base_sequence, last_offset_delta)
                )
                self._apply_data_batch(
                    producer_id,
                    producer_epoch,
                    last_seq,
                    base_offset,
                    last_offset,
                    max_timestamp,
                    is_transactional,
                )
        self._map_end_offset = max(self._map_end_offset, last_offset + 1)
        return aborted

    def replay_header(
        self,
        header: BatchHeaderLike,
        *,
        coordinator_epoch: int = NO_COORDINATOR_EPOCH,
        control_type: int | None = None,
    ) -> AbortedTxn | None:
        """:meth:`replay_batch` for a records.BatchHeader-shaped object."""
        return self.replay_batch(
            header.producer_id,
            header.producer_epoch,
            header.base_sequence,
            header.last_offset_delta,
            header.base_offset,
            header.base_offset + header.last_offset_delta,
            header.max_timestamp,
            header.is_control,
            header.is_transactional,
            coordinator_epoch=coordinator_epoch,
            control_type=control_type,
        )

    def load(
        self,
        log_start_offset: int,
        log_end_offset: int,
        *,
        now_ms: int | None = None,
        producer_id_expiration_ms: int = DEFAULT_PRODUCER_ID_EXPIRATION_MS,
        file_names: Iterable[str] | None = None,
    ) -> int:
        """Replace the in-memory state with the newest usable snapshot.

        Returns the offset from which the caller must replay the log's batches (up to
        ``log_end_offset``) with :meth:`replay_batch`: the snapshot's offset, or
        ``log_start_offset`` when no snapshot is usable.

        Snapshots past ``log_end_offset`` describe data that is gone (the log was
        truncated) and snapshots below ``log_start_offset`` describe deleted data, so
        both are deleted, as Kafka does. Unlike Kafka a snapshot exactly at
        ``log_start_offset`` is kept: after retention removed a producer's data its
        state still lives in memory (KIP-360), and a restart should not forget it.
        Corrupt snapshots are logged, deleted and skipped in favour of older ones.
        With ``now_ms``, expired producers are dropped while loading.
        """
        if log_end_offset < log_start_offset:
            raise ValueError(
                f"log_end_offset {log_end_offset} < log_start_offset {log_start_offset}"
            )
        snapshots, stray = scan_snapshot_dir(self.partition_dir, file_names)
        for path in stray:
            path.unlink(missing_ok=True)
        self._producers.clear()
        self._transactions.clear()
        for offset, path in sorted(snapshots.items(), reverse=True):
            if offset > log_end_offset or offset < log_start_offset:
                path.unlink(missing_ok=True)
                del snapshots[offset]
                continue
            try:
                entries = read_snapshot_file(path)
            except (CorruptSnapshotError, OSError) as exc:
                log.warning("ignoring producer state snapshot %s: %s", path, exc)
                path.unlink(missing_ok=True)
                del snapshots[offset]
                continue
            for entry in entries:
                self._producers[entry.producer_id] = entry
                if entry.current_txn_first_offset is not None:
                    self._transactions.begin(entry.producer_id, entry.current_txn_first_offset)
            if now_ms is not None:
                self.remove_expired(now_ms, producer_id_expiration_ms)
            self._map_end_offset = offset
            self._delete_snapshots_below(log_start_offset, snapshots)
            # DEBUG: one line per partition is 10,000 lines at a big broker's start.
            log.debug("loaded %d producers from snapshot %s", len(entries), path)
            return offset
        self._map_end_offset = log_start_offset
        return log_start_offset

    # -- snapshots and truncation -----------------------------------------------------

    def take_snapshot(self, log_end_offset: int) -> Path:
        """Persist the state as of ``log_end_offset`` and keep only the newest snapshots.

        The state must not contain batches at or past ``log_end_offset``: a snapshot
        claims to describe exactly the log before its offset.
        """
        if log_end_offset < self._map_end_offset:
            raise ValueError(
                f"state covers offsets up to {self._map_end_offset}, past {log_end_offset}"
            )
        self.partition_dir.mkdir(parents=True, exist_ok=True)
        path = snapshot_path(self.partition_dir, log_end_offset)
        write_snapshot_file(path, self._producers.values())
        self._map_end_offset = log_end_offset
        for stale in self.snapshot_offsets()[: -self.snapshots_to_keep]:
            snapshot_path(self.partition_dir, stale).unlink(missing_ok=True)
        return path

    def delete_snapshots_after(self, offset: int) -> None:
        """Delete snapshots newer than ``offset`` (they describe truncated data)."""
        self._load_pending()  # before its snapshot may go
        for snap_offset, path in list_snapshot_files(self.partition_dir).items():
            if snap_offset > offset:
                path.unlink(missing_ok=True)

    def delete_snapshots_before(self, offset: int) -> None:
        """Delete snapshots older than ``offset`` (e.g. when the log start moves)."""
        self._load_pending()
        self._delete_snapshots_below(offset)

    def truncate_to(self, offset: int, log_start_offset: int = 0) -> int:
        """Forget state for batches at or past ``offset`` after the log was truncated there.

        Returns the offset from which the caller must replay batches up to ``offset``
        (``offset`` itself when nothing needs replaying). The state is rebuilt from
        the newest snapshot at or below ``offset`` only if it covered removed batches.
        """
        self.delete_snapshots_after(offset)
        if offset >= self._map_end_offset:
            return offset
        return self.load(log_start_offset, offset)

    def truncate_fully_and_start_at(self, offset: int, *, delete_snapshots: bool = True) -> None:
        """Drop all state and (unless the caller already did, off the event
        loop) the snapshot files: the log was emptied and restarts at ``offset``."""
        self._producers.clear()
        self._transactions.clear()
        if delete_snapshots:
            for path in list_snapshot_files(self.partition_dir).values():
                path.unlink(missing_ok=True)
        self._map_end_offset = offset

    def remove_expired(
        self, now_ms: int, producer_id_expiration_ms: int = DEFAULT_PRODUCER_ID_EXPIRATION_MS
    ) -> list[int]:
        """Forget producers idle for ``producer.id.expiration.ms``; returns their ids.

        Like Kafka, idleness is measured from the max timestamp of the producer's
        last batch, and a producer with an open transaction never expires.  A
        state not loaded yet is left so (the broker's periodic pass over every
        partition would otherwise read every snapshot at once): its producers
        are checked by the first pass after it is loaded.
        """
        if self._pending_load is not None:
            return []
        expired = [
            pid
            for pid, entry in self._producers.items()
            if entry.current_txn_first_offset is None
            and now_ms - entry.last_timestamp >= producer_id_expiration_ms
        ]
        for pid in expired:
            del self._producers[pid]
        return expired

    def _delete_snapshots_below(self, offset: int, known: dict[int, Path] | None = None) -> None:
        """``known``: the snapshot files, if the caller just listed them."""
        if known is None:
            known = list_snapshot_files(self.partition_dir)
        for snap_offset, path in known.items():
            if snap_offset < offset:
                path.unlink(missing_ok=True)
