"""The state every hosted partition has, whatever its role (see partition.py).

Split from the Partition so each file holds one concern: this base holds the
fields, the facts derived from them, the leader-epoch checks every request
goes through and the high watermark rule; produce_path, leader_side and
follower_side add what each role does; partition.py switches roles.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from enum import Enum
from typing import NamedTuple

from samsa.controller.image.registrations import NO_LEADER
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches.record_batch import NO_PARTITION_LEADER_EPOCH
from samsa.replication.epochs import check_current_leader_epoch
from samsa.replication.leader.delayed_produce import DelayedProduceQueue
from samsa.replication.leader.isr_state import PendingIsrChange
from samsa.replication.leader.leader_state import LeaderState
from samsa.storage.leader_epoch_cache import EpochEndOffset
from samsa.storage.log import Log
from samsa.storage.producers.producer_state import ProducerStateManager
from samsa.storage.segments.file_region import FileRegion
from samsa.storage.segments.transaction_index import AbortedTxn
from samsa.storage.topic_config.log_config import LogConfig

log = logging.getLogger("samsa.replication.partition")

__all__ = ["AlterPartitionSink", "AppendResult", "PartitionBase", "PartitionRole", "ReadResult"]


class PartitionRole(Enum):
    STANDALONE = "standalone"
    LEADER = "leader"
    FOLLOWER = "follower"
    STOPPED = "stopped"


class AppendResult(NamedTuple):
    """One partition's produce outcome (a NamedTuple: built per partition per request)."""

    base_offset: int
    last_offset: int
    log_append_time_ms: int
    log_start_offset: int
    duplicate: bool = False


class ReadResult(NamedTuple):
    """A read for a Fetch response: the records (a file region to send, or b"")
    and the offsets the response reports.  ``diverging_epoch`` is set (and the
    records empty) when a follower's log diverges from ours."""

    records: FileRegion | bytes
    high_watermark: int
    log_start_offset: int
    log_end_offset: int
    diverging_epoch: EpochEndOffset | None = None
    last_stable_offset: int = -1
    aborted: list[AbortedTxn] | None = None
    remote: bool = False
    """The offset is below the local log start of a tiered log: the remote
    tier answers (``replication.tiering.remote_reads``), not this read."""


AlterPartitionSink = Callable[["PartitionBase", PendingIsrChange], None]


