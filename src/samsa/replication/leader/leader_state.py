"""A partition leader's rules for its followers: the high watermark and the ISR.

Pure decisions, no I/O: the Partition feeds in follower fetches and the clock
and acts on what comes back (move the high watermark, propose an ISR change).
Kafka spreads these over ``Partition`` and ``Replica``; here they sit in one
object that exists only while this broker leads the partition.

The rules (Kafka's):

* High watermark: the smallest log end offset among the leader and every
  replica in the *maximal* ISR (see isr_state), and also every replica that
  is caught up (within ``replica.lag.time.max.ms``) and eligible but not yet
  in the ISR -- otherwise a follower catching up while the ISR is just the
  leader would chase a watermark that moves with every append and never
  join.  The caller only ever moves it forward.
* Shrink: a replica of the committed ISR (other than the leader) that has not
  been caught up for ``replica.lag.time.max.ms``.
* Expand: an eligible replica outside the ISR whose log end offset reached
  the high watermark *and* the start of the current leader epoch (a replica
  behind the epoch start could become leader without data the new leader
  committed in this epoch).
* Nothing is proposed while a change is in flight.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from samsa.replication.leader.isr_state import (
    CommittedIsr,
    IsrState,
    LeaderAndIsr,
    PendingExpandIsr,
    PendingShrinkIsr,
)
from samsa.replication.leader.replica_state import UNKNOWN_OFFSET, ReplicaState

__all__ = ["LeaderState"]

Eligibility = Callable[[int], bool]
"""Whether a broker may be in an ISR (registered, unfenced, not shutting down)."""


class LeaderState:
    """Followers of one partition as its leader ``local_id`` sees them."""

    def __init__(self, local_id: int, max_lag_ms: int) -> None:
        self.local_id = local_id
        self.max_lag_ms = max_lag_ms
        self.remote: dict[int, ReplicaState] = {}
        self.isr_state: IsrState = CommittedIsr(frozenset({local_id}))
        self.epoch_start_offset = UNKNOWN_OFFSET

    # ------------------------------------------------------------------ assignment
    def update_assignment(self, replicas: Sequence[int], isr: Iterable[int]) -> None:
        """Take the controller's replicas and committed ISR (any pending change is
        resolved by it, as Kafka's ``updateAssignmentAndIsr``).  Followers keep
        their fetch state; new ones start unknown, removed ones are forgotten."""
        followers = [r for r in replicas if r != self.local_id]
        for broker_id in followers:
            if broker_id not in self.remote:
                self.remote[broker_id] = ReplicaState(broker_id)
        for broker_id in [b for b in self.remote if b not in followers]:
            del self.remote[broker_id]
        self.isr_state = CommittedIsr(frozenset(isr))

    def start_epoch(self, now_ms: int, leader_end_offset: int, *, is_new_leader: bool) -> None:
        """A new leader epoch starts at ``leader_end_offset``."""
        isr = self.isr_state.isr
        for replica in self.remote.values():
            replica.reset(
                now_ms,
                leader_end_offset,
                is_new_leader=is_new_leader,
                in_sync=replica.broker_id in isr,
            )
        self.epoch_start_offset = leader_end_offset

    # ------------------------------------------------------------------ high watermark
    def high_watermark_candidate(
        self, leader_end_offset: int, now_ms: int, eligible: Eligibility
    ) -> int:
        """The offset the high watermark may move to (the caller ignores it when
        it is not larger than the current one)."""
        candidate = leader_end_offset
        maximal = self.isr_state.maximal_isr
        for replica in self.remote.values():
            if replica.log_end_offset >= candidate:
                continue
            if replica.broker_id in maximal or (
                replica.is_caught_up(leader_end_offset, now_ms, self.max_lag_ms)
                and eligible(replica.broker_id)
            ):
                candidate = replica.log_end_offset
        return candidate

    # ------------------------------------------------------------------ ISR changes
    def out_of_sync_replicas(self, leader_end_offset: int, now_ms: int) -> frozenset[int]:
        """Committed ISR members that fell behind (none while a change is in flight)."""
        state = self.isr_state
        if state.is_inflight:
            return frozenset()
        lagging = set()
        for broker_id in state.isr:
            if broker_id == self.local_id:
                continue
            replica = self.remote.get(broker_id)
            if replica is None or not replica.is_caught_up(
                leader_end_offset, now_ms, self.max_lag_ms
            ):
                lagging.add(broker_id)
        return frozenset(lagging)

    def should_expand(self, broker_id: int, high_watermark: int, eligible: Eligibility) -> bool:
        state = self.isr_state
        if state.is_inflight or broker_id in state.isr:
            return False
        replica = self.remote.get(broker_id)
        if replica is None or not eligible(broker_id):
            return False
        end = replica.log_end_offset
        return end >= high_watermark and end >= self.epoch_start_offset >= 0

    def prepare_expand(
        self, broker_id: int, leader_epoch: int, partition_epoch: int
    ) -> PendingExpandIsr:
        committed = self._committed()
        sent = self._leader_and_isr(committed.isr | {broker_id}, leader_epoch, partition_epoch)
        pending = PendingExpandIsr(broker_id, sent, committed)
        self.isr_state = pending
        return pending

    def prepare_shrink(
        self, removed: frozenset[int], leader_epoch: int, partition_epoch: int
    ) -> PendingShrinkIsr:
        committed = self._committed()
        sent = self._leader_and_isr(committed.isr - removed, leader_epoch, partition_epoch)
        pending = PendingShrinkIsr(removed, sent, committed)
        self.isr_state = pending
        return pending

    def commit(self, isr: Iterable[int]) -> None:
        """The controller committed ``isr`` (an AlterPartition response)."""
        self.isr_state = CommittedIsr(frozenset(isr))

    def roll_back(self) -> None:
        """The controller refused the change and says so for certain: back to the
        last committed ISR."""
        state = self.isr_state
        if not isinstance(state, CommittedIsr):
            self.isr_state = state.last_committed

    def _committed(self) -> CommittedIsr:
        state = self.isr_state
        if not isinstance(state, CommittedIsr):
            raise RuntimeError(f"an ISR change is already in flight: {state}")
        return state

    def _leader_and_isr(
        self, isr: frozenset[int], leader_epoch: int, partition_epoch: int
    ) -> LeaderAndIsr:
        return LeaderAndIsr(self.local_id, leader_epoch, tuple(sorted(isr)), partition_epoch)
