"""The leader's ISR while a change may be in flight (Kafka's KIP-497 states).

Only the controller changes the ISR: the leader proposes a change with
AlterPartition and learns the result from the response or from the next
metadata.  Between the two the leader is in a pending state, and two sets
matter:

* ``isr`` -- the last ISR the controller committed; ``acks=all`` refuses a
  produce when it is smaller than ``min.insync.replicas``.
* ``maximal_isr`` -- every replica that may be in the ISR once the change
  lands, which the high watermark must wait for.  Expanding adds the new
  replica at once (waiting for one more replica is always safe); shrinking
  keeps the leaving replicas until the controller agrees (the request may
  fail, and moving the high watermark past a replica that is still in the
  committed ISR could lose acknowledged data on a failover).

At most one change per partition is in flight: a pending state refuses
another until the response or new metadata resolves it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CommittedIsr",
    "IsrState",
    "LeaderAndIsr",
    "PendingExpandIsr",
    "PendingIsrChange",
    "PendingShrinkIsr",
]


@dataclass(frozen=True, slots=True)
class LeaderAndIsr:
    """A partition's leadership and ISR as AlterPartition sends and returns it."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int
    leader_recovery_state: int = 0


@dataclass(frozen=True, slots=True)
class CommittedIsr:
    """No change in flight: the ISR the controller committed."""

    isr: frozenset[int]

    @property
    def maximal_isr(self) -> frozenset[int]:
        return self.isr

    @property
    def is_inflight(self) -> bool:
        return False


@dataclass(frozen=True, slots=True, eq=False)
class PendingExpandIsr:
    """``new_replica`` caught up and was proposed for the ISR.

    Compared by identity (``eq=False``): a response is for the exact change
    that was sent, not for a later one that happens to look the same."""

    new_replica: int
    sent: LeaderAndIsr
    last_committed: CommittedIsr

    @property
    def isr(self) -> frozenset[int]:
        return self.last_committed.isr

    @property
    def maximal_isr(self) -> frozenset[int]:
        return self.last_committed.isr | {self.new_replica}

    @property
    def is_inflight(self) -> bool:
        return True


@dataclass(frozen=True, slots=True, eq=False)
class PendingShrinkIsr:
    """``removed`` fell behind and were proposed to leave the ISR."""

    removed: frozenset[int]
    sent: LeaderAndIsr
    last_committed: CommittedIsr

    @property
    def isr(self) -> frozenset[int]:
        return self.last_committed.isr

    @property
    def maximal_isr(self) -> frozenset[int]:
        return self.last_committed.isr

    @property
    def is_inflight(self) -> bool:
        return True


IsrState = CommittedIsr | PendingExpandIsr | PendingShrinkIsr
PendingIsrChange = PendingExpandIsr | PendingShrinkIsr