class PartitionBase:
    """Fields and facts of one hosted partition (see partition.py for the roles)."""

    def __init__(
        self,
        topic: str,
        index: int,
        log_: Log,
        producer_state: ProducerStateManager,
        time_ms: Callable[[], int],
        *,
        local_broker_id: int = NO_LEADER,
        high_watermark: int | None = None,
        replica_lag_time_max_ms: int = 30_000,
    ) -> None:
        self.topic = topic
        self.index = index
        self.name = f"{topic}-{index}"
        self.log = log_
        self.producer_state = producer_state
        self.local_broker_id = local_broker_id
        self.topic_id: bytes | None = None
        # Single node: -1 everywhere, so clients skip OffsetForLeaderEpoch
        # validation (kafka-protocol-facts section 4.2 item 7).
        self.leader_epoch = NO_PARTITION_LEADER_EPOCH
        self.partition_epoch = -1
        self.leader_id = local_broker_id
        self.replicas: tuple[int, ...] = ()
        self._role = PartitionRole.STANDALONE
        self._time_ms = time_ms
        self._max_lag_ms = replica_lag_time_max_ms
        end = log_.log_end_offset
        self._high_watermark = end if high_watermark is None else min(high_watermark, end)
        self._leader: LeaderState | None = None
        self._delayed = DelayedProduceQueue()
        # (base offset, bytes) of leader appends not yet below the high watermark:
        # how many bytes a watermark move makes visible to parked consumer fetches.
        self._unreplicated: deque[tuple[int, int]] = deque()
        self.on_append: Callable[[PartitionBase, int], None] | None = None
        self.on_high_watermark: Callable[[PartitionBase, int], None] | None = None
        self.on_role_change: Callable[[PartitionBase], None] | None = None
        self.alter_partition_sink: AlterPartitionSink | None = None
        self.is_replica_eligible: Callable[[int], bool] = _always

    # ------------------------------------------------------------------ facts
    @property
    def config(self) -> LogConfig:
        return self.log.config

    @property
    def role(self) -> PartitionRole:
        return self._role

    @property
    def is_leader(self) -> bool:
        """Serves clients (leader, or the single-node standalone partition)."""
        return self._role in (PartitionRole.LEADER, PartitionRole.STANDALONE)

    @property
    def high_watermark(self) -> int:
        """The offset below which records are committed; consumers read below it."""
        if self._role is PartitionRole.STANDALONE:
            return self.log.log_end_offset
        return max(self._high_watermark, self.log.log_start_offset)

    @property
    def last_stable_offset(self) -> int:
        """Offsets below it belong to no open transaction and are replicated:
        the end of what read_committed consumers read.  Never below the log
        start (as Kafka's): DeleteRecords or retention may remove the start of
        an open transaction, and a consumer must still find offsets to read."""
        high_watermark = self.high_watermark
        unstable = self.producer_state.first_unstable_offset(high_watermark)
        if unstable is None:
            return high_watermark
        return max(min(unstable, high_watermark), self.log.log_start_offset)

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def in_sync_replicas(self) -> frozenset[int]:
        """The committed ISR as this leader knows it (empty unless leading)."""
        if self._leader is not None:
            return self._leader.isr_state.isr
        if self._role is PartitionRole.STANDALONE:
            return frozenset({self.local_broker_id})
        return frozenset()

    @property
    def effective_min_insync_replicas(self) -> int:
        """``min.insync.replicas``, but never more than the partition has replicas.

        Kafka (Partition.effectiveMinIsr, since 3.x's KIP-966 work) lets the
        setting exceed the replication factor and counts min(setting, replicas):
        an acks=all write to a one-replica topic with ``min.insync.replicas=2``
        succeeds there rather than failing forever with NOT_ENOUGH_REPLICAS."""
        return min(self.config.min_insync_replicas, max(len(self.replicas), 1))

    @property
    def leader_state(self) -> LeaderState | None:
        """The followers as this leader sees them (None unless leading); read only."""
        return self._leader

    # ------------------------------------------------------------------ checks
    def check_leader_epoch(self, current_leader_epoch: int, *, require_leader: bool = True) -> None:
        """Raise KafkaError unless a request naming ``current_leader_epoch`` (-1:
        none) may be served here: FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH
        first, then NOT_LEADER_OR_FOLLOWER (Kafka's ``getLocalLog``).  The
        standalone partition has no epochs and accepts any."""
        role = self._role
        if role is PartitionRole.STANDALONE:
            return
        code = check_current_leader_epoch(self.leader_epoch, current_leader_epoch)
        if code is not ErrorCode.NONE:
            raise KafkaError(
                code,
                f"[{self.name}] request for leader epoch {current_leader_epoch}, "
                f"current epoch is {self.leader_epoch}",
            )
        if role is PartitionRole.STOPPED or (require_leader and role is not PartitionRole.LEADER):
            raise KafkaError(
                ErrorCode.NOT_LEADER_OR_FOLLOWER,
                f"[{self.name}] broker {self.local_broker_id} is not the leader "
                f"(leader {self.leader_id}, epoch {self.leader_epoch})",
            )

    def _require_leader(self) -> None:
        if not self.is_leader:
            raise KafkaError(
                ErrorCode.NOT_LEADER_OR_FOLLOWER,
                f"[{self.name}] broker {self.local_broker_id} is not the leader "
                f"(leader {self.leader_id}, epoch {self.leader_epoch})",
            )

    def _require_follower(self) -> None:
        if self._role is not PartitionRole.FOLLOWER:
            raise KafkaError(
                ErrorCode.NOT_LEADER_OR_FOLLOWER,
                f"[{self.name}] is {self._role.value}, not a follower",
            )

    # ------------------------------------------------------------------ high watermark
    def _acks_outcome(self) -> ErrorCode:
        assert self._leader is not None
        if self.effective_min_insync_replicas <= len(self._leader.isr_state.maximal_isr):
            return ErrorCode.NONE
        return ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND

    def _maybe_increment_high_watermark(self, now_ms: int) -> bool:
        """Move the leader's watermark to what the ISR rule allows (never back);
        completes the ``acks=all`` produces it passes and tells parked consumer
        fetches how many bytes became readable."""
        leader = self._leader
        if leader is None:
            return False
        end = self.log.log_end_offset
        candidate = leader.high_watermark_candidate(end, now_ms, self.is_replica_eligible)
        if candidate <= self._high_watermark:
            return False
        old, self._high_watermark = self._high_watermark, min(candidate, end)
        self.producer_state.forget_replicated(self._high_watermark)
        log.debug("[%s] high watermark %d -> %d", self.name, old, self._high_watermark)
        visible = 0
        pending = self._unreplicated
        while pending and pending[0][0] < self._high_watermark:
            visible += pending.popleft()[1]
        self._delayed.complete_up_to(self._high_watermark, self._acks_outcome())
        if self.on_high_watermark is not None:
            self.on_high_watermark(self, max(visible, 1))
        return True


def _always(_broker_id: int) -> bool:
    return True
