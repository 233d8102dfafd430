"""OffsetCommit, OffsetFetch, OffsetDelete and offset expiry.

Offsets change only by replaying their ``__consumer_offsets`` records (see
``GroupRegistry.write``), so a commit is acknowledged only once its records are
durable, and a reload reproduces exactly what was acknowledged.

Commits are validated like Kafka's: a generation >= 0, a member id or an
instance id means "a group member is committing" and must match the current
generation; otherwise the commit is a standalone (admin/simple consumer) one,
allowed only while the group has no members.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from samsa.coordinator.group import CommittedOffset, Group, GroupState
from samsa.coordinator.rebalance import Rebalancer
from samsa.coordinator.registry import GroupRegistry
from samsa.coordinator.store import Record, commit_error
from samsa.errors import ErrorCode, KafkaError
from samsa.eventloop.failure_log import FailureLog
from samsa.protocol.consumer_protocol import PROTOCOL_TYPE
from samsa.protocol.internal_records.group_records import (
    encode_offset_commit_key,
    encode_offset_commit_value,
)

log = logging.getLogger("samsa.coordinator")

S = GroupState
TopicPartition = tuple[str, int]
PartitionExists = Callable[[str, int], bool]


class OffsetToCommit(NamedTuple):
    """One partition's offset in an OffsetCommit request (a NamedTuple: cheap per commit)."""

    topic: str
    partition: int
    offset: int
    leader_epoch: int
    metadata: str | None


@dataclass(frozen=True, slots=True)
class FetchedOffset:
    topic: str
    partition: int
    offset: int
    leader_epoch: int
    metadata: str
    error: ErrorCode


