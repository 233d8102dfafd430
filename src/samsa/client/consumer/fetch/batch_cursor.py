"""The per-batch work of decoding fetched records, and where decoding stands in a batch.

When a response arrives, only the batch headers are walked
(:func:`complete_batches`): enough to know where the next fetch starts, so it
goes out before any record is decoded.  Then, once per batch, before its
first record is decoded (:func:`open_batch`): the CRC
check (crc32c in C, so damage surfaces on the ``poll`` that reaches the
batch), dropping the batches of an aborted transaction and control batches
(read_committed: from the first offset the broker names until that
producer's ABORT marker, as Kafka's consumer does), decompression, sanity
bounds on the record count, and the record index for batches big enough to
use one (``record_index``).

The cursor is advanced once per chunk of records (:meth:`BatchCursor.advance`),
which names a batch its records overrun or do not fill.

Apart from ``decoder``, whose job is handing records out a chunk at a time
through the record loop, because none of this runs per record: the record loop
stays as it was, and nothing here adds a call per record.
"""

from __future__ import annotations

from samsa.client.consumer.fetch.aborted import AbortedTransactions
from samsa.client.consumer.fetch.record_index import MIN_RECORDS, RecordIndex, index_records
from samsa.errors import DecodeError
from samsa.protocol.batches.compression import Compression, decompress
from samsa.protocol.batches.record_batch import (
    BATCH_HEADER_SIZE,
    COMPRESSION_MASK,
    CONTROL_MASK,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    BatchHeader,
    iter_batches,
    validate_batch,
)

__all__ = ["BatchCursor", "complete_batches", "open_batch"]


class BatchCursor:
    """Where decoding stands inside one batch: records are decoded a chunk at a time."""

    __slots__ = (
        "base_offset",
        "base_timestamp",
        "data",
        "end",
        "fixed_timestamp",
        "index",
        "leader_epoch",
        "left",
        "pos",
        "taken",
        "timestamp_type",
    )

    def __init__(
        self, data: bytes, pos: int, end: int, header: BatchHeader, index: RecordIndex | None
    ) -> None:
        self.data = data
        self.pos = pos
        self.end = end
        self.index = index  # every record's field positions, when the batch could be indexed
        self.taken = 0  # records decoded so far
        self.left = header.records_count
        self.base_offset = header.base_offset
        self.base_timestamp = header.base_timestamp
        attributes = header.attributes
        self.fixed_timestamp = header.max_timestamp if attributes & TIMESTAMP_TYPE_MASK else None
        self.timestamp_type = (attributes >> 3) & 1
        epoch = header.partition_leader_epoch
        self.leader_epoch = epoch if epoch >= 0 else None

    def advance(self, pos: int, count: int) -> bool:
        """Move past ``count`` records that ended at ``pos`` (once per chunk); True when
        they were the batch's last.  Records running past the batch are damage."""
        end = self.end
        if pos > end:
            raise DecodeError(f"records overrun their batch by {pos - end} bytes")
        self.pos = pos
        self.taken += count
        self.left -= count
        return not self.left

    def check_filled(self) -> None:
        """After the batch's last record: the records must fill the batch exactly."""
        if self.pos != self.end:
            raise DecodeError(f"{self.end - self.pos} bytes after the last record of the batch")


def complete_batches(
    data: bytes | memoryview, fetch_offset: int
) -> tuple[list[tuple[int, BatchHeader]], int]:
    """The complete batches' positions and headers, and where the next fetch starts:
    past the last of them, control batches included (``fetch_offset`` if none)."""
    batches = list(iter_batches(data))
    next_offset = fetch_offset
    for _pos, header in batches:
        last = header.base_offset + header.last_offset_delta + 1
        if last > next_offset:
            next_offset = last
    return batches, next_offset


def open_batch(
    data: bytes,
    pos: int,
    header: BatchHeader,
    check_crcs: bool,
    transactions: AbortedTransactions,
) -> BatchCursor | None:
    """Check a batch and get its records' bytes; None when it has none to hand out."""
    if check_crcs:
        validate_batch(data, pos, header)
    attributes = header.attributes
    if transactions.drops(data, pos, header):
        return None
    if attributes & CONTROL_MASK or header.records_count == 0:
        return None
    start = pos + BATCH_HEADER_SIZE
    end = pos + header.batch_length + LOG_OVERHEAD
    codec = attributes & COMPRESSION_MASK
    if codec != Compression.NONE:
        data = decompress(codec, memoryview(data)[start:end])
        start, end = 0, len(data)
    count = header.records_count
    if count < 0:
        raise DecodeError(f"negative record count {count}")
    if count > end - start:  # every record takes at least 7 bytes; cheap sanity bound
        raise DecodeError(f"record count {count} does not fit in {end - start} bytes")
    index = None
    if count >= MIN_RECORDS:
        index = index_records(data, start, end, count, header.base_offset, header.base_timestamp)
    return BatchCursor(data, start, end, header, index)
