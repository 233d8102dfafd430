"""Which transaction markers a compaction pass may remove (Kafka's
``CleanedTransactionMetadata``).

A COMMIT or ABORT marker is needed only while some batch of its transaction
is still in the log: a read_committed consumer needs the ABORT marker to stop
skipping the producer's batches, and recovery rebuilds the producer state from
both.  So, walking a pass's batches in offset order, a marker may go once the
pass saw no batch of its transaction before it (an earlier pass removed them
all), and then only after its delete horizon: the first pass that finds it
removable stamps ``now + delete.retention.ms`` on it (KIP-534, as tombstones
get), a later pass past that time drops it, so a consumer that read the
transaction's batches before they were compacted away still finds the marker.
An empty control batch (a marker an older cleaner emptied) may always go.

Pure bookkeeping over batch headers: no files, no clock.
"""

from __future__ import annotations

from collections import deque

from samsa.protocol.batches.record_batch import BatchHeader
from samsa.protocol.batches.record_builder import ControlType
from samsa.storage.segments.transaction_index import AbortedTxn

__all__ = ["AbortedBatches", "CleanedTransactions"]


class CleanedTransactions:
    """Open transactions of one pass, fed every batch in offset order."""

    def __init__(self, aborted: list[AbortedTxn]) -> None:
        self._aborted = deque(sorted(aborted, key=lambda t: t.first_offset))
        self._ongoing_aborted: dict[int, bool] = {}
        """producer id -> whether the pass saw a batch of its aborted transaction."""
        self._ongoing_committed: set[int] = set()

    def _start_aborted_up_to(self, offset: int) -> None:
        while self._aborted and self._aborted[0].first_offset <= offset:
            self._ongoing_aborted[self._aborted.popleft().producer_id] = False

    def on_data_batch(self, header: BatchHeader) -> None:
        self._start_aborted_up_to(header.last_offset)
        if not header.is_transactional:
            return
        if header.producer_id in self._ongoing_aborted:
            self._ongoing_aborted[header.producer_id] = True
        else:
            self._ongoing_committed.add(header.producer_id)

    def marker_removable(self, header: BatchHeader, control_type: int | None) -> bool:
        """Whether the marker ``header`` ends a transaction with no batch left
        (the caller still waits for its delete horizon)."""
        self._start_aborted_up_to(header.last_offset)
        if header.records_count == 0:
            return True
        producer_id = header.producer_id
        if control_type == ControlType.ABORT:
            return not self._ongoing_aborted.pop(producer_id, False)
        if control_type == ControlType.COMMIT:
            if producer_id in self._ongoing_committed:
                self._ongoing_committed.discard(producer_id)
                return False
            return True
        return False


class AbortedBatches:
    """Which transactional batches an ABORT marker voided (from the .txnindex).

    Their records must neither shadow an older committed value of their key in
    the offset map nor survive the pass: otherwise compaction would keep the
    aborted value and drop the committed one (a TxnOffsetCommit aborted after a
    committed one would lose the group's offset)."""

    def __init__(self, txns: list[AbortedTxn]) -> None:
        self._ranges: dict[int, list[tuple[int, int]]] = {}
        for txn in txns:
            self._ranges.setdefault(txn.producer_id, []).append((txn.first_offset, txn.last_offset))

    def holds(self, header: BatchHeader) -> bool:
        if not header.is_transactional or header.is_control:
            return False
        ranges = self._ranges.get(header.producer_id)
        return ranges is not None and any(
            first <= header.base_offset <= last for first, last in ranges
        )