class OffsetManager:
    """Committed offsets of every group this coordinator owns."""

    def __init__(
        self, registry: GroupRegistry, rebalancer: Rebalancer, partition_exists: PartitionExists
    ) -> None:
        self.registry = registry
        self.rebalancer = rebalancer
        self.partition_exists = partition_exists
        self._expiry_failures = FailureLog(log, "offset expiry")
        self.in_use_elsewhere: Callable[[str], bool] = lambda group_id: False
        """True for a group id whose offsets a KIP-848 group with members is using."""

    # ------------------------------------------------------------ commit

    def admit(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        offsets: list[OffsetToCommit],
        *,
        transactional: bool = False,
    ) -> tuple[dict[TopicPartition, ErrorCode], list[OffsetToCommit] | None]:
        """What a commit (plain or transactional) may write: the offsets of known
        partitions, and the error of every other one; None instead of the offsets
        when the member may not commit at all."""
        results: dict[TopicPartition, ErrorCode] = {}
        valid: list[OffsetToCommit] = []
        for o in offsets:
            if self.partition_exists(o.topic, o.partition):
                valid.append(o)
            else:
                results[(o.topic, o.partition)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        err = self._validate_commit(
            group_id, generation_id, member_id, group_instance_id, transactional
        )
        if err is not None:
            results.update({(o.topic, o.partition): err for o in valid})
            return results, None
        return results, valid

    async def commit(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        retention_time_ms: int,
        offsets: list[OffsetToCommit],
    ) -> dict[TopicPartition, ErrorCode]:
        """Commit offsets; returns the error of every requested partition."""
        results, valid = self.admit(group_id, generation_id, member_id, group_instance_id, offsets)
        if valid is None:
            return results
        group = self.registry.get_or_create(group_id)
        member = group.members.get(member_id)
        if member is not None:
            self.rebalancer.schedule_heartbeat(group, member)
        now = self.registry.time_ms()
        expire = now + retention_time_ms if retention_time_ms >= 0 else -1
        records: list[Record] = []
        committed: list[tuple[TopicPartition, CommittedOffset]] = []
        limit = self.registry.config.offset_metadata_max_bytes
        for o in valid:
            metadata = o.metadata or ""
            if len(metadata.encode()) > limit:
                results[(o.topic, o.partition)] = ErrorCode.OFFSET_METADATA_TOO_LARGE
                continue
            key = encode_offset_commit_key(group_id, o.topic, o.partition)
            value = encode_offset_commit_value(o.offset, o.leader_epoch, metadata, now, expire)
            records.append((key, value))
            # A v1 value (written when an expire time is set) has no leader epoch.
            epoch = o.leader_epoch if expire == -1 else -1
            committed.append(
                ((o.topic, o.partition), CommittedOffset(o.offset, epoch, metadata, now, expire))
            )
            results[(o.topic, o.partition)] = ErrorCode.NONE

        def apply() -> None:
            # What replaying ``records`` would do, without decoding them again.
            offsets = self.registry.get_or_create(group_id).offsets
            for tp, offset in committed:
                offsets[tp] = offset

        if records:
            try:
                await self.registry.write(group.partition, records, apply=apply)
            except KafkaError as exc:
                code = commit_error(exc.code)
                for o in valid:
                    if results[(o.topic, o.partition)] is ErrorCode.NONE:
                        results[(o.topic, o.partition)] = code
        self.registry.drop_if_vacant(group)
        return results

    def _validate_commit(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        instance_id: str | None,
        transactional: bool = False,
    ) -> ErrorCode | None:
        """Kafka's ClassicGroup.validateOffsetCommit.

        A transactional commit that names no member (TxnOffsetCommit v0-2 has no
        member fields; aiokafka sends them so) is not checked against the
        members, and the group's state does not matter to it: the transaction
        coordinator, not the group, fences a stale producer."""
        err = self.registry.check(group_id, allow_empty=True)
        if err is not None:
            return err
        group = self.registry.groups.get(group_id)
        if group is None:
            return None if generation_id < 0 else ErrorCode.ILLEGAL_GENERATION
        if group.is_(S.DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if generation_id < 0 and group.is_(S.EMPTY):
            return None
        if generation_id >= 0 or member_id or instance_id is not None:
            err = group.validate_member(member_id, instance_id)
            if err is not None:
                return err
            if generation_id != group.generation_id:
                return ErrorCode.ILLEGAL_GENERATION
        elif not transactional and not group.is_(S.EMPTY):
            # Someone outside the group commits while it has members: Kafka refuses.
            return ErrorCode.UNKNOWN_MEMBER_ID
        if not transactional and group.is_(S.COMPLETING_REBALANCE):
            return ErrorCode.REBALANCE_IN_PROGRESS
        return None

    # ------------------------------------------------------------- fetch

    def fetch(
        self, group_id: str, partitions: list[TopicPartition] | None
    ) -> tuple[ErrorCode, list[FetchedOffset]]:
        """Committed offsets of the requested partitions, or of all of them when None."""
        err = self.registry.check(group_id, allow_empty=True)
        if err is not None:
            return err, []
        group = self.registry.groups.get(group_id)
        committed = group.offsets if group is not None else {}
        wanted = sorted(committed) if partitions is None else partitions
        out = []
        for tp in wanted:
            c: CommittedOffset | None = committed.get(tp)
            if c is None:
                out.append(FetchedOffset(tp[0], tp[1], -1, -1, "", ErrorCode.NONE))
            else:
                out.append(
                    FetchedOffset(
                        tp[0], tp[1], c.offset, c.leader_epoch, c.metadata, ErrorCode.NONE
                    )
                )
        return ErrorCode.NONE, out

    # ------------------------------------------------------------ delete

    async def delete(
        self, group_id: str, partitions: list[TopicPartition]
    ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        """OffsetDelete: drop offsets of topics the group does not consume."""
        err = self.registry.check(group_id)
        if err is not None:
            return err, {}
        group = self.registry.groups.get(group_id)
        if group is None or group.is_(S.DEAD):
            return ErrorCode.GROUP_ID_NOT_FOUND, {}
        results: dict[TopicPartition, ErrorCode] = {}
        if group.is_(S.EMPTY):
            deletable = list(partitions)
        elif group.protocol_type == PROTOCOL_TYPE:
            subscribed = group.subscribed_topics()
            deletable = []
            for tp in partitions:
                if subscribed is None or tp[0] in subscribed:
                    results[tp] = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
                else:
                    deletable.append(tp)
        else:
            return ErrorCode.NON_EMPTY_GROUP, {}
        present = [tp for tp in deletable if tp in group.offsets]
        try:
            await self._remove(group, present)
        except KafkaError as exc:
            return commit_error(exc.code), {}
        results.update({tp: ErrorCode.NONE for tp in deletable})
        return ErrorCode.NONE, results

    async def _remove(self, group: Group, partitions: list[TopicPartition]) -> None:
        """Tombstone offsets; an Empty group left without offsets dies (and is tombstoned too)."""
        records = self.registry.tombstones(group, partitions)
        dies = (
            group.is_(S.EMPTY)
            and not group.pending_members
            and not (set(group.offsets) - set(partitions))
        )
        if dies and (group.generation_id > 0 or group.protocol_type is not None):
            records.append((self.registry.group_record(group)[0], None))
        if records:
            await self.registry.write(group.partition, records)
        if dies:
            self.rebalancer.cancel_all(group)
            group.state = S.DEAD
            self.registry.groups.pop(group.group_id, None)

    async def delete_partitions(self, partitions: set[TopicPartition]) -> int:
        """Drop every group's offsets for deleted topic partitions (Kafka's handleDeletedPartitions)."""
        removed = 0
        for group in list(self.registry.groups.values()):
            if group.partition not in self.registry.owned:
                continue
            gone = [tp for tp in group.offsets if tp in partitions]
            if not gone:
                continue
            try:
                await self._remove(group, gone)
            except KafkaError as exc:
                log.warning(
                    "group %s: could not drop offsets of deleted partitions: %s",
                    group.group_id,
                    exc,
                )
                continue
            removed += len(gone)
        return removed

    # ------------------------------------------------------------ expire

    async def expire(self, now_ms: int) -> int:
        """Tombstone offsets past ``offsets.retention.minutes``; returns how many expired.

        Each group on its own: one group's failure is logged once and the
        others still expire (failure_log); it is retried on the next pass."""
        retention = self.registry.config.offsets_retention_ms
        total = 0
        for group in list(self.registry.groups.values()):
            if group.partition not in self.registry.owned or self.in_use_elsewhere(group.group_id):
                continue
            name = f"group {group.group_id}"
            try:
                total += await self._expire_group(group, now_ms, retention)
            except Exception as exc:
                self._expiry_failures.failed(name, exc)
                continue
            self._expiry_failures.succeeded(name)
        return total

    async def _expire_group(self, group: Group, now_ms: int, retention_ms: int) -> int:
        expired = self._expired(group, now_ms, retention_ms)
        dies = (
            group.is_(S.EMPTY)
            and not group.pending_members
            and not (set(group.offsets) - set(expired))
        )
        if expired or dies:
            await self._remove(group, expired)
        return len(expired)

    def _expired(self, group: Group, now_ms: int, retention_ms: int) -> list[TopicPartition]:
        def is_expired(c: CommittedOffset, base: int) -> bool:
            if c.expire_timestamp >= 0:
                return now_ms >= c.expire_timestamp
            return now_ms - base >= retention_ms

        if group.protocol_type is None:
            # Standalone consumer: each offset ages from its own commit.
            return [tp for tp, c in group.offsets.items() if is_expired(c, c.commit_timestamp)]
        if group.is_(S.EMPTY):
            # Offsets of an Empty group age from when it became Empty.
            return [
                tp
                for tp, c in group.offsets.items()
                if is_expired(
                    c, group.state_timestamp if group.state_timestamp >= 0 else c.commit_timestamp
                )
            ]
        if group.is_(S.STABLE) and group.protocol_type == PROTOCOL_TYPE:
            subscribed = group.subscribed_topics()
            if subscribed is not None:
                return [
                    tp
                    for tp, c in group.offsets.items()
                    if tp[0] not in subscribed and is_expired(c, c.commit_timestamp)
                ]
        return []
