"""Per-partition producer state: idempotent-produce validation and its recovery.

This is Samsa's counterpart of Kafka's ProducerStateManager. The partition leader
calls :meth:`ProducerStateManager.check` before appending a batch that carries a
producer id and :meth:`ProducerStateManager.update` after appending it; recovery
calls :meth:`load` and then :meth:`replay_batch` for every batch of the log tail.

Validation follows current Kafka (``UnifiedLog.analyzeAndValidateProducerState``
and ``ProducerAppendInfo.checkSequence``, 2.5+ / KIP-360), in this order:

1. Duplicate: same epoch and exactly the sequence range of one of the last five
   batches -> :data:`CheckOutcome.DUPLICATE` with the original offsets; the broker
   answers with those and appends nothing.
2. Epoch older than the current one -> ``INVALID_PRODUCER_EPOCH`` (Kafka 2.7+ uses
   this instead of the fatal PRODUCER_FENCED so clients can recover).
3. Newer epoch (a bump) -> the batch must start at sequence 0, else
   ``OUT_OF_ORDER_SEQUENCE_NUMBER``.
4. Same epoch -> ``first_seq`` must follow the last sequence (0 follows 2**31 - 1),
   else ``OUT_OF_ORDER_SEQUENCE_NUMBER``.
5. Unknown producer (no state on this partition) -> accepted at *any* sequence.
   Before KIP-360 brokers answered UNKNOWN_PRODUCER_ID when such a batch did not
   start at 0; since 2.5 Kafka accepts it, because the only way a broker forgets a
   live producer is retention/DeleteRecords/expiry removing its state, and
   refusing would strand the producer (librdkafka only resets on that error).
   ``UNKNOWN_PRODUCER_ID`` is therefore never raised here.

A retry older than the last five batches is not recognised as a duplicate and is
refused as out of order, as in Kafka.

Transactions: the first transactional batch of a producer opens its transaction
(``current_txn_first_offset``) and its COMMIT/ABORT marker closes it
(:meth:`complete_txn`, or :meth:`replay_batch` with the marker's type). The
first offset of any open transaction -- or of a closed one whose marker is not
yet below the high watermark -- bounds the last stable offset
(:meth:`first_unstable_offset`), below which read_committed consumers read.

Loading on first use (:meth:`load_on_first_use`): after a clean shutdown each
partition's newest snapshot is at its log end, so nothing needs replaying and
the snapshot can be read when the state is first needed (an append, a fetch
asking for the last stable offset, a truncation) instead of at start-up: a
broker of 10,000 idle partitions starts without reading 10,000 snapshots.  The
deferred load is the eager one (same fallbacks for a corrupt snapshot), run by
the first access to the state, from whichever thread makes it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple, Protocol

from samsa.errors import ErrorCode, KafkaError
from samsa.storage.open_transactions import OpenTransactions
from samsa.storage.producer_state_entry import (
    NO_COORDINATOR_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_SEQUENCE,
    ProducerStateEntry,
    decrement_sequence,
    in_sequence,
    increment_sequence,
)
from samsa.storage.producer_state_snapshot import (
    CorruptSnapshotError,
    list_snapshot_files,
    read_snapshot_file,
    scan_snapshot_dir,
    snapshot_path,
    write_snapshot_file,
)
from samsa.storage.transaction_index import AbortedTxn

log = logging.getLogger(__name__)

# Kafka's producer.id.expiration.ms default (1 day).
DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000
DEFAULT_SNAPSHOTS_TO_KEEP = 2
CONTROL_ABORT = 0  # ControlRecordType: ABORT 0, COMMIT 1
CONTROL_COMMIT = 1


class CheckOutcome(Enum):
    OK = "ok"
    DUPLICATE = "duplicate"


class CheckResult(NamedTuple):
    """What to do with a batch: append it, or answer with the original batch's offsets.

    For OK the offset fields are -1. For DUPLICATE they are the first/last offset
    and max timestamp the original batch got, which the produce response repeats.
    """

    outcome: CheckOutcome
    first_offset: int = -1
    last_offset: int = -1
    timestamp: int = -1

    @property
    def is_duplicate(self) -> bool:
        return self.outcome is CheckOutcome.DUPLICATE


CHECK_OK = CheckResult(CheckOutcome.OK)


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


_DEFERRED_LOADS = threading.RLock()


class ProducerStateManager:
    """Producer id -> :class:`ProducerStateEntry` for one partition, plus its snapshots.

    Not thread-safe: the partition's append path owns it. ``map_end_offset`` is the
    offset just past the last batch applied (live or replayed); it tells
    :meth:`truncate_to` whether the in-memory state covers data being removed.
    """

    def __init__(
        self, partition_dir: Path, *, snapshots_to_keep: int = DEFAULT_SNAPSHOTS_TO_KEEP
    ) -> None:
        if snapshots_to_keep < 1:
            raise ValueError("snapshots_to_keep must be at least 1")
        # Not Path(...) again: re-parsing the path cost ~5 us a partition at start-up.
        self.partition_dir = (
            partition_dir if isinstance(partition_dir, Path) else Path(partition_dir)
        )
        self.snapshots_to_keep = snapshots_to_keep
        self._producer_entries: dict[int, ProducerStateEntry] = {}
        self._map_end_offset = 0
        self._open_transactions = OpenTransactions()
        self._pending_load: Callable[[], None] | None = None
        self._loading = False

    # -- loading on first use (see module doc) -------------------------------------

    def load_on_first_use(self, load: Callable[[], None], map_end_offset: int) -> None:
        """Run ``load`` (which calls :meth:`load`, and replays what it must) when
        the state is first used, not now; until then the state covers
        ``map_end_offset``, the offset of the snapshot it will read."""
        self._map_end_offset = map_end_offset
        self._pending_load = load

    @property
    def loaded(self) -> bool:
        """False while a deferred load has not run yet."""
        return self._pending_load is None

    def _load_pending(self) -> None:
        if self._pending_load is None:
            return
        # One lock for every partition: a deferred load runs once and is short.
        with _DEFERRED_LOADS:
            load = self._pending_load
            if load is None or self._loading:
                return  # done, or this is the load itself reading the state
            self._loading = True
            try:
                load()
            finally:
                self._loading = False
                # Cleared last: another thread waits on the lock until it is done.
                self._pending_load = None

    @property
    def _producers(self) -> dict[int, ProducerStateEntry]:
        if self._pending_load is not None:
            self._load_pending()
        return self._producer_entries

    @property
    def _transactions(self) -> OpenTransactions:
        if self._pending_load is not None:
            self._load_pending()
        return self._open_transactions

    # -- queries -----------------------------------------------------------------

    @property
    def map_end_offset(self) -> int:
        return self._map_end_offset

    def active_producers(self) -> Mapping[int, ProducerStateEntry]:
        """Read-only view of the current entries (DescribeProducers, tests)."""
        return MappingProxyType(self._producers)

    def first_unstable_offset(self, high_watermark: int) -> int | None:
        """See ``OpenTransactions.first_unstable_offset`` (the LSO's bound)."""
        return self._transactions.first_unstable_offset(high_watermark)

    def forget_replicated(self, high_watermark: int) -> None:
        """The watermark moved: ended transactions below it are stable."""
        self._transactions.forget_replicated(high_watermark)

    def first_open_offset(self) -> int | None:
        """Where the oldest open transaction starts; safe from another thread."""
        return self._transactions.first_open_offset()

    def ongoing_transactions(self) -> Mapping[int, int]:
        """Producer id -> first offset of each open transaction (DescribeProducers)."""
        return self._transactions.as_mapping()

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self._producers.get(producer_id)

    def snapshot_offsets(self) -> list[int]:
        """Offsets of the snapshot files on disk, ascending."""
        return sorted(list_snapshot_files(self.partition_dir))

    def latest_snapshot_offset(self) -> int | None:
        offsets = self.snapshot_offsets()
        return offsets[-1] if offsets else None

    # -- live append path ----------------------------------------------------------

    def check(
        self,
        producer_id: int,
        producer_epoch: int,
        first_seq: int,
        last_seq: int,
        *,
        is_transactional: bool = False,
    ) -> CheckResult:
        """Validate a client batch before it is appended (see the module docstring).

        Raises KafkaError(INVALID_PRODUCER_EPOCH | OUT_OF_ORDER_SEQUENCE_NUMBER |
        INVALID_TXN_STATE). Changes no state: call :meth:`update` after the append.
        """
        if producer_id < 0:
            raise ValueError(f"check() needs a producer id, got {producer_id}")
        entry = self._producers.get(producer_id)
        if entry is None:
            return CHECK_OK  # unknown producer: any sequence (KIP-360)
        duplicate = entry.find_duplicate(producer_epoch, first_seq, last_seq)
        if duplicate is not None:
            return CheckResult(
                CheckOutcome.DUPLICATE,
                duplicate.first_offset,
                duplicate.last_offset,
                duplicate.timestamp,
            )
        current_epoch = entry.producer_epoch
        if producer_epoch < current_epoch:
            raise KafkaError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"producer {producer_id} epoch {producer_epoch} is older than {current_epoch}",
            )
        if producer_epoch != current_epoch:
            if first_seq != 0 and current_epoch != NO_PRODUCER_EPOCH:
                raise KafkaError(
                    ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"producer {producer_id} new epoch {producer_epoch} must start at "
                    f"sequence 0, got {first_seq}",
                )
        elif current_epoch != NO_PRODUCER_EPOCH and not in_sequence(entry.last_seq, first_seq):
            raise KafkaError(
                ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                f"producer {producer_id} sent sequence {first_seq} after {entry.last_seq}",
            )
        if entry.current_txn_first_offset is not None and not is_transactional:
            raise KafkaError(
                ErrorCode.INVALID_TXN_STATE,
                f"producer {producer_id} sent a non-transactional batch inside a transaction",
            )
        return CHECK_OK

    def update(
        self,
        producer_id: int,
        producer_epoch: int,
        first_seq: int,
        last_seq: int,
        first_offset: int,
        last_offset: int,
        timestamp: int,
        *,
        is_transactional: bool = False,
    ) -> None:
        """Record a batch that :meth:`check` accepted and that is now in the log."""
        if producer_id < 0:
            raise ValueError(f"update() needs a producer id, got {producer_id}")
        offset_delta = last_offset - first_offset
        if offset_delta < 0:
            raise ValueError(f"last_offset {last_offset} < first_offset {first_offset}")
        if first_seq >= 0 and decrement_sequence(last_seq, offset_delta) != first_seq:
            # A v2 batch spends one offset and one sequence per record; anything else
            # means the caller mixed up fields, and the snapshot could not store it.
            raise ValueError(
                f"sequence range {first_seq}..{last_seq} does not match offsets "
                f"{first_offset}..{last_offset}"
            )
        self._apply_data_batch(
            producer_id,
            producer_epoch,
            last_seq,
            first_offset,
            last_offset,
            timestamp,
            is_transactional,
        )

    def check_marker(self, producer_id: int, producer_epoch: int, coordinator_epoch: int) -> None:
        """Kafka's ``checkProducerEpoch``/``checkCoordinatorEpoch`` for a marker the
        coordinator asks to write: an older producer epoch is fenced
        (INVALID_PRODUCER_EPOCH), an older coordinator epoch is a zombie
        coordinator (TRANSACTION_COORDINATOR_FENCED)."""
        entry = self._producers.get(producer_id)
        if entry is None:
            return
        if producer_epoch < entry.producer_epoch:
            raise KafkaError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"marker for producer {producer_id} epoch {producer_epoch} older than "
                f"{entry.producer_epoch}",
            )
        if coordinator_epoch < entry.coordinator_epoch:
            raise KafkaError(
                ErrorCode.TRANSACTION_COORDINATOR_FENCED,
                f"marker for producer {producer_id} from coordinator epoch {coordinator_epoch}, "
                f"older than {entry.coordinator_epoch}",
            )

    def complete_txn(
        self,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        marker_offset: int,
        timestamp: int,
        control_type: int,
    ) -> AbortedTxn | None:
        """Apply a COMMIT/ABORT marker now in the log at ``marker_offset``.

        Returns the aborted transaction index entry when the marker aborted a
        transaction that wrote here (its records must be hidden from
        read_committed consumers), else None."""
        entry = self._entry_for(producer_id)
        entry.end_transaction(producer_epoch, coordinator_epoch, timestamp)
        self._map_end_offset = max(self._map_end_offset, marker_offset + 1)
        return self._transactions.end(producer_id, marker_offset, control_type == CONTROL_ABORT)

    # -- recovery ----------------------------------------------------------------

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

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Drop all state and snapshots: the log was emptied and restarts at ``offset``."""
        self._producers.clear()
        self._transactions.clear()
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

    # -- internals -----------------------------------------------------------------

    def _entry_for(self, producer_id: int) -> ProducerStateEntry:
        entry = self._producers.get(producer_id)
        if entry is None:
            entry = self._producers[producer_id] = ProducerStateEntry(producer_id)
        return entry

    def _apply_data_batch(
        self,
        producer_id: int,
        producer_epoch: int,
        last_seq: int,
        first_offset: int,
        last_offset: int,
        timestamp: int,
        is_transactional: bool,
    ) -> None:
        entry = self._entry_for(producer_id)
        entry.add_batch(
            producer_epoch, last_seq, last_offset, last_offset - first_offset, timestamp
        )
        if is_transactional and entry.current_txn_first_offset is None:
            entry.current_txn_first_offset = first_offset
            self._transactions.begin(producer_id, first_offset)
        self._map_end_offset = max(self._map_end_offset, last_offset + 1)

    def _delete_snapshots_below(self, offset: int, known: dict[int, Path] | None = None) -> None:
        """``known``: the snapshot files, if the caller just listed them."""
        if known is None:
            known = list_snapshot_files(self.partition_dir)
        for snap_offset, path in known.items():
            if snap_offset < offset:
                path.unlink(missing_ok=True)
