"""What a follower partition does with what its fetcher brings (see fetcher_state)."""

from __future__ import annotations

import asyncio
import logging

from samsa.replication.fetcher import follower_writes
from samsa.replication.partition_base import PartitionBase
from samsa.replication.turn_log import TurnLog
from samsa.storage.leader_epoch_cache import UNDEFINED_EPOCH, EpochEntry
from samsa.storage.log_info import AppendInfo

log = logging.getLogger("samsa.replication.partition")
truncation_log = TurnLog(log)

__all__ = ["FollowerSide"]


class FollowerSide(PartitionBase):
    def append_as_follower(self, records: bytes | bytearray | memoryview) -> AppendInfo | None:
        """Append batches fetched from the leader, offsets and epochs kept."""
        self._require_follower()
        info = follower_writes.append_as_follower(self.log, self.producer_state, records)
        if info is not None and self.on_append is not None:
            self.on_append(self, info.valid_bytes)
        return info

    def update_follower_high_watermark(self, leader_high_watermark: int) -> None:
        """Take the leader's watermark, capped at what this follower has; never
        moves it back (only a truncation does)."""
        new = min(leader_high_watermark, self.log.log_end_offset)
        if new > self._high_watermark:
            self._high_watermark = new
            self.producer_state.forget_replicated(new)

    def maybe_increment_log_start_offset(self, leader_log_start_offset: int) -> None:
        """Follow the leader's log start (DeleteRecords, retention) up to our watermark."""
        if self.log.log_start_offset < leader_log_start_offset <= self.high_watermark:
            self.log.delete_records(leader_log_start_offset)
            self.producer_state.delete_snapshots_before(self.log.log_start_offset)

    def truncate_to(self, offset: int) -> bool:
        """Drop a diverging suffix at ``offset``; the watermark follows down."""
        self._require_follower()
        removed = follower_writes.truncate_to(self.log, self.producer_state, offset)
        if removed:
            self._high_watermark = min(self._high_watermark, self.log.log_end_offset)
            truncation_log.info(
                "truncated", "[%s] truncated to offset %d", self.name, self.log.log_end_offset
            )
        return removed

    def truncate_fully_and_start_at(self, offset: int) -> None:
        self._require_follower()
        follower_writes.truncate_fully_and_start_at(self.log, self.producer_state, offset)
        self._high_watermark = offset

    async def restore_from_remote(
        self,
        next_offset: int,
        log_start_offset: int,
        epochs: list[EpochEntry],
        producer_snapshot: bytes | None,
    ) -> None:
        """Start over at ``next_offset`` with the state the remote tier holds
        there (Kafka's ``buildRemoteLogAuxState``): the leader's log start, the
        epochs up to it, the producers (a snapshot file at ``next_offset``).
        The files change in a worker thread, the in-memory state on the loop."""
        self._require_follower()
        await asyncio.to_thread(
            follower_writes.restore_files_from_remote,
            self.log,
            next_offset,
            log_start_offset,
            epochs,
            producer_snapshot,
        )
        follower_writes.restore_state_from_remote(
            self.log, self.producer_state, next_offset, has_snapshot=producer_snapshot is not None
        )
        self._high_watermark = next_offset

    def last_fetched_epoch(self) -> int:
        """The epoch of this log's last batch (-1: none), what a fetch sends as
        ``last_fetched_epoch``.  Not the epoch cache's latest entry: a new leader
        records its epoch before writing in it, and a deposed leader that wrote
        nothing in that epoch has nothing to truncate."""
        log_ = self.log
        end = log_.log_end_offset
        if end <= log_.log_start_offset:
            return UNDEFINED_EPOCH
        return log_.leader_epoch_cache.epoch_for_offset(end - 1)
