"""The partitions this broker hosts, their roles, fetchers, and the fetches waiting on them.

Kafka's ReplicaManager, without the request handling (the server's handlers
call in).  The class is assembled from one mixin per concern, each in its own
module:

* replica_manager_base: the hosted partitions and the parts they are wired to;
* replica_metadata: applying committed metadata (roles, fetchers, new
  partitions), see there;
* replica_background: ISR expiry, the high watermark checkpoint, producer
  state snapshots, start and stop;
* this module: the requests a leader answers for its partitions, and the
  fetches waiting on them.

Waiting fetches: a fetch that cannot be answered yet parks a FetchWaiter on
its partitions.  Appends wake followers' fetches and the standalone
partition's consumers; on a replicated leader consumers wake when the high
watermark moves, since they read only below it.  A role change wakes every
fetch parked on the partition so it re-reads and gets the new error.

Everything runs on the event loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from samsa.errors import KafkaError
from samsa.replication.leader.fetch_responses import (
    epoch_end_offset_response,
    fetch_error,
    fetch_partition_response,
)
from samsa.replication.leader.fetch_waiter import FetchWaiter
from samsa.replication.partition import Partition
from samsa.replication.replica_manager_base import TopicPartition
from samsa.replication.replica_metadata import APPLY_STEP, ReplicaMetadata

__all__ = ["APPLY_STEP", "FetchWaiter", "ReplicaManager", "TopicPartition"]


class ReplicaManager(ReplicaMetadata):
    """The partitions this broker hosts (see the module doc for the parts)."""

    # ------------------------------------------------------------------ leader-side requests
    def leader_partition(self, topic: str, index: int, current_leader_epoch: int = -1) -> Partition:
        """The partition if this broker may serve clients for it at that epoch;
        raises KafkaError with the code to answer otherwise."""
        partition = self._partitions.get((topic, index))
        if partition is None:
            raise KafkaError(self._missing_code(topic, index), f"{topic}-{index} is not here")
        partition.check_leader_epoch(current_leader_epoch)
        return partition

    def read_fetch_partition(
        self,
        topic: str,
        request_partition: Mapping[str, Any],
        *,
        replica_id: int,
        max_bytes: int,
        min_one: bool,
        now_ms: int,
        update_fetch_state: bool = True,
        read_committed: bool = False,
    ) -> dict[str, Any]:
        """One partition's entry of a Fetch response (see fetch_responses)."""
        index = request_partition["partition"]
        partition = self._partitions.get((topic, index))
        if partition is None:
            return fetch_error(index, self._missing_code(topic, index))
        return fetch_partition_response(
            partition,
            request_partition,
            replica_id=replica_id,
            max_bytes=max_bytes,
            min_one=min_one,
            now_ms=now_ms,
            update_fetch_state=update_fetch_state,
            read_committed=read_committed,
        )

    def offset_for_leader_epoch(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """A whole OffsetForLeaderEpoch response body (v2-4), for followers and clients."""
        topics = []
        for topic in request.get("topics") or ():
            name = topic["topic"]
            partitions = [
                epoch_end_offset_response(
                    self._partitions.get((name, p["partition"])),
                    p,
                    self._missing_code(name, p["partition"]),
                )
                for p in topic.get("partitions") or ()
            ]
            topics.append({"topic": name, "partitions": partitions})
        return {"throttle_time_ms": 0, "topics": topics}

    # ------------------------------------------------------------------ waiting fetches
    def park(self, keys: Iterable[TopicPartition], waiter: FetchWaiter) -> None:
        self._purgatory.park(keys, waiter)

    def unpark(self, keys: Iterable[TopicPartition], waiter: FetchWaiter) -> None:
        self._purgatory.unpark(keys, waiter)

    def follower_must_refetch(
        self, replica_id: int, keys: Iterable[TopicPartition], max_wait_ms: int
    ) -> bool:
        """Whether a follower's Fetch leaves out a partition it must now fetch from
        here, taken over within its max wait: answered at once, not parked, so the
        next Fetch names it (see fresh_leaderships)."""
        return self._fresh.omitted_by(replica_id, keys, self._time_ms(), max_wait_ms)

    def parked_fetches(self) -> int:
        """Fetches waiting for data (Kafka's fetch purgatory size)."""
        return self._purgatory.parked()
