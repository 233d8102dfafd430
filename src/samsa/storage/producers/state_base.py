"""The state every part of a partition's ProducerStateManager shares (see producer_state.py).

Split from the manager so each file holds one concern: this base holds the
producer entries and open transactions, the queries on them, loading on first
use, and the two changes both the live path and recovery make (a data batch,
a transaction marker); producer_state_checks validates the live append path,
producer_state_recovery replays, snapshots and truncates.

Transactions: the first transactional batch of a producer opens its transaction
(``current_txn_first_offset``) and its COMMIT/ABORT marker closes it
(:meth:`complete_txn`, or ``replay_batch`` with the marker's type). The
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

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType

from samsa.storage.producers.entry import ProducerStateEntry
from samsa.storage.producers.open_transactions import OpenTransactions
from samsa.storage.producers.snapshot import list_snapshot_files
from samsa.storage.segments.transaction_index import AbortedTxn

DEFAULT_SNAPSHOTS_TO_KEEP = 2
CONTROL_ABORT = 0  # ControlRecordType: ABORT 0, COMMIT 1
CONTROL_COMMIT = 1

_DEFERRED_LOADS = threading.RLock()


class ProducerStateBase:
    """Producer id -> :class:`ProducerStateEntry` for one partition (see producer_state.py)."""

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

    # -- changes the live path and recovery both make ------------------------------

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
