"""Which partitions of a fetch session may answer differently since the session last read them.

Kafka reads every partition of an incremental fetch session on every fetch;
in Python a follower session of 10,000 idle partitions then costs a third of
a core per broker for answering nothing.  Here a session reads only the
partitions named in the request and those a ``SessionWatch`` marks *dirty*:

* hooks: the fetch purgatory tells every session holding a partition about
  its appends, high watermark moves, role changes and deletion (the events
  that already wake parked fetches), and the session marks it dirty;
* answers: a partition whose last answer had records, an error or a
  divergence, or that was not read to its end (cut by the byte budget),
  stays dirty, so it is read again at the next fetch;
* a backstop: ``ReadState`` is the cheap signature of everything a read's
  answer depends on; the session compares it for every partition now and
  then, so a change no hook reports (retention moving the log start, a new
  leader epoch on the same leader, a failed log dir) is still answered, a
  few seconds late at worst.

A parked session waits on one ``FetchWaiter`` (``waiter``), fed by the same
hooks with the same rules as a fetch parked partition by partition.

Liveness: every follower fetch proves, for each partition it reads at the log
end, that the follower is caught up (Kafka's ``updateFollowerFetchState``).
A partition the session skips is proven the same way -- nothing was
appended since the follower read it at the end -- so its proof is the time
of the session's latest fetch (``proven_ms``), written into the leader's
``ReplicaState`` lazily: just before an append makes it matter (``on_append``)
or when the session goes away (``release``).  Until then the ISR rules see
the follower at the log end, which counts as caught up.

Runs on the event loop.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from samsa.replication.leader.fetch_waiter import FetchWaiter
from samsa.replication.partition_base import PartitionBase, PartitionRole

__all__ = ["ReadState", "SessionWatch", "read_state"]

TopicPartition = tuple[str, int]


class ReadState(NamedTuple):
    """What a Fetch answer for a partition depends on besides the request."""

    partition_id: int
    role: PartitionRole
    leader_epoch: int
    partition_epoch: int
    offline: bool
    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    last_stable_offset: int
    in_sync_replicas: frozenset[int]


NOBODY: frozenset[int] = frozenset()


def read_state(partition: PartitionBase, *, consumer: bool) -> ReadState:
    """The partition's ``ReadState``.  A consumer's reads depend on the last
    stable offset, a follower's on whether it is in the ISR (a follower
    outside it is read on every fetch, as each read may expand the ISR)."""
    log = partition.log
    return ReadState(
        id(partition),
        partition.role,
        partition.leader_epoch,
        partition.partition_epoch,
        log.offline,
        log.log_start_offset,
        log.log_end_offset,
        partition.high_watermark,
        partition.last_stable_offset if consumer else -1,
        NOBODY if consumer else partition.in_sync_replicas,
    )


class SessionWatch:
    """The dirty partitions of one fetch session and its parked fetch, if any."""

    __slots__ = ("dirty", "proven_ms", "replica_id", "waiter")

    def __init__(self, replica_id: int = -1) -> None:
        self.replica_id = replica_id
        self.dirty: set[TopicPartition] = set()
        self.waiter: FetchWaiter | None = None
        self.proven_ms = 0

    def take_dirty(self) -> set[TopicPartition]:
        dirty, self.dirty = self.dirty, set()
        return dirty

    def on_append(self, partition: PartitionBase, size: int) -> None:
        key = (partition.topic, partition.index)
        if key not in self.dirty:
            self.dirty.add(key)
            self._prove_caught_up(partition)
        waiter = self.waiter
        if waiter is not None:
            waiter.on_append(size, standalone=partition.role is PartitionRole.STANDALONE)

    def on_high_watermark(self, partition: PartitionBase, visible_bytes: int) -> None:
        self.dirty.add((partition.topic, partition.index))
        waiter = self.waiter
        if waiter is not None:
            waiter.on_visible(visible_bytes)

    def on_wake(self, key: TopicPartition) -> None:
        """A role change or deletion: read it again, and answer a parked fetch now."""
        self.dirty.add(key)
        if self.waiter is not None:
            self.waiter.wake()

    def release(self, partitions: Iterable[PartitionBase]) -> None:
        """The session ends: write the proofs it still holds for ``partitions``."""
        for partition in partitions:
            if (partition.topic, partition.index) not in self.dirty:
                self._prove_caught_up(partition)

    def _prove_caught_up(self, partition: PartitionBase) -> None:
        """Write the proof of the session's latest fetch into the follower's state,
        if it read the partition at the log end (see module doc)."""
        if self.replica_id < 0:
            return
        leader = partition.leader_state
        replica = None if leader is None else leader.remote.get(self.replica_id)
        if (
            replica is not None
            and replica.log_end_offset >= 0
            and replica.log_end_offset == replica.last_fetch_leader_log_end_offset
        ):
            replica.prove_caught_up(self.proven_ms)
