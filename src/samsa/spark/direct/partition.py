"""A Spark partition read straight from a remote segment, and which reader reads a range.

An executor gets the pickled partition and the options only, so a
``DirectRange`` carries all its read needs besides the store's settings:
the segment's object keys, offsets and size, and under read_committed the
aborted transactions that touch its offsets (found on the driver, see
``planning``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from samsa.spark.options import ReadOptions
from samsa.spark.ranges import OffsetRange

__all__ = ["AbortedEntry", "DirectRange", "overlapping", "reader_for"]

AbortedEntry = tuple[int, int, int]
"""An aborted transaction: (producer id, first offset, offset of its ABORT marker);
a marker in the brokers' local log is known only to be at or past the remote tier's end."""


@dataclass
class DirectRange(OffsetRange):
    """Offsets ``[start, end)`` of one topic partition, all inside one remote segment."""

    log_key: str
    index_key: str
    segment_start: int
    segment_end: int
    """The segment's last offset (inclusive, as the metadata has it)."""
    segment_size: int
    aborted: tuple[AbortedEntry, ...] = ()

    @property
    def whole_segment(self) -> bool:
        return self.start <= self.segment_start and self.end > self.segment_end


def overlapping(aborted: Iterable[AbortedEntry], start: int, end: int) -> list[tuple[int, int]]:
    """(first offset, producer id) of the aborted transactions that touch offsets
    ``[start, end)``: what a broker lists with a Fetch answer of those offsets
    (Kafka's ``collectAbortedTxns``: marker at or after the start, first
    record before the end).  One whose marker came before ``start`` must not
    be listed: its producer's later, committed transaction would be dropped."""
    return sorted((first, pid) for pid, first, marker in aborted if marker >= start and first < end)


def reader_for(options: ReadOptions, partition: OffsetRange) -> Callable[..., Any]:
    """The reader class for ``partition``, called as ``PartitionRangeReader`` is."""
    tiered = options.tiered
    if isinstance(partition, DirectRange) and tiered is not None and tiered.store is not None:
        from samsa.spark.direct.segment_reader import DirectRangeReader

        return functools.partial(DirectRangeReader, part=partition, store=tiered.store)
    from samsa.client.arrow import PartitionRangeReader

    return PartitionRangeReader
