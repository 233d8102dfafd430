"""Remote reads: a fetch or a timestamp lookup served from the remote tier.

The I/O around the sans-I/O rules of ``lineage`` (which segment),
``remote_index`` (where in it) and ``remote_read`` (what the bytes say):

* ``read`` answers a Fetch at an offset below the local log start, as Kafka's
  ``RemoteLogManager.read``: find the remote segment that holds the offset on
  this replica's lineage, look the offset up in its offset index, range-read
  from there, and move on to the next remote segment when this one has no
  batch at or after the offset.  For read_committed fetches it adds the
  aborted transactions the fetched range overlaps (from the remote
  transaction indexes; the caller adds those of local segments when the
  search reaches them, as Kafka's ``collectAbortedTransactions`` does).
* ``offset_for_timestamp`` answers a ListOffsets by timestamp inside one
  remote segment, as Kafka's ``lookupTimestamp``.

Both are coroutines that only await the store and the index cache; the
caller bounds them with ``remote.fetch.max.wait.ms`` (``asyncio.timeout``)
and maps ``RetriableRemoteStorageError`` to a retriable error code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from samsa.storage.segments.transaction_index import AbortedTxn
from samsa.tiered.lineage import find_segment, next_segment, segment_for_timestamp
from samsa.tiered.metadata.cache import RemoteLogMetadataCache
from samsa.tiered.metadata.model import EpochEntry, RemoteLogSegmentMetadata
from samsa.tiered.remote_index import RemoteIndexCache
from samsa.tiered.remote_read import (
    DEFAULT_READ_SLACK_BYTES,
    ReadMore,
    RemoteRecords,
    TimestampAndOffset,
    records_from,
    timestamp_from,
)
from samsa.tiered.segment_objects import RemoteStorageManager

__all__ = [
    "RemoteFetchResult",
    "find_offset_by_timestamp",
    "offset_for_timestamp",
    "read",
    "read_segment",
]

_MAX_ROUND_TRIPS = 8
"""Range reads per segment before giving up: each one grows to cover the
batch it found cut, so two suffice for any well-formed segment."""


@dataclass(frozen=True, slots=True)
class RemoteFetchResult:
    """What a remote fetch answers: records (maybe empty), from which segment,
    and for a read_committed fetch the aborted transactions.  When
    ``aborted_complete`` is False the remote segments ran out before the
    search was complete: the caller goes on with the local segments'
    transaction indexes (Kafka's ``collectAbortedTransactionInLocalSegments``)."""

    records: RemoteRecords | None
    segment: RemoteLogSegmentMetadata | None
    aborted: list[AbortedTxn] | None = None
    aborted_complete: bool = True


async def read_segment(
    manager: RemoteStorageManager,
    indexes: RemoteIndexCache,
    segment: RemoteLogSegmentMetadata,
    offset: int,
    max_bytes: int,
    *,
    min_one_message: bool,
    slack_bytes: int = DEFAULT_READ_SLACK_BYTES,
) -> RemoteRecords | None:
    """The records of ``segment`` from ``offset`` on, or None when it has none there."""
    position = await indexes.lookup_offset(segment, offset)
    length = max_bytes + slack_bytes
    for _ in range(_MAX_ROUND_TRIPS):
        data = await manager.fetch_log_segment(segment, position, length)
        answer = records_from(
            data,
            position,
            offset,
            max_bytes,
            min_one_message=min_one_message,
            segment_size=segment.segment_size_bytes,
        )
        if not isinstance(answer, ReadMore):
            return answer
        position, length = answer.position, max(answer.length, length)
    raise RuntimeError(f"remote segment {segment.segment_id}: no batch boundary found at {offset}")


async def read(
    manager: RemoteStorageManager,
    indexes: RemoteIndexCache,
    cache: RemoteLogMetadataCache,
    leader_epochs: Sequence[EpochEntry],
    offset: int,
    max_bytes: int,
    *,
    min_one_message: bool,
    read_committed: bool = False,
) -> RemoteFetchResult:
    """A fetch at ``offset`` from the remote tier (see the module doc).

    ``segment`` None in the answer means no remote segment holds ``offset`` on
    this lineage: the fetch answers OFFSET_OUT_OF_RANGE, as Kafka's does."""
    segment = find_segment(cache, leader_epochs, offset)
    while segment is not None:
        records = await read_segment(
            manager, indexes, segment, offset, max_bytes, min_one_message=min_one_message
        )
        if records is not None:
            if not read_committed:
                return RemoteFetchResult(records, segment)
            aborted, complete = await _aborted(indexes, cache, leader_epochs, segment, offset)
            return RemoteFetchResult(records, segment, aborted, complete)
        segment = next_segment(cache, leader_epochs, segment)
    return RemoteFetchResult(None, None)


async def _aborted(
    indexes: RemoteIndexCache,
    cache: RemoteLogMetadataCache,
    leader_epochs: Sequence[EpochEntry],
    segment: RemoteLogSegmentMetadata,
    offset: int,
) -> tuple[list[AbortedTxn], bool]:
    """Aborted transactions overlapping [offset, end of ``segment``], and whether
    the search is complete.  An aborted transaction is indexed in the segment
    of its ABORT marker, which may come segments later than its first record,
    so the search goes on through the following remote segments until an
    entry's last stable offset shows that no earlier transaction is still
    open (Kafka's ``TxnIndexSearchResult.isComplete``).  Kafka narrows the
    upper bound to the fetched bytes with the offset index; the whole
    segment is a superset, which consumers handle the same."""
    upper_bound = segment.end_offset + 1
    found: list[AbortedTxn] = []
    current: RemoteLogSegmentMetadata | None = segment
    while current is not None:
        if not current.txn_index_empty:
            index = (await indexes.get(current)).transaction_index
            found.extend(index.collect(offset, upper_bound))
            if any(t.last_stable_offset >= upper_bound for t in index.entries):
                return found, True
        current = next_segment(cache, leader_epochs, current)
    return found, False


async def find_offset_by_timestamp(
    manager: RemoteStorageManager,
    indexes: RemoteIndexCache,
    cache: RemoteLogMetadataCache,
    leader_epochs: Sequence[EpochEntry],
    *,
    log_end_offset: int,
    local_log_start: int,
    timestamp: int,
    starting_offset: int,
    max_record_body: int | None = None,
) -> TimestampAndOffset | None:
    """ListOffsets by timestamp in the remote tier (Kafka's ``findOffsetByTimestamp``).

    None means "search the local log": no remote segment may hold the answer,
    or the first that may is also still local (its start is at or after the
    local log start), where the local search is cheaper."""
    segment = segment_for_timestamp(
        cache, leader_epochs, log_end_offset, timestamp, starting_offset
    )
    if segment is None or segment.start_offset >= local_log_start:
        return None
    return await offset_for_timestamp(
        manager, indexes, segment, timestamp, starting_offset, max_record_body=max_record_body
    )


async def offset_for_timestamp(
    manager: RemoteStorageManager,
    indexes: RemoteIndexCache,
    segment: RemoteLogSegmentMetadata,
    timestamp: int,
    starting_offset: int,
    *,
    chunk_bytes: int = 1024 * 1024,
    max_record_body: int | None = None,
) -> TimestampAndOffset | None:
    """The first record of ``segment`` at or after ``timestamp`` and
    ``starting_offset``, or None; a compressed batch's records over
    ``max_record_body`` raise KafkaError(INVALID_RECORD)."""
    position = await indexes.lookup_timestamp(segment, timestamp, starting_offset)
    length = chunk_bytes
    while True:
        data = await manager.fetch_log_segment(segment, position, length)
        answer = timestamp_from(
            data,
            position,
            timestamp,
            starting_offset,
            segment_size=segment.segment_size_bytes,
            chunk_bytes=chunk_bytes,
            max_record_body=max_record_body,
        )
        if not isinstance(answer, ReadMore):
            return answer
        if answer.position == position and answer.length <= len(data):
            raise RuntimeError(f"remote segment {segment.segment_id}: torn batch at {position}")
        position, length = answer.position, answer.length
