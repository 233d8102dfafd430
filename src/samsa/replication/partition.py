"""One partition as this broker hosts it: its log, producer state, role and watermark.

A partition is in one of four roles:

* STANDALONE -- the single-node broker before any cluster metadata names a
  leader: every write is committed once it is in the log (high watermark =
  log end offset), leader epoch -1.  Today's single-node broker runs so.
* LEADER -- made so by ``make_leader`` from the controller's registration.
  Writes are stamped with the leader epoch; the high watermark is the
  smallest log end offset of the ISR (leader_state), learnt from follower
  fetches, and only ever moves forward; ``acks=all`` produces wait for it.
* FOLLOWER -- made so by ``make_follower``: clients are refused with
  NOT_LEADER_OR_FOLLOWER; a replica fetcher appends the leader's batches as
  they are (offsets and epochs kept) and truncates a diverging suffix.
* STOPPED -- no longer hosted here (deleted, or moved away).

A registration older than what the partition has seen (a smaller leader or
partition epoch) is ignored, so metadata that arrives late or twice is safe.

Everything runs on the broker's event loop; the Log's own lock covers the
disk work other threads do (flushes, retention).  The ReplicaManager wires
the callbacks: waking parked fetches, sending AlterPartition, telling which
brokers may join an ISR.
"""

from __future__ import annotations

import logging

from samsa.controller.image.registrations import PartitionRegistration
from samsa.errors import ErrorCode
from samsa.replication.fetcher.follower_side import FollowerSide
from samsa.replication.leader.leader_side import LeaderSide
from samsa.replication.leader.leader_state import LeaderState
from samsa.replication.leader.produce_path import ProducePath
from samsa.replication.partition_base import AppendResult, PartitionRole, ReadResult

log = logging.getLogger(__name__)

__all__ = ["AppendResult", "Partition", "PartitionRole", "ReadResult"]


class Partition(ProducePath, LeaderSide, FollowerSide):
    """One hosted partition; see the module docstring for its roles."""

    def _is_stale(self, registration: PartitionRegistration) -> bool:
        if (
            registration.leader_epoch < self.leader_epoch
            or registration.partition_epoch < self.partition_epoch
        ):
            log.info(
                "[%s] ignoring registration %r: already at leader epoch %d, partition epoch %d",
                self.name,
                registration,
                self.leader_epoch,
                self.partition_epoch,
            )
            return True
        return False

    def make_leader(self, registration: PartitionRegistration, now_ms: int) -> bool:
        """Lead the partition as ``registration`` says (Kafka's ``makeLeader``).

        A new leader epoch is recorded in the epoch cache at the log end offset
        before anything is written in it, so followers holding data of a later
        epoch from a deposed leader find where to truncate.  Returns True when
        this broker newly leads or the leader epoch moved; False for an ISR or
        assignment change only, or a stale registration."""
        if self._is_stale(registration):
            return False
        was = self._role
        is_new_leader = was is not PartitionRole.LEADER
        is_new_epoch = registration.leader_epoch > self.leader_epoch
        if self._leader is None:
            self._leader = LeaderState(self.local_broker_id, self._max_lag_ms)
        leader = self._leader
        leader.update_assignment(registration.replicas, registration.isr)
        self.replicas = registration.replicas
        self.partition_epoch = registration.partition_epoch
        self.leader_id = self.local_broker_id
        self._role = PartitionRole.LEADER
        if is_new_leader or is_new_epoch:
            start = self.log.log_end_offset
            if registration.leader_epoch >= 0:
                self.log.maybe_assign_epoch_start_offset(registration.leader_epoch, start)
            leader.start_epoch(now_ms, start, is_new_leader=is_new_leader)
            self.leader_epoch = registration.leader_epoch
            self._unreplicated.clear()
        self._maybe_increment_high_watermark(now_ms)
        if was is not PartitionRole.LEADER and self.on_role_change is not None:
            self.on_role_change(self)
        return is_new_leader or is_new_epoch

    def make_follower(self, registration: PartitionRegistration, now_ms: int) -> bool:
        """Follow ``registration.leader`` (Kafka's ``makeFollower``).  The log is not
        truncated here: the fetcher finds any diverging suffix with the leader.
        Returns True when fetching must (re)start: a new leader epoch, or this
        partition did not follow before."""
        if self._is_stale(registration):
            return False
        was = self._role
        is_new_epoch = registration.leader_epoch > self.leader_epoch
        self.leader_id = registration.leader
        self.leader_epoch = registration.leader_epoch
        self.partition_epoch = registration.partition_epoch
        self.replicas = registration.replicas
        self._leader = None
        self._role = PartitionRole.FOLLOWER
        self._unreplicated.clear()
        self._high_watermark = min(self._high_watermark, self.log.log_end_offset)
        if was is not PartitionRole.FOLLOWER:
            self._delayed.fail_all(ErrorCode.NOT_LEADER_OR_FOLLOWER)
            if self.on_role_change is not None:
                self.on_role_change(self)
        restart = is_new_epoch or was is not PartitionRole.FOLLOWER
        return restart

    def stop(self) -> None:
        """No longer hosted here: waiting produces fail, parked fetches wake."""
        was = self._role
        self._role = PartitionRole.STOPPED
        self._leader = None
        self._unreplicated.clear()
        self._delayed.fail_all(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        if was is not PartitionRole.STOPPED and self.on_role_change is not None:
            self.on_role_change(self)

    def __repr__(self) -> str:
        return (
            f"Partition({self.name}, {self._role.value}, leader={self.leader_id}, "
            f"epoch={self.leader_epoch}, hw={self.high_watermark}, leo={self.log_end_offset})"
        )
