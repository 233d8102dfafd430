"""Admin: topics, configs, groups, offsets and cluster information (Kafka's Admin client).

Every call is synchronous: it builds one request per target broker (the
controller for topic changes, the group coordinator for group calls, the
partition leaders for offsets, any broker otherwise), waits at most its
``timeout`` and raises ``KafkaError`` carrying the broker's error code and
message for the first failed item.  Results are plain dataclasses
(``results.py``).

Admin is a façade: each API family's requests and answers live in a module of
their own (topics, configs, groups, group_offsets, records, cluster, acls,
transactions, ...), functions that call back into the plumbing of its base,
``AdminChannel`` (channel.py: one request to a node within a deadline, the
controller, a group's coordinator, the brokers, the partitions' leaders),
through the narrow ``plumbing.AdminPlumbing``.  The security calls (ACLs,
SCRAM users, delegation tokens) come from the base between the two,
``SecurityAdmin`` (security_admin.py).

Threading: one application thread at a time; calls are serialised by the
network client's lock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from samsa.client.admin.families.cluster import describe_cluster
from samsa.client.admin.families.configs import (
    alter_configs,
    describe_configs,
    describe_topic_configs,
)
from samsa.client.admin.families.consumer_groups import (
    ConsumerGroupDescription,
    describe_consumer_groups,
)
from samsa.client.admin.families.elections import ElectionType, elect_leaders
from samsa.client.admin.families.group_offsets import (
    alter_group_offsets,
    delete_group_offsets,
    list_group_offsets,
)
from samsa.client.admin.families.groups import delete_groups, describe_groups, list_groups
from samsa.client.admin.families.log_dirs import (
    ReplicaLogDir,
    alter_replica_log_dirs,
    describe_log_dirs,
    describe_replica_log_dirs,
    failed_log_dirs,
)
from samsa.client.admin.families.quorum import (
    QuorumInfo,
    add_raft_voter,
    describe_quorum,
    remove_raft_voter,
)
from samsa.client.admin.families.reassignments import (
    PartitionReassignment,
    alter_partition_reassignments,
    list_partition_reassignments,
)
from samsa.client.admin.families.records import delete_records, list_offsets
from samsa.client.admin.families.share_groups import (
    ShareGroupDescription,
    alter_share_group_offsets,
    delete_share_group_offsets,
    describe_share_group,
    list_share_group_offsets,
)
from samsa.client.admin.families.topics import (
    create_partitions,
    create_topics,
    delete_topics,
    describe_topics,
    list_topics,
)
from samsa.client.admin.families.transactions import (
    ProducerState,
    TransactionDescription,
    TransactionListing,
    abort_transaction,
    describe_producers,
    describe_transactions,
    list_transactions,
)
from samsa.client.admin.results import (
    ClusterDescription,
    ConfigEntry,
    GroupDescription,
    GroupListing,
    NewTopic,
    TopicDescription,
)
from samsa.client.admin.retry import retry_coordinator_errors
from samsa.client.admin.security_admin import SecurityAdmin
from samsa.client.consumer.fetch.offsets import EARLIEST, LATEST
from samsa.client.consumer.records import OffsetAndMetadata
from samsa.client.metadata import TopicPartition
from samsa.errors import KafkaError

__all__ = ["EARLIEST", "LATEST", "Admin"]


class Admin(SecurityAdmin):
    """Kafka's Admin client (see the module doc); ``with Admin(config) as admin:``."""

    # -- topics (topics.py) -----------------------------------------------------------
    def create_topics(
        self, topics: Iterable[NewTopic], timeout: float | None = None, validate_only: bool = False
    ) -> None:
        create_topics(self, topics, validate_only, self._ms(timeout))

    def delete_topics(self, topics: Iterable[str], timeout: float | None = None) -> None:
        delete_topics(self, topics, self._ms(timeout))

    def list_topics(self, timeout: float | None = None, include_internal: bool = False) -> set[str]:
        return list_topics(self, include_internal, self._ms(timeout))

    def describe_topics(
        self, topics: Iterable[str], timeout: float | None = None
    ) -> dict[str, TopicDescription]:
        return describe_topics(self, topics, self._ms(timeout))

    def create_partitions(
        self, new_counts: Mapping[str, int], timeout: float | None = None
    ) -> None:
        """Grow each topic to the given total partition count."""
        create_partitions(self, new_counts, self._ms(timeout))

    # -- configs (configs.py) -----------------------------------------------------------
    def describe_configs(
        self, resource_type: str, name: str, keys: Iterable[str] | None = None,
        timeout: float | None = None,
    ) -> dict[str, ConfigEntry]:  # fmt: skip
        return describe_configs(self, resource_type, name, keys, self._ms(timeout))

    def alter_configs(
        self, resource_type: str, name: str, changes: Mapping[str, str | None],
        timeout: float | None = None,
    ) -> None:  # fmt: skip
        """Incremental alter: a string value sets the key, None deletes it (back to default)."""
        alter_configs(self, resource_type, name, changes, self._ms(timeout))

    # -- groups (groups.py, group_offsets.py, consumer_groups.py, share_groups.py) ------
    @retry_coordinator_errors
    def list_groups(self, timeout: float | None = None) -> list[GroupListing]:
        timeout_ms = self._ms(timeout)
        self._controller(timeout_ms)  # learn every broker
        return list_groups(self, list(self._client.metadata.cluster.nodes), timeout_ms)

    @retry_coordinator_errors
    def describe_groups(
        self, group_ids: Iterable[str], timeout: float | None = None
    ) -> dict[str, GroupDescription]:
        return describe_groups(self, group_ids, self._ms(timeout))

    @retry_coordinator_errors
    def describe_consumer_groups(
        self, group_ids: Iterable[str], timeout: float | None = None
    ) -> dict[str, ConsumerGroupDescription | None]:
        """KIP-848 groups with epochs and target assignments (None: not such a group)."""
        return describe_consumer_groups(self, group_ids, self._ms(timeout))

    @retry_coordinator_errors
    def describe_share_group(
        self, group_id: str, timeout: float | None = None
    ) -> ShareGroupDescription | None:
        """A share group's members and assignment (None: no such share group)."""
        return describe_share_group(self, group_id, self._ms(timeout))

    @retry_coordinator_errors
    def list_share_group_offsets(
        self, group_id: str, timeout: float | None = None
    ) -> dict[TopicPartition, int]:
        """Each partition's start offset in the share group (-1: no state yet)."""
        return list_share_group_offsets(self, group_id, self._ms(timeout))

    @retry_coordinator_errors
    def alter_share_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int], timeout: float | None = None
    ) -> None:
        alter_share_group_offsets(self, group_id, offsets, self._ms(timeout))

    @retry_coordinator_errors
    def delete_share_group_offsets(
        self, group_id: str, topics: Iterable[str], timeout: float | None = None
    ) -> None:
        delete_share_group_offsets(self, group_id, topics, self._ms(timeout))

    @retry_coordinator_errors
    def delete_groups(self, group_ids: Iterable[str], timeout: float | None = None) -> None:
        delete_groups(self, group_ids, self._ms(timeout))

    @retry_coordinator_errors
    def list_consumer_group_offsets(
        self, group_id: str, partitions: Iterable[Any] | None = None, timeout: float | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """Committed offsets of a group (all partitions it committed, or only ``partitions``)."""
        return list_group_offsets(self, group_id, partitions, self._ms(timeout))

    @retry_coordinator_errors
    def alter_consumer_group_offsets(
        self, group_id: str, offsets: Mapping[Any, int], timeout: float | None = None
    ) -> None:
        """Set committed offsets of a group without members (see group_offsets)."""
        parts = {TopicPartition(*tp): offset for tp, offset in offsets.items()}
        alter_group_offsets(self, group_id, parts, self._ms(timeout))

    @retry_coordinator_errors
    def delete_consumer_group_offsets(
        self, group_id: str, partitions: Iterable[Any], timeout: float | None = None
    ) -> None:
        parts = [TopicPartition(*tp) for tp in partitions]
        delete_group_offsets(self, group_id, parts, self._ms(timeout))

    def describe_log_dirs(
        self, topics: Iterable[str] | None = None, timeout: float | None = None
    ) -> dict[int, dict[TopicPartition, int]]:
        """Bytes on disk per partition, per broker (DescribeLogDirs)."""
        wanted = None if topics is None else list(topics)
        return describe_log_dirs(self, wanted, self._ms(timeout))

    def alter_replica_log_dirs(
        self, assignment: Mapping[tuple[str, int, int], str], timeout: float | None = None
    ) -> dict[tuple[str, int, int], KafkaError | None]:
        """Move replicas between their broker's log dirs: (topic, partition,
        broker) -> absolute dir; each replica's error, None when under way
        (AlterReplicaLogDirs; follow it with ``describe_log_dirs``)."""
        return alter_replica_log_dirs(self, assignment, self._ms(timeout))

    def describe_replica_log_dirs(
        self, replicas: Iterable[tuple[str, int, int]], timeout: float | None = None
    ) -> dict[tuple[str, int, int], ReplicaLogDir]:
        """(topic, partition, broker) -> the replica's log dir and, while it moves,
        its future log's dir and lag (DescribeLogDirs)."""
        return describe_replica_log_dirs(self, replicas, self._ms(timeout))

    def failed_log_dirs(self, timeout: float | None = None) -> dict[int, list[tuple[str, int]]]:
        """Per broker that answers, its log dirs taken offline by an I/O error
        and their error codes (DescribeLogDirs)."""
        return failed_log_dirs(self, self._ms(timeout))

    # -- offsets and records (records.py) -------------------------------------------------
    def list_offsets(
        self, specs: Mapping[Any, int], timeout: float | None = None, isolation_level: int = 0
    ) -> dict[TopicPartition, tuple[int, int]]:
        """(offset, timestamp) per partition for a timestamp, EARLIEST (-2) or LATEST (-1)."""
        timeout_ms = self._ms(timeout)
        wanted = {TopicPartition(*tp): ts for tp, ts in specs.items()}
        by_leader = self._by_leader(wanted, timeout_ms)
        return list_offsets(self, wanted, by_leader, isolation_level, timeout_ms)

    def delete_records(
        self, before: Mapping[Any, int], timeout: float | None = None
    ) -> dict[TopicPartition, int]:
        """Delete records below the given offsets; returns each partition's new low watermark."""
        timeout_ms = self._ms(timeout)
        wanted = {TopicPartition(*tp): off for tp, off in before.items()}
        by_leader = self._by_leader(wanted, timeout_ms)
        return delete_records(self, wanted, by_leader, timeout_ms)

    # -- cluster (cluster.py, quorum.py) ----------------------------------------------------
    def describe_cluster(self, timeout: float | None = None) -> ClusterDescription:
        """DescribeCluster where the broker has it, else the same facts from Metadata."""
        return describe_cluster(self, self._ms(timeout))

    def describe_metadata_quorum(self, timeout: float | None = None) -> QuorumInfo:
        """The Raft quorum: leader, epoch, high watermark, voters' and observers' lag."""
        return describe_quorum(self, self._ms(timeout))

    def add_raft_voter(
        self,
        voter_id: int,
        directory_id: str,
        listeners: list[tuple[str, str, int]],
        timeout: float | None = None,
    ) -> None:
        """Make a caught-up controller a voter (KIP-853); returns once committed."""
        add_raft_voter(self, voter_id, directory_id, listeners, self._ms(timeout))

    def remove_raft_voter(
        self, voter_id: int, directory_id: str, timeout: float | None = None
    ) -> None:
        remove_raft_voter(self, voter_id, directory_id, self._ms(timeout))

    # -- leaders and replica placement (elections.py, reassignments.py) ---------------
    def elect_leaders(
        self, election_type: ElectionType, partitions: Iterable[TopicPartition] | None = None,
        timeout: float | None = None,
    ) -> dict[TopicPartition, KafkaError | None]:  # fmt: skip
        """Preferred or unclean elections; None partitions: every partition."""
        return elect_leaders(self, election_type, partitions, self._ms(timeout))

    def alter_partition_reassignments(
        self, targets: Mapping[TopicPartition, list[int] | None], timeout: float | None = None
    ) -> dict[TopicPartition, KafkaError | None]:
        """Start (target replicas) or cancel (None) reassignments; errors per partition."""
        return alter_partition_reassignments(self, targets, self._ms(timeout))

    def list_partition_reassignments(
        self, partitions: Iterable[TopicPartition] | None = None, timeout: float | None = None
    ) -> dict[TopicPartition, PartitionReassignment]:
        return list_partition_reassignments(self, partitions, self._ms(timeout))

    def describe_topic_configs(
        self, topics: Iterable[str], keys: Iterable[str] | None = None,
        timeout: float | None = None,
    ) -> dict[str, dict[str, str | None]]:  # fmt: skip
        """Configs of many topics in one request: topic -> name -> value."""
        return describe_topic_configs(self, topics, keys, self._ms(timeout))

    def list_transactions(
        self, states: Iterable[str] = (), producer_ids: Iterable[int] = (),
        timeout: float | None = None,
    ) -> list[TransactionListing]:  # fmt: skip
        """Every transactional id of every coordinator (filtered by state names / ids)."""
        return list_transactions(self, states, producer_ids, self._ms(timeout))

    def describe_transactions(
        self, transactional_ids: Iterable[str], timeout: float | None = None
    ) -> dict[str, TransactionDescription]:
        """State, producer and partitions of each id, from its coordinator."""
        return describe_transactions(self, transactional_ids, self._ms(timeout))

    def describe_producers(
        self, partitions: Iterable[Any], timeout: float | None = None
    ) -> dict[TopicPartition, list[ProducerState]]:
        """The producers each partition's leader remembers, with their open transactions."""
        timeout_ms = self._ms(timeout)
        return describe_producers(self, self._by_leader(partitions, timeout_ms), timeout_ms)

    def abort_transaction(
        self, partition: Any, producer_id: int, producer_epoch: int, coordinator_epoch: int,
        timeout: float | None = None,
    ) -> None:  # fmt: skip
        """End a hanging transaction on one partition with an ABORT marker."""
        timeout_ms = self._ms(timeout)
        tp = TopicPartition(*partition)
        (leader,) = self._by_leader([tp], timeout_ms)
        abort_transaction(
            self, leader, tp, producer_id, producer_epoch, coordinator_epoch, timeout_ms
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Admin:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
