"""The streams groups of this coordinator as records make them: replay, the write path,
the per-group locks, and each group's topology configured against the cluster.

``StreamsGroupManager`` (heartbeats) and ``MemberLifecycle`` (leaving, fencing,
timers) stand on this: every change is a record written to
``__consumer_offsets`` and only then applied by replay, the same code that
rebuilds a group when a partition is loaded.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from samsa.coordinator.registry import GroupRegistry
from samsa.coordinator.streams import records, target
from samsa.coordinator.streams.config import StreamsSettings
from samsa.coordinator.streams.group import StreamsGroup
from samsa.coordinator.streams.internal_topics import ConfiguredTopology, configure
from samsa.coordinator.streams.topology import StreamsTopology
from samsa.errors import DecodeError
from samsa.protocol.internal_records.streams_group_records import (
    decode_streams_group_key,
    decode_streams_group_value,
    encode_streams_group_value,
)

log = logging.getLogger("samsa.coordinator")

Body = dict[str, Any]
TopicLookup = Callable[[], Mapping[str, tuple[bytes, int]]]
OtherGroup = Callable[[str], bool]
"""group id -> whether a group of another type (classic with members, consumer) holds it."""


def _no_other_group(group_id: str) -> bool:
    return False


class StreamsGroups:
    """Every streams group of the ``__consumer_offsets`` partitions this coordinator owns."""

    def __init__(
        self,
        registry: GroupRegistry,
        settings: StreamsSettings,
        topics: TopicLookup,
        other_group: OtherGroup = _no_other_group,
    ) -> None:
        self.registry = registry
        self.settings = settings
        self.topics = topics
        self.other_group = other_group
        self.groups: dict[str, StreamsGroup] = {}
        self.task_offsets: dict[str, dict[str, dict[tuple[str, int], int]]] = {}
        """Soft state: each member's last reported changelog offset sums (for the assignor)."""
        self._locks: dict[str, asyncio.Lock] = {}

    # ------------------------------------------------------------ records

    def replay_raw(self, key: bytes, value: bytes | None) -> None:
        """Load one streams-group record (key versions 17 and 19-23)."""
        try:
            decoded = decode_streams_group_key(key)
            body = None if value is None else decode_streams_group_value(decoded.record_type, value)
        except DecodeError as exc:
            log.warning("skipping undecodable streams-group record: %s", exc)
            return
        self._apply((decoded, body))

    def _apply(self, change: records.Change) -> None:
        key, value = change
        group = self.groups.get(key.group_id)
        if group is None:
            if value is None:
                return
            group = StreamsGroup(key.group_id, self.registry.partition_for(key.group_id))
            self.groups[key.group_id] = group
        group.replay(key, value)
        if group.deleted:
            del self.groups[key.group_id]
            self.task_offsets.pop(key.group_id, None)
            self._cancel_group(key.group_id)

    async def write(self, partition: int, changes: list[records.Change]) -> None:
        """Append the changes durably, then apply them; raises KafkaError."""
        if not changes:
            return
        encoded = [
            (
                key.encode(),
                None if value is None else encode_streams_group_value(key.record_type, value),
            )
            for key, value in changes
        ]

        def apply() -> None:
            for change in changes:
                self._apply(change)

        await self.registry.write(partition, encoded, apply=apply)

    def lock(self, group_id: str) -> asyncio.Lock:
        return self._locks.setdefault(group_id, asyncio.Lock())

    def _cancel_group(self, group_id: str) -> None:
        """A group is gone (deleted, unloaded): stop what runs for it."""

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
