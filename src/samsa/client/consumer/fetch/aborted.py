"""Which batches of one fetch belong to aborted transactions (read_committed).

Kafka's consumer rule, as the record decoder applies it: the broker lists the
(producer id, first offset) of every aborted transaction that overlaps the
fetched range; from a transaction's first offset on, that producer's
transactional batches are dropped, until its ABORT marker (a control batch),
which is dropped too.  State lives for one fetch response, because the broker
lists again, in every response, the transactions that overlap it.
"""

from __future__ import annotations

from collections.abc import Iterable

from samsa.protocol.batches.record_batch import CONTROL_MASK, TRANSACTIONAL_MASK, BatchHeader
from samsa.protocol.batches.record_reader import decode_batch

__all__ = ["AbortedTransactions"]

_ABORT_MARKER = b"\x00\x00\x00\x00"  # control key: version 0, type 0 (ABORT)


class AbortedTransactions:
    """Feed it every batch of a fetch in order; it says which ones to drop."""

    __slots__ = ("_aborting", "_pending")

    def __init__(self, aborted: Iterable[tuple[int, int]]) -> None:
        self._pending = sorted(aborted)  # (first offset, producer id)
        self._aborting: set[int] = set()

    def drops(self, data: bytes | memoryview, pos: int, header: BatchHeader) -> bool:
        """True when the batch at ``pos`` is part of (or ends) an aborted transaction."""
        pending, aborting = self._pending, self._aborting
        if not pending and not aborting:
            return False
        last = header.base_offset + header.last_offset_delta
        while pending and pending[0][0] <= last:
            aborting.add(pending.pop(0)[1])
        attributes = header.attributes
        if not (attributes & TRANSACTIONAL_MASK and header.producer_id in aborting):
            return False
        if attributes & CONTROL_MASK:
            marker = decode_batch(data, pos, header)
            if marker and marker[0].key == _ABORT_MARKER:
                aborting.discard(header.producer_id)
        return True
