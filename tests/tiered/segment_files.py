"""Real segment files for the tiered tests: batches built by Samsa's record builder,
indexed by Samsa's index classes the way a log segment indexes its appends."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.storage.segments.index import OffsetIndex, TimeIndex
from samsa.storage.segments.transaction_index import AbortedTxn, TransactionIndex


@dataclass
class BuiltSegment:
    log: Path
    offset_index: Path
    time_index: Path
    transaction_index: Path | None
    data: bytes
    base_offset: int
    end_offset: int  # inclusive
    records: list[tuple[int, int]]  # (offset, timestamp) of every record
    positions: list[tuple[int, int, int]]  # (base offset, last offset, position) per batch


def build_segment(
    directory: Path,
    base_offset: int,
    batch_sizes: list[int],
    *,
    start_timestamp: int = 1_700_000_000_000,
    value_bytes: int = 100,
    index_interval_bytes: int = 4096,
    leader_epoch: int = 0,
    aborted: list[AbortedTxn] | None = None,
) -> BuiltSegment:
    """A segment of one batch per entry of ``batch_sizes`` (that many records each);
    timestamps rise by 10 ms a record, except that every third batch starts 5 ms
    back in time (out-of-order timestamps, as producers make them)."""
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{base_offset:020d}"
    log = directory / f"{name}.log"
    offset_index = OffsetIndex(directory / f"{name}.index", base_offset, 10 * 1024 * 1024)
    time_index = TimeIndex(directory / f"{name}.timeindex", base_offset, 10 * 1024 * 1024)
    data = bytearray()
    records: list[tuple[int, int]] = []
    positions: list[tuple[int, int, int]] = []
    offset, timestamp = base_offset, start_timestamp
    since_entry = 0
    max_ts, max_ts_offset = -1, base_offset
    for n, count in enumerate(batch_sizes):
        if n % 3 == 2:
            timestamp -= 5
        builder = RecordBatchBuilder(base_offset=offset, partition_leader_epoch=leader_epoch)
        for i in range(count):
            builder.append(timestamp, f"k{offset + i}".encode(), os.urandom(value_bytes))
            records.append((offset + i, timestamp))
            if timestamp > max_ts:
                max_ts, max_ts_offset = timestamp, offset + i
            timestamp += 10
        batch = bytes(builder.build())
        last = offset + count - 1
        if since_entry > index_interval_bytes:
            offset_index.append(last, len(data))
            time_index.maybe_append(max_ts, max_ts_offset)
            since_entry = 0
        positions.append((offset, last, len(data)))
        since_entry += len(batch)
        data += batch
        offset = last + 1
    time_index.maybe_append(max_ts, max_ts_offset, skip_full_check=True)
    log.write_bytes(data)
    offset_index.close()
    time_index.close()
    txn_path = None
    if aborted:
        txn_path = directory / f"{name}.txnindex"
        index = TransactionIndex(txn_path)
        for txn in aborted:
            index.append(txn)
    return BuiltSegment(
        log,
        directory / f"{name}.index",
        directory / f"{name}.timeindex",
        txn_path,
        bytes(data),
        base_offset,
        offset - 1,
        records,
        positions,
    )
