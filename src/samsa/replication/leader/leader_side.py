"""What a partition leader does for its followers and consumers.

Reads for consumers (below the high watermark) and for followers (up to the
log end, with the divergence check), OffsetForLeaderEpoch, and the ISR:
expansion when a follower catches up, shrinking when one falls behind, and
the controller's answers to those proposals.  The rules themselves are in
leader_state and epochs; this applies them to the partition's log.
"""

from __future__ import annotations

import logging

from samsa.errors import ErrorCode, KafkaError
from samsa.replication.epochs import NO_EPOCH, diverging_epoch
from samsa.replication.leader.isr_state import LeaderAndIsr, PendingIsrChange
from samsa.replication.partition_base import PartitionBase, PartitionRole, ReadResult
from samsa.replication.turn_log import TurnLog
from samsa.storage.leader_epoch_cache import EpochEndOffset
from samsa.storage.segments.file_region import FileRegion

log = logging.getLogger("samsa.replication.partition")
isr_log = TurnLog(log)

__all__ = ["LeaderSide"]


class LeaderSide(PartitionBase):
    def read_for_consumer(
        self,
        fetch_offset: int,
        max_bytes: int,
        *,
        current_leader_epoch: int = NO_EPOCH,
        min_one: bool = True,
        read_committed: bool = False,
    ) -> ReadResult:
        """Records below the high watermark (the last stable offset when
        ``read_committed``, with the aborted transactions they overlap).
        OFFSET_OUT_OF_RANGE outside [log start, log end]; below a tiered log's
        local start the result says ``remote`` (the caller reads the remote
        tier); an offset between the
        watermark and the log end (a consumer ahead of a new leader's
        watermark) reads nothing, as in Kafka."""
        self.check_leader_epoch(current_leader_epoch)
        high_watermark = self.high_watermark
        stable = self.last_stable_offset
        limit = stable if read_committed else high_watermark
        start = self.log.log_start_offset
        end = self.log.log_end_offset
        if fetch_offset < start or fetch_offset > end:
            raise KafkaError(
                ErrorCode.OFFSET_OUT_OF_RANGE,
                f"[{self.name}] offset {fetch_offset} is outside [{start}, {end}]",
            )
        records: FileRegion | bytes = b""
        aborted = None
        if fetch_offset < limit:
            if fetch_offset < self.log.local_log_start_offset:  # only a tiered log's
                return ReadResult(
                    b"", high_watermark, start, end, last_stable_offset=stable, remote=True
                )
            data = self.log.read(fetch_offset, max_bytes, min_one=min_one, max_offset=limit)
            records = data.records
            if read_committed:
                aborted = self.log.collect_aborted_txns(fetch_offset, limit)
        return ReadResult(
            records, high_watermark, start, end, last_stable_offset=stable, aborted=aborted
        )

    def read_for_follower(
        self,
        replica_id: int,
        fetch_offset: int,
        *,
        current_leader_epoch: int,
        last_fetched_epoch: int,
        follower_log_start_offset: int,
        max_bytes: int,
        min_one: bool,
        now_ms: int,
        update_fetch_state: bool = True,
    ) -> ReadResult:
        """A follower's fetch (Kafka's ``fetchRecords`` for a follower): epochs
        checked, divergence answered from the epoch cache, records up to the log
        end, and (``update_fetch_state``, only for the first read of a request)
        the follower's position recorded, which may expand the ISR and move the
        high watermark."""
        self.check_leader_epoch(current_leader_epoch)
        leader = self._leader
        replica = None if leader is None else leader.remote.get(replica_id)
        if leader is None or replica is None:
            code = (
                ErrorCode.UNKNOWN_LEADER_EPOCH
                if current_leader_epoch != NO_EPOCH
                else ErrorCode.NOT_LEADER_OR_FOLLOWER
            )
            raise KafkaError(
                code,
                f"[{self.name}] broker {replica_id} is not a replica {list(self.replicas)} "
                f"at leader epoch {self.leader_epoch}",
            )
        start = self.log.log_start_offset
        end = self.log.log_end_offset
        if last_fetched_epoch != NO_EPOCH:
            diverging = diverging_epoch(
                self.log.end_offset_for_epoch(last_fetched_epoch),
                last_fetched_epoch,
                fetch_offset,
                start,
            )
            if diverging is not None:
                return ReadResult(b"", self.high_watermark, start, end, diverging)
        if fetch_offset < self.log.local_log_start_offset and fetch_offset >= start:
            # A tiered log: the follower rebuilds its state from the remote
            # tier and fetches on from the local start (Kafka's answer).
            raise KafkaError(
                ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE,
                f"[{self.name}] offset {fetch_offset} is only in the remote tier "
                f"(local log start {self.log.local_log_start_offset})",
            )
        # A caught-up follower (most of a session's partitions, most of the
        # time) has nothing to read: no lock, segment search or read for it
        # (a failed log dir still answers through the read's error).
        if fetch_offset == end and not self.log.offline:
            records: FileRegion | bytes = b""
        else:
            records = self.log.read(fetch_offset, max_bytes, min_one=min_one).records
        if update_fetch_state:
            previous_end = replica.log_end_offset
            replica.update_fetch_state(fetch_offset, follower_log_start_offset, now_ms, end)
            self._maybe_expand_isr(replica_id)
            if previous_end != replica.log_end_offset:
                self._maybe_increment_high_watermark(now_ms)
        return ReadResult(records, self.high_watermark, start, end)

    def last_offset_for_leader_epoch(
        self, current_leader_epoch: int, leader_epoch: int
    ) -> EpochEndOffset:
        """OffsetForLeaderEpoch: where ``leader_epoch`` ended on this leader's log."""
        self.check_leader_epoch(current_leader_epoch)
        return self.log.end_offset_for_epoch(leader_epoch)

    def _maybe_expand_isr(self, broker_id: int) -> None:
        leader = self._leader
        if leader is None or not leader.should_expand(
            broker_id, self.high_watermark, self.is_replica_eligible
        ):
            return
        change = leader.prepare_expand(broker_id, self.leader_epoch, self.partition_epoch)
        isr_log.info(
            "expanding ISR",
            "[%s] expanding ISR from %s to %s",
            self.name,
            sorted(change.isr),
            list(change.sent.isr),
        )
        self._submit(change)

    def maybe_shrink_isr(self, now_ms: int) -> PendingIsrChange | None:
        """Propose removing ISR members that have not caught up within
        ``replica.lag.time.max.ms`` (the ReplicaManager calls this periodically).

        The high watermark is recomputed first: a caught-up replica outside the
        ISR holds it back only while it stays caught up, and once it stops
        fetching nothing else would move the watermark until the next append."""
        leader = self._leader
        if leader is None or self._role is not PartitionRole.LEADER:
            return None
        self._maybe_increment_high_watermark(now_ms)
        end = self.log.log_end_offset
        lagging = leader.out_of_sync_replicas(end, now_ms)
        if not lagging:
            return None
        change = leader.prepare_shrink(lagging, self.leader_epoch, self.partition_epoch)
        isr_log.info(
            "shrinking ISR",
            "[%s] shrinking ISR from %s to %s: out of sync %s (leader end offset %d, "
            "high watermark %d)",
            self.name,
            sorted(change.isr),
            list(change.sent.isr),
            sorted(lagging),
            end,
            self._high_watermark,
        )
        self._submit(change)
        return change

    def _submit(self, change: PendingIsrChange) -> None:
        if self.alter_partition_sink is None:
            log.warning(
                "[%s] no controller channel: ISR change %s stays pending", self.name, change
            )
            return
        self.alter_partition_sink(self, change)

    def handle_alter_partition_result(
        self, change: PendingIsrChange, result: LeaderAndIsr | ErrorCode, now_ms: int
    ) -> bool:
        """Apply the controller's answer to ``change``; True if it should be sent
        again.  As Kafka's ``handleAlterPartitionUpdate`` / ``...Error``: an
        answer to a change that is no longer the pending one is ignored; a
        refusal that proves nothing changed rolls back to the committed ISR;
        one that means our metadata is stale (fenced epoch, invalid version,
        ...) leaves the change pending until new metadata resolves it."""
        leader = self._leader
        if leader is None or leader.isr_state is not change:
            log.debug("[%s] ignoring AlterPartition answer for %s", self.name, change)
            return False
        if isinstance(result, ErrorCode):
            if result in _ROLL_BACK:
                leader.roll_back()
                log.info(
                    "[%s] ISR change refused (%s); back to the committed ISR",
                    self.name,
                    result.name,
                )
                return False
            if result in _AWAIT_METADATA:
                log.info(
                    "[%s] ISR change refused (%s); waiting for new metadata", self.name, result.name
                )
                return False
            log.warning("[%s] ISR change failed with %s; retrying", self.name, result.name)
            return True
        if (
            result.leader_epoch != self.leader_epoch
            or result.partition_epoch < self.partition_epoch
        ):
            log.info("[%s] ignoring stale AlterPartition answer %s", self.name, result)
            return False
        leader.commit(result.isr)
        self.partition_epoch = result.partition_epoch
        isr_log.info(
            "ISR committed",
            "[%s] ISR now %s at partition epoch %d",
            self.name,
            list(result.isr),
            result.partition_epoch,
        )
        self._maybe_increment_high_watermark(now_ms)
        return False


_ROLL_BACK = frozenset({ErrorCode.OPERATION_NOT_ATTEMPTED, ErrorCode.INELIGIBLE_REPLICA})
_AWAIT_METADATA = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.UNKNOWN_TOPIC_ID,
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.INVALID_UPDATE_VERSION,
        ErrorCode.INVALID_REQUEST,
        ErrorCode.NEW_LEADER_ELECTED,
    }
)
