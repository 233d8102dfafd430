"""A partition log in memory, shaped like ``samsa.storage.Log``, for the cluster simulator.

The real ``Partition`` (produce path, leader side, follower side) runs on top of
it, so the simulator drives the broker's own replication code; only the bytes'
home is modelled.  ``samsa.storage.Log`` writes segment files, indexes and an
fsynced epoch checkpoint for every change: thousands of simulated partitions per
seed would spend their time in the file system and the run would depend on it.

What is kept exactly as the real Log does it (the parts replication relies on):

* batches are real RecordBatch v2 bytes; a leader append stamps the base offset
  and the partition leader epoch in place (``stamp_batch``), a follower append
  keeps them and refuses offsets that go backwards;
* the leader epoch cache is the real ``LeaderEpochFileCache`` (in memory): a
  batch of a newer epoch is assigned before it is stored, truncations cut it,
  ``end_offset_for_epoch`` answers from it;
* reads return whole batches from the one holding the offset, at least one when
  ``min_one``, only those ending below ``max_offset`` (consumers' high watermark);
* truncation removes whole batches holding offsets at or above the cut.

A simulated broker crash is a process crash: the log survives whole (the page
cache outlives the process), which is what Kafka's replication assumes.  The
simulator keeps each batch's id in its ``base_timestamp`` field (``batch_id``),
so checks read ids without decoding records.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass

from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches.record_batch import (
    BatchHeader,
    WritableBuffer,
    iter_batches,
    read_batch_header,
    stamp_batch,
)
from samsa.storage.leader_epoch_cache import EpochEndOffset, LeaderEpochFileCache
from samsa.storage.log_info import AppendInfo, FetchDataInfo
from samsa.storage.segments.transaction_index import AbortedTxn, TransactionIndex
from samsa.storage.topic_config.log_config import LogConfig

__all__ = ["MemoryLog", "StoredBatch"]


@dataclass(frozen=True, slots=True)
class StoredBatch:
    """One batch as stored: its offsets, epoch, id (``base_timestamp``) and bytes."""

    base_offset: int
    next_offset: int
    epoch: int
    batch_id: int
    data: bytes


class MemoryLog:
    """The subset of ``samsa.storage.Log`` that ``Partition`` uses (see module doc)."""

    def __init__(self, topic: str, partition: int, config: LogConfig) -> None:
        self.topic = topic
        self.partition = partition
        self.name = f"{topic}-{partition}"
        self.config = config
        self.batches: list[StoredBatch] = []
        self._bases: list[int] = []
        self._log_start_offset = 0
        self._next_offset = 0
        self._leader_epochs = LeaderEpochFileCache(None, self.name)
        self._aborted = TransactionIndex(None)

    # -- offsets -------------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def local_log_start_offset(self) -> int:
        """No remote tier here: everything is local."""
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._next_offset

    # -- append --------------------------------------------------------------

    def append(
        self,
        records: WritableBuffer,
        *,
        assign_offsets: bool = True,
        leader_epoch: int = 0,
        log_append_time_ms: int | None = None,
        now_ms: int | None = None,
    ) -> AppendInfo:
        """As ``Log.append`` (without LogAppendTime, which the simulator never sets)."""
        headers: list[tuple[int, BatchHeader]] = []
        next_offset = self._next_offset
        for pos, header in iter_batches(records):
            if assign_offsets:
                stamp_batch(records, pos, next_offset, leader_epoch)
                header = read_batch_header(records, pos)
            elif header.base_offset < next_offset:
                raise KafkaError(
                    ErrorCode.CORRUPT_MESSAGE,
                    f"[{self.name}] append of offset {header.base_offset} "
                    f"below the log end offset {next_offset}",
                )
            headers.append((pos, header))
            next_offset = header.next_offset
        if not headers:
            return AppendInfo(self._next_offset, self._next_offset - 1, -1, -1, -1, 0, 0)
        if headers[-1][1].partition_leader_epoch > self._leader_epochs.latest_epoch:
            self._leader_epochs.assign_newer(h for _, h in headers)
        view = memoryview(records)
        size = 0
        for pos, header in headers:
            data = bytes(view[pos : pos + header.size])
            size += header.size
            self.batches.append(
                StoredBatch(
                    header.base_offset,
                    header.next_offset,
                    header.partition_leader_epoch,
                    header.base_timestamp,
                    data,
                )
            )
            self._bases.append(header.base_offset)
        self._next_offset = next_offset
        first, last = headers[0][1], headers[-1][1]
        return AppendInfo(
            first_offset=first.base_offset,
            last_offset=last.last_offset,
            max_timestamp=last.max_timestamp,
            offset_of_max_timestamp=last.last_offset,
            log_append_time=-1,
            num_batches=len(headers),
            valid_bytes=size,
        )

    # -- read ----------------------------------------------------------------

    def _index_of(self, offset: int) -> int:
        """Index of the batch holding ``offset`` (or the first one after it)."""
        i = bisect.bisect_right(self._bases, offset) - 1
        if i < 0:
            return 0
        return i if self.batches[i].next_offset > offset else i + 1

    def read(
        self,
        offset: int,
        max_bytes: int,
        *,
        min_one: bool = True,
        max_offset: int | None = None,
    ) -> FetchDataInfo:
        if offset < self._log_start_offset or offset > self._next_offset:
            raise KafkaError(
                ErrorCode.OFFSET_OUT_OF_RANGE,
                f"[{self.name}] offset {offset} is outside "
                f"[{self._log_start_offset}, {self._next_offset}]",
            )
        limit = self._next_offset if max_offset is None else min(max_offset, self._next_offset)
        out = bytearray()
        for batch in self.batches[self._index_of(offset) :]:
            if batch.next_offset > limit:
                break
            if out and len(out) + len(batch.data) > max_bytes:
                break
            if not out and len(batch.data) > max_bytes and not min_one:
                break
            out += batch.data
        return FetchDataInfo(offset, bytes(out), 0, 0)

    def iter_batch_headers(self, from_offset: int | None = None) -> Iterator[BatchHeader]:
        start = self._log_start_offset if from_offset is None else from_offset
        for batch in self.batches[self._index_of(start) :]:
            yield read_batch_header(batch.data, 0)

    # -- leader epochs -------------------------------------------------------

    @property
    def leader_epoch_cache(self) -> LeaderEpochFileCache:
        return self._leader_epochs

    def latest_epoch(self) -> int:
        return self._leader_epochs.latest_epoch

    def end_offset_for_epoch(self, epoch: int) -> EpochEndOffset:
        return self._leader_epochs.end_offset_for(epoch, self._next_offset)

    def maybe_assign_epoch_start_offset(self, epoch: int, start_offset: int) -> None:
        self._leader_epochs.assign(epoch, start_offset)

    # -- a failed log dir (memory has no disk to fail) --------------------------

    offline = False

    def require_online(self) -> None:
        """The real log raises KAFKA_STORAGE_ERROR once its dir failed; never here."""

    # -- truncation, retention -------------------------------------------------

    def truncate_to(self, offset: int) -> bool:
        if offset >= self._next_offset:
            return False
        if offset < self._log_start_offset:
            self.truncate_fully_and_start_at(offset)
            return True
        i = self._index_of(offset)
        del self.batches[i:]
        del self._bases[i:]
        self._next_offset = self.batches[-1].next_offset if self.batches else self._log_start_offset
        self._log_start_offset = min(self._log_start_offset, self._next_offset)
        self._leader_epochs.truncate_from_end(self._next_offset)
        self._aborted.truncate_to(self._next_offset)
        return True

    def truncate_fully_and_start_at(self, offset: int) -> None:
        self.batches.clear()
        self._bases.clear()
        self._next_offset = self._log_start_offset = offset
        self._leader_epochs.clear()
        self._aborted.truncate_to(0)

    # -- aborted transactions (one in-memory index: no segments here) ----------

    def control_batch_bytes(self, header: BatchHeader) -> bytes:
        batch = self.batch_at(header.base_offset)
        if batch is None:
            raise KafkaError(
                ErrorCode.CORRUPT_MESSAGE, f"[{self.name}] no batch at {header.base_offset}"
            )
        return batch.data

    def append_aborted_txn(self, txn: AbortedTxn) -> None:
        self._aborted.append(txn)

    def collect_aborted_txns(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        return self._aborted.collect(fetch_offset, upper_bound)

    def truncate_aborted_txns_from(self, offset: int) -> None:
        self._aborted.truncate_to(offset)

    def delete_records(self, offset: int) -> int:
        if offset > self._next_offset or offset < 0:
            raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, f"[{self.name}] bad log start {offset}")
        if offset > self._log_start_offset:
            self._log_start_offset = offset
            self._leader_epochs.truncate_from_start(offset)
            while self.batches and self.batches[0].next_offset <= offset:
                self.batches.pop(0)
                self._bases.pop(0)
        return self._log_start_offset

    # -- what the simulator reads ------------------------------------------------

    def batch_at(self, offset: int) -> StoredBatch | None:
        """The batch holding ``offset``, if the log has it."""
        if not self._log_start_offset <= offset < self._next_offset:
            return None
        i = self._index_of(offset)
        if i < len(self.batches) and self.batches[i].base_offset <= offset:
            return self.batches[i]
        return None
