"""The coordinator's shared state: which partitions it owns, its groups, and their records.

Every durable change goes through ``write``: the records are appended to the
``__consumer_offsets`` partition that owns the group and only then applied in
memory by ``replay`` — the same function that rebuilds state in ``load``.  So a
restarted broker ends up with exactly the offsets and generations it had.

Group-metadata records are the exception during normal operation (as in
Kafka, whose classic groups append them with replay turned off): membership
lives in memory, the record is a snapshot of it taken after a rebalance, and
replaying it would only recreate what is already there.  They are replayed on
load, and tombstones are always replayed.

Writes to one partition are serialised by a lock so that records are applied
in the order the log holds them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from samsa.coordinator.config import GroupConfig
from samsa.coordinator.group import CommittedOffset, Group, GroupState, Member
from samsa.coordinator.partitioning import partition_for
from samsa.coordinator.store import OffsetsStore, Record
from samsa.errors import DecodeError, ErrorCode
from samsa.protocol.internal_records.group_records import (
    GroupKey,
    MemberMetadata,
    OffsetKey,
    UnknownRecordKey,
    decode_group_metadata_value,
    decode_key,
    decode_offset_commit_value,
    encode_group_metadata_key,
    encode_group_metadata_value,
    encode_offset_commit_key,
)

log = logging.getLogger("samsa.coordinator")

_LOAD_YIELD_EVERY = 1000
"""Yield to the event loop this often while loading, so other requests keep flowing."""
_PARTITION_CACHE_SIZE = 100_000
"""Group ids whose ``__consumer_offsets`` partition is remembered before the cache starts over."""


class GroupRegistry:
    """Groups by id, partition ownership, and the write/replay path to the store."""

    def __init__(
        self, store: OffsetsStore, config: GroupConfig, time_ms: Callable[[], int]
    ) -> None:
        self.store = store
        self.config = config
        self.time_ms = time_ms
        self.groups: dict[str, Group] = {}
        self.owned: set[int] = set()
        self.loading: set[int] = set()
        self._locks: dict[int, asyncio.Lock] = {}
        self._partitions: dict[str, int] = {}
        self.on_member_loaded: Callable[[Group, Member], None] = lambda g, m: None
        self.replay_other: Callable[[bytes, bytes | None], None] = lambda k, v: None
        """Where records of other group types (KIP-848 consumer groups) are replayed."""

    # ------------------------------------------------------------- ownership

    def partition_for(self, group_id: str) -> int:
        # Every group request asks this; Java's string hash in Python is not free.
        partition = self._partitions.get(group_id)
        if partition is None:
            partition = partition_for(group_id, self.config.offsets_topic_num_partitions)
            if len(self._partitions) >= _PARTITION_CACHE_SIZE:
                self._partitions.clear()
            self._partitions[group_id] = partition
        return partition

    def check(self, group_id: str | None, *, allow_empty: bool = False) -> ErrorCode | None:
        """Errors that stop any group request before the group is looked at.

        ``allow_empty``: Kafka accepts the empty group id for OffsetCommit,
        OffsetFetch, DescribeGroups and DeleteGroups (old simple consumers used
        it); membership APIs need a real id.
        """
        if group_id is None or (not group_id and not allow_empty):
            return ErrorCode.INVALID_GROUP_ID
        partition = self.partition_for(group_id)
        if partition in self.loading:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        if partition not in self.owned:
            return ErrorCode.NOT_COORDINATOR
        return None

    def get_or_create(self, group_id: str) -> Group:
        group = self.groups.get(group_id)
        if group is None:
            group = Group(group_id, self.partition_for(group_id), state_timestamp=self.time_ms())
            self.groups[group_id] = group
        return group

    async def load(self, partition: int) -> None:
        """Rebuild this partition's groups and offsets by replaying its records."""
        if partition in self.owned or partition in self.loading:
            return
        self.loading.add(partition)
        try:
            for n, (key, value) in enumerate(self.store.read(partition), 1):
                self.replay(key, value, loading=True)
                if n % _LOAD_YIELD_EVERY == 0:
                    await asyncio.sleep(0)
            now = self.time_ms()
            for group in self.groups.values():
                if group.partition == partition:
                    group.state_timestamp = (
                        group.state_timestamp if group.state_timestamp >= 0 else now
                    )
                    for member in group.members.values():
                        self.on_member_loaded(group, member)
            self.owned.add(partition)
        finally:
            self.loading.discard(partition)

    def unload(self, partition: int) -> list[Group]:
        """Forget this partition's groups; returns them so the caller can fail their waiters."""
        self.owned.discard(partition)
        gone = [g for g in self.groups.values() if g.partition == partition]
        for group in gone:
            del self.groups[group.group_id]
        return gone

    # ----------------------------------------------------------------- write

    async def write(
        self,
        partition: int,
        records: list[Record],
        *,
        replay: bool = True,
        apply: Callable[[], None] | None = None,
    ) -> None:
        """Append records durably, then apply them; raises KafkaError on failure.

        By default the records are replayed, as on load.  A caller that already
        holds the decoded values passes ``apply`` instead, which runs at the same
        point (under the partition's lock, so memory follows log order) without
        decoding what it just encoded.
        """
        lock = self._locks.setdefault(partition, asyncio.Lock())
        async with lock:
            await self.store.append(partition, records)
            if apply is not None:
                apply()
            elif replay:
                for key, value in records:
                    self.replay(key, value)

    # ---------------------------------------------------------------- replay

    def replay(self, key: bytes, value: bytes | None, *, loading: bool = False) -> None:
        """Apply one ``__consumer_offsets`` record to memory (the only way offsets change)."""
        try:
            decoded = decode_key(key)
        except UnknownRecordKey:
            self.replay_other(key, value)
            return
        except DecodeError:
            log.warning("skipping undecodable __consumer_offsets key %r", key[:64])
            return
        try:
            if isinstance(decoded, OffsetKey):
                self._replay_offset(decoded, value)
            elif isinstance(decoded, GroupKey):
                self._replay_group(decoded, value, loading)
        except DecodeError as exc:
            # One unreadable value must not keep every other group of the partition offline.
            log.warning("skipping undecodable __consumer_offsets value for %s: %s", decoded, exc)

    def _replay_offset(self, key: OffsetKey, value: bytes | None) -> None:
        tp = (key.topic, key.partition)
        if value is None:
            group = self.groups.get(key.group)
            if group is not None:
                group.offsets.pop(tp, None)
                self.drop_if_vacant(group)
            return
        v = decode_offset_commit_value(value)
        group = self.get_or_create(key.group)
        group.offsets[tp] = CommittedOffset(
            v.offset, v.leader_epoch, v.metadata, v.commit_timestamp, v.expire_timestamp
        )

    def _replay_group(self, key: GroupKey, value: bytes | None, loading: bool) -> None:
        if value is None:
            group = self.groups.pop(key.group, None)
            if group is not None:
                group.state = GroupState.DEAD
                if group.offsets:
                    # Offsets outlive the group record only if they were not tombstoned with it.
                    self.groups[key.group] = Group(
                        key.group,
                        group.partition,
                        offsets=group.offsets,
                        state_timestamp=self.time_ms(),
                    )
            return
        if not loading:
            return
        v = decode_group_metadata_value(value)
        old = self.groups.get(key.group)
        group = Group(
            key.group,
            self.partition_for(key.group),
            state=GroupState.STABLE if v.members else GroupState.EMPTY,
            state_timestamp=v.current_state_timestamp,
            generation_id=v.generation,
            protocol_type=v.protocol_type or None,
            protocol_name=v.protocol or None,
            offsets=old.offsets if old is not None else {},
        )
        for m in v.members:
            group.add(
                Member(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    rebalance_timeout_ms=m.rebalance_timeout,
                    session_timeout_ms=m.session_timeout,
                    protocol_type=v.protocol_type,
                    protocols=[(v.protocol or "", m.subscription)],
                    assignment=m.assignment,
                )
            )
        group.leader_id = v.leader if v.leader in group.members else group.leader_id
        self.groups[key.group] = group

    def drop_if_vacant(self, group: Group) -> None:
        """An offsets-only group (never joined) disappears with its last offset."""
        if (
            group.is_(GroupState.EMPTY)
            and not group.offsets
            and not group.members
            and not group.pending_members
            and group.generation_id == 0
            and group.protocol_type is None
        ):
            self.groups.pop(group.group_id, None)

    # --------------------------------------------------------------- records

    def group_record(self, group: Group, assignments: dict[str, bytes] | None = None) -> Record:
        """The group-metadata record describing ``group`` now (with new assignments if given)."""
        members = [
            MemberMetadata(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                rebalance_timeout=m.rebalance_timeout_ms,
                session_timeout=m.session_timeout_ms,
                subscription=m.metadata(group.protocol_name),
                assignment=(assignments or {}).get(m.member_id, m.assignment),
            )
            for m in group.members.values()
        ]
        value = encode_group_metadata_value(
            protocol_type=group.protocol_type or "",
            generation=group.generation_id,
            protocol=group.protocol_name,
            leader=group.leader_id,
            members=members,
            current_state_timestamp=group.state_timestamp,
        )
        return encode_group_metadata_key(group.group_id), value

    def tombstones(
        self, group: Group, partitions: list[tuple[str, int]] | None = None
    ) -> list[Record]:
        """Tombstones for the given committed offsets (all when None)."""
        tps = list(group.offsets) if partitions is None else partitions
        return [(encode_offset_commit_key(group.group_id, t, p), None) for t, p in tps]
