"""Replicated partitions: leaders, followers, the ISR and the high watermark.

Kafka's broker-side replication (ReplicaManager, Partition, the replica
fetchers, AlterPartition, DelayedProduce) for one broker:

* ``ReplicaManager`` -- the hosted partitions; applies metadata deltas
  (leaders, followers, deletes), runs the fetchers, answers the leader side
  of Fetch and OffsetForLeaderEpoch, parks waiting fetches.
* ``Partition`` -- one partition in its role: produce path with ``acks=all``,
  consumer and follower reads, the high watermark, ISR changes, follower
  appends and truncation.
* ``FetcherState`` -- a fetcher's decisions without sockets, for tests and
  the simulator; ``ReplicaFetcher`` is its asyncio loop.

Pure rules live in their own modules (leader_state, epochs, isr_state,
replica_state) and are tested alone.
"""

from samsa.replication.config import ReplicationConfig
from samsa.replication.fetcher.state import FetcherState
from samsa.replication.fetcher.types import FetchStatus, InitialFetchState
from samsa.replication.leader.fetch_waiter import FetchWaiter
from samsa.replication.leader.isr_state import LeaderAndIsr
from samsa.replication.partition import AppendResult, Partition, PartitionRole, ReadResult
from samsa.replication.replica_manager import ReplicaManager, TopicPartition

__all__ = [
    "AppendResult",
    "FetchStatus",
    "FetchWaiter",
    "FetcherState",
    "InitialFetchState",
    "LeaderAndIsr",
    "Partition",
    "PartitionRole",
    "ReadResult",
    "ReplicaManager",
    "ReplicationConfig",
    "TopicPartition",
]
