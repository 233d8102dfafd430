"""The transactions a partition has not finished, for its last stable offset.

A producer's first transactional batch opens its transaction at that batch's
offset; its COMMIT/ABORT marker closes it.  Until the marker is below the high
watermark the transaction still counts as unstable (a new leader might not
have the marker), so the last stable offset -- where read_committed
consumers stop -- is the first offset of the oldest transaction that is open
or whose marker is not yet replicated, capped by the high watermark.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from samsa.storage.segments.transaction_index import AbortedTxn

__all__ = ["OpenTransactions"]


class OpenTransactions:
    def __init__(self) -> None:
        self._open: dict[int, int] = {}  # producer id -> first offset
        self._unreplicated: list[tuple[int, int]] = []  # (first offset, marker offset)

    def begin(self, producer_id: int, first_offset: int) -> None:
        self._open.setdefault(producer_id, first_offset)

    def end(self, producer_id: int, marker_offset: int, aborted: bool) -> AbortedTxn | None:
        """Close the producer's transaction; the ``.txnindex`` entry if it aborted one."""
        first = self._open.pop(producer_id, None)
        if first is None:
            return None
        self._unreplicated.append((first, marker_offset))
        if not aborted:
            return None
        others = list(self._open.values())
        stable = min(others) if others else marker_offset + 1
        return AbortedTxn(producer_id, first, marker_offset, stable)

    def forget_replicated(self, high_watermark: int) -> None:
        """Drop ended transactions whose marker is below ``high_watermark`` (called
        as the watermark moves, so the list stays as short as the unreplicated tail)."""
        unreplicated = self._unreplicated
        if unreplicated and unreplicated[0][1] < high_watermark:
            self._unreplicated = [t for t in unreplicated if t[1] >= high_watermark]

    def first_unstable_offset(self, high_watermark: int) -> int | None:
        """First offset of a transaction open, or ended by a marker at or past
        ``high_watermark``; None when every transaction is stable."""
        self.forget_replicated(high_watermark)
        firsts = [first for first, _ in self._unreplicated]
        if self._open:
            firsts.append(min(self._open.values()))
        return min(firsts) if firsts else None

    def first_open_offset(self) -> int | None:
        """The oldest open transaction's first offset, changing nothing (one
        C-level copy of the values, so the cleaner's thread may call it)."""
        firsts = list(self._open.values())
        return min(firsts) if firsts else None

    def as_mapping(self) -> Mapping[int, int]:
        return MappingProxyType(self._open)

    def clear(self) -> None:
        self._open.clear()
        self._unreplicated.clear()
