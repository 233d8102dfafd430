"""The group coordinator façade: one async method per Kafka API, dicts in and out.

The broker decodes a request into a dict (snake_case of Kafka's JSON field
names), calls the method for its API key with the request version, and encodes
the returned dict with the response schema of that version.  Version
differences live only in the façade — the layers below (``membership``,
``offsets``, ``admin``) work on plain values — so adding a version touches one
file: this one or the API family's module named below.

Composition: ``GroupRegistry`` (state, store, replay) is shared by
``Rebalancer`` (timers, transitions), ``Membership`` (Join/Sync/Heartbeat/
Leave), ``OffsetManager`` (commit/fetch/delete/expire) and ``GroupAdmin``
(list/describe/delete groups).

The API methods are mixins, one module per family: classic_apis (JoinGroup,
SyncGroup, Heartbeat, LeaveGroup, ListGroups, DescribeGroups, DeleteGroups)
and offset_apis (OffsetCommit, TxnOffsetCommit, OffsetFetch, OffsetDelete);
streams.apis (StreamsGroupHeartbeat, StreamsGroupDescribe and
StreamsGroupTopologyDescriptionUpdate); this module builds the parts, runs the
lifecycle and answers the KIP-848 and share group APIs, which their managers
map themselves.  Records of the newer group types reach their managers by key
version (``_replay_modern``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from samsa.coordinator.admin import GroupAdmin
from samsa.coordinator.classic_apis import ClassicGroupApis
from samsa.coordinator.config import GroupConfig
from samsa.coordinator.consumer.admin import ConsumerGroupAdmin
from samsa.coordinator.consumer.classic_members import ClassicMembers
from samsa.coordinator.consumer.config import ConsumerGroupConfig
from samsa.coordinator.consumer.heartbeat_request import error_response as consumer_error_response
from samsa.coordinator.consumer.manager import ConsumerGroupManager, TopicLookup
from samsa.coordinator.group import GroupState, JoinResult, SyncResult
from samsa.coordinator.membership import Membership
from samsa.coordinator.migration import Migration
from samsa.coordinator.offset_apis import OffsetApis
from samsa.coordinator.offsets import OffsetManager, PartitionExists
from samsa.coordinator.rebalance import Rebalancer, TransitionListener
from samsa.coordinator.registry import GroupRegistry
from samsa.coordinator.share import ShareGroupConfig, ShareGroupManager
from samsa.coordinator.store import OffsetsStore
from samsa.coordinator.streams import (
    StreamsGroupAdmin,
    StreamsGroupConfig,
    StreamsGroupManager,
    StreamsSettings,
)
from samsa.coordinator.streams.apis import StreamsGroupApis
from samsa.coordinator.streams.config import GroupConfigs
from samsa.coordinator.txn_offsets import TxnOffsets
from samsa.errors import ErrorCode
from samsa.protocol.internal_records.streams_group_records import is_streams_group_key

Body = dict[str, Any]

KEY_TYPE_GROUP = 0
KEY_TYPE_TRANSACTION = 1


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def _always(topic: str, partition: int) -> bool:
    return True


def _no_topics() -> dict[str, tuple[bytes, int]]:
    return {}


def _no_group_configs(group_id: str) -> dict[str, str]:
    return {}


def coordinator_key_type_supported(key_type: int) -> bool:
    """FindCoordinator key types this broker coordinates: groups (0) here and
    transactional ids (1) in ``samsa.transaction``."""
    return key_type in (KEY_TYPE_GROUP, KEY_TYPE_TRANSACTION)


class GroupCoordinator(ClassicGroupApis, OffsetApis, StreamsGroupApis):
    """Kafka's classic group coordinator for the partitions of ``__consumer_offsets`` we own."""

    def __init__(
        self,
        store: OffsetsStore,
        config: GroupConfig,
        *,
        time_ms: Callable[[], int] = _wall_clock_ms,
        partition_exists: PartitionExists = _always,
        on_transition: TransitionListener | None = None,
        consumer_config: ConsumerGroupConfig | None = None,
        topics: TopicLookup = _no_topics,
        share_config: ShareGroupConfig | None = None,
        streams_config: StreamsGroupConfig | None = None,
        group_configs: GroupConfigs = _no_group_configs,
    ) -> None:
        self.config = config
        self.registry = GroupRegistry(store, config, time_ms)
        self.rebalancer = Rebalancer(self.registry, on_transition)
        self.membership = Membership(self.registry, self.rebalancer)
        self.offsets = OffsetManager(self.registry, self.rebalancer, partition_exists)
        self.admin = GroupAdmin(self.registry, self.rebalancer)
        self.txn_offsets = TxnOffsets(self.registry, self.offsets)
        self.consumer = ConsumerGroupManager(
            self.registry, consumer_config or ConsumerGroupConfig(), topics
        )
        self.consumer_admin = ConsumerGroupAdmin(self.consumer)
        self.classic_members = ClassicMembers(self.consumer)
        self.consumer.migration = Migration(self.registry, self.rebalancer, self.consumer)
        self.streams = StreamsGroupManager(
            self.registry,
            StreamsSettings(streams_config or StreamsGroupConfig(), group_configs),
            topics,
            self._not_streams_group,
        )
        self.streams_admin = StreamsGroupAdmin(self.streams)
        self.registry.replay_other = self._replay_modern
        self.offsets.in_use_elsewhere = self._modern_group_in_use
        self.share = ShareGroupManager(
            self.registry, share_config or ShareGroupConfig(), topics, self._not_share_group
        )

    def _replay_modern(self, key: bytes, value: bytes | None) -> None:
        """A record of a KIP-848 or streams group, to the manager of its type."""
        if is_streams_group_key(key):
            self.streams.replay_raw(key, value)
        else:
            self.consumer.replay_raw(key, value)

    def _modern_group_in_use(self, group_id: str) -> bool:
        return self.consumer_admin.has_members(group_id) or self.streams_admin.has_members(group_id)

    # ------------------------------------------------------------ lifecycle

    def partition_for(self, group_id: str) -> int:
        """The ``__consumer_offsets`` partition of a group (Kafka's placement)."""
        return self.registry.partition_for(group_id)

    def is_loading(self, partition: int) -> bool:
        return partition in self.registry.loading

    def owns(self, partition: int) -> bool:
        return partition in self.registry.owned

    async def load(self, partition: int) -> None:
        """Become coordinator for ``partition``: replay its records; its groups answer LOAD_IN_PROGRESS meanwhile."""
        await self.registry.load(partition)
        self.consumer.loaded(partition)
        self.streams.loaded(partition)

    async def load_all(self) -> None:
        """Load every partition (a single broker coordinates all groups)."""
        for partition in range(self.config.offsets_topic_num_partitions):
            await self.load(partition)

    def unload(self, partition: int) -> None:
        """Stop coordinating ``partition``: waiting requests get NOT_COORDINATOR and retry elsewhere."""
        self.consumer.unload(partition)
        self.streams.unload(partition)
        self.share.unload(partition)
        for group in self.registry.unload(partition):
            self.rebalancer.cancel_all(group)
            for member in group.members.values():
                member.complete_join(JoinResult(ErrorCode.NOT_COORDINATOR, member.member_id))
                member.complete_sync(SyncResult(ErrorCode.NOT_COORDINATOR))
            group.state = GroupState.DEAD
        self.txn_offsets.forget_partition(partition)

    async def shutdown(self) -> None:
        """Unload everything and let in-flight background writes finish."""
        for partition in sorted(self.registry.owned):
            self.unload(partition)
        self.consumer.shutdown()
        self.streams.shutdown()
        self.share.shutdown()
        await self.rebalancer.drain()

    async def expire_offsets(self, now_ms: int | None = None) -> int:
        """Tombstone offsets older than ``offsets.retention.minutes``; call periodically."""
        return await self.offsets.expire(self.registry.time_ms() if now_ms is None else now_ms)

    async def on_partitions_deleted(self, partitions: set[tuple[str, int]]) -> int:
        """Topic partitions were deleted: tombstone every committed offset for them."""
        return await self.offsets.delete_partitions(partitions)

    # ----------------------------------------------------- KIP-848 groups

    async def consumer_group_heartbeat(
        self, request: Body, version: int, *, client_id: str = "", client_host: str = ""
    ) -> Body:
        """ConsumerGroupHeartbeat (68)."""
        if request.get("group_id") in self.streams.groups:
            return {
                **consumer_error_response(
                    ErrorCode.GROUP_ID_NOT_FOUND,
                    f"Group {request['group_id']} is not a consumer group.",
                ),
            }
        return await self.consumer.heartbeat(
            request, version, client_id=client_id, client_host=client_host
        )

    async def consumer_group_describe(self, request: Body, version: int) -> Body:
        """ConsumerGroupDescribe (69)."""
        return {
            "throttle_time_ms": 0,
            "groups": [self.consumer_admin.describe(g) for g in request.get("group_ids") or ()],
        }

    # ------------------------------------------------------ share groups

    def _not_share_group(self, group_id: str) -> bool:
        return (
            group_id in self.consumer.groups
            or group_id in self.streams.groups
            or group_id in self.registry.groups
        )

    def _not_streams_group(self, group_id: str) -> bool:
        """A consumer or share group, or a classic group with members, holds the id
        (an empty classic group gives way, as Kafka converts it)."""
        classic = self.registry.groups.get(group_id)
        return (
            group_id in self.consumer.groups
            or group_id in self.share.groups
            or (classic is not None and bool(classic.members or classic.pending_members))
        )

    async def share_group_heartbeat(
        self, request: Body, version: int, *, client_id: str = "", client_host: str = ""
    ) -> Body:
        """ShareGroupHeartbeat (76)."""
        return self.share.heartbeat(request, client_id=client_id, client_host=client_host)

    async def share_group_describe(self, request: Body, version: int) -> Body:
        """ShareGroupDescribe (77)."""
        return {
            "throttle_time_ms": 0,
            "groups": [self.share.describe(g) for g in request.get("group_ids") or ()],
        }
