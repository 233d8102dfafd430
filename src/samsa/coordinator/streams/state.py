"""The streams groups of this coordinator as records make them (replay, the write path
and the per-group locks are ``modern.record_groups``'s), and each group's
topology configured against the cluster.

``StreamsGroupManager`` (heartbeats) and ``MemberLifecycle`` (leaving, fencing,
timers) stand on this: every change is a record written to
``__consumer_offsets`` and only then applied by replay, the same code that
rebuilds a group when a partition is loaded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from samsa.coordinator.modern.record_groups import RecordGroups
from samsa.coordinator.registry import GroupRegistry
from samsa.coordinator.streams.assignment import target
from samsa.coordinator.streams.config import StreamsSettings
from samsa.coordinator.streams.group import StreamsGroup
from samsa.coordinator.streams.internal_topics import ConfiguredTopology, configure
from samsa.coordinator.streams.topology import StreamsTopology
from samsa.protocol.internal_records.streams_group_records import (
    STREAMS_GROUP_RECORDS,
    StreamsGroupKey,
)

log = logging.getLogger("samsa.coordinator")

Body = dict[str, Any]
TopicLookup = Callable[[], Mapping[str, tuple[bytes, int]]]
OtherGroup = Callable[[str], bool]
"""group id -> whether a group of another type (classic with members, consumer) holds it."""


def _no_other_group(group_id: str) -> bool:
    return False


class StreamsGroups(RecordGroups[StreamsGroup, StreamsGroupKey]):
    """Every streams group of the ``__consumer_offsets`` partitions this coordinator owns."""

    record_family = STREAMS_GROUP_RECORDS

    def __init__(
        self,
        registry: GroupRegistry,
        settings: StreamsSettings,
        topics: TopicLookup,
        other_group: OtherGroup = _no_other_group,
    ) -> None:
        super().__init__(registry)
        self.settings = settings
        self.topics = topics
        self.other_group = other_group
        self.task_offsets: dict[str, dict[str, dict[tuple[str, int], int]]] = {}
        """Soft state: each member's last reported changelog offset sums (for the assignor)."""

    def _new_group(self, group_id: str, partition: int) -> StreamsGroup:
        return StreamsGroup(group_id, partition)

    def _group_gone(self, group_id: str) -> None:
        self.task_offsets.pop(group_id, None)
        super()._group_gone(group_id)

    def _configured(
        self,
        group: StreamsGroup,
        topology: StreamsTopology,
        metadata_hash: int,
        topic_metadata: Mapping[str, tuple[bytes, int]],
    ) -> ConfiguredTopology:
        key = (topology.epoch, metadata_hash)
        if group.configured is None or group.configured_for != key or group.topology != topology:
            partitions = {name: count for name, (_tid, count) in topic_metadata.items()}
            group.configured = configure(topology, partitions)
            group.configured_for = key
            if group.configured.error is not None:
                log.info(
                    "[GroupId %s] topology epoch %d not ready: %s",
                    group.group_id,
                    topology.epoch,
                    group.configured.error.message,
                )
        return group.configured

    def configured_now(self, group: StreamsGroup) -> ConfiguredTopology | None:
        """The group's topology configured against the topics as they are now (describe
        uses it; after a load nothing has configured it yet)."""
        if group.topology is None:
            return None
        topic_metadata = self.topics()
        metadata_hash = target.metadata_hash(group.topology, topic_metadata)
        return self._configured(group, group.topology, metadata_hash, topic_metadata)

    def _initial_delay_left(self, group: StreamsGroup, now: int) -> int:
        if group.assignment_epoch != 0 or group.created_ms is None:
            return 0
        return max(
            0, group.created_ms + self.settings.initial_rebalance_delay_ms(group.group_id) - now
        )

    def _remember_offsets(self, group_id: str, member_id: str, req: Body) -> None:
        offsets = req.get("task_offsets")
        if offsets is not None:
            self.task_offsets.setdefault(group_id, {})[member_id] = {
                (o["subtopology_id"], o["partition"]): o["offset"] for o in offsets
            }

    def _request_shutdown(self, group: StreamsGroup, member_id: str) -> None:
        if group.shutdown_requested_by is None:
            log.info(
                "[GroupId %s][MemberId %s] Shutdown requested for the streams application.",
                group.group_id,
                member_id,
            )
            group.shutdown_requested_by = member_id
