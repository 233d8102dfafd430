"""Groups kept as records in ``__consumer_offsets``: replay, the write path, the
per-group locks, and member deadlines that run out into fencing.

Shared because consumer and streams groups keep their state the same way: every
change is a record written to ``__consumer_offsets`` and only then applied by
replay -- the same code that rebuilds a group when its partition is loaded --
so memory never runs ahead of the log; every member has a session (and, while
revoking, a rebalance timeout) whose end fences it under the group's lock; a
load gives every member a fresh session, as Kafka does on fail-over.  What
differs stays with each type: its records (``record_family``), the group they
build, what fencing a member writes, and when a member counts as revoking.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Coroutine, Mapping
from typing import Any, Generic, Protocol, TypeVar

from samsa.coordinator.modern.timers import Deadline, MemberTimers
from samsa.coordinator.registry import GroupRegistry
from samsa.errors import DecodeError, KafkaError
from samsa.protocol.internal_records.modern_group_records import (
    GroupRecordFamily,
    GroupRecordKey,
)

log = logging.getLogger("samsa.coordinator")

K = TypeVar("K", bound=GroupRecordKey)
K_contra = TypeVar("K_contra", bound=GroupRecordKey, contravariant=True)


class RecordGroup(Protocol[K_contra]):
    """A group as its records build it."""

    @property
    def group_id(self) -> str: ...

    @property
    def partition(self) -> int: ...

    @property
    def members(self) -> Mapping[str, Any]: ...

    @property
    def deleted(self) -> bool:
        """Set by replaying the tombstone of the group's epoch record."""
        ...

    def replay(self, key: K_contra, value: dict[str, Any] | None) -> None: ...


G = TypeVar("G", bound=RecordGroup[Any])


class RecordGroups(ABC, Generic[G, K]):
    """Every group of one type in the ``__consumer_offsets`` partitions this
    coordinator owns, with its members' deadlines."""

    record_family: GroupRecordFamily[K]
    """The type's records (key versions and value schemas)."""

    def __init__(self, registry: GroupRegistry) -> None:
        self.registry = registry
        self.groups: dict[str, G] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self.timers = MemberTimers(self._expired)
        self._tasks: set[asyncio.Task[None]] = set()

    # -------------------------------------------- what each type says

    @abstractmethod
    def _new_group(self, group_id: str, partition: int) -> G:
        """An empty group, for its first record to fill in."""

    @abstractmethod
    def schedule(self, group_id: str, member: Any) -> None:
        """Restart a member's deadlines after it heartbeats (or after a load)."""

    @abstractmethod
    def _revoking(self, member: Any) -> bool:
        """Whether the member still has to give up what the target moved elsewhere."""

    @abstractmethod
    async def remove_member(self, group: G, member_id: str) -> None:
        """Fence a member: tombstone its records (and whatever else the type writes)."""

    def _log_fenced(self, group_id: str, member_id: str, kind: Deadline) -> None:
        log.info(
            "group %s: member %s missed its %s deadline, fencing it",
            group_id,
            member_id,
            kind.value,
        )

    def _group_gone(self, group_id: str) -> None:
        """A group is gone (deleted, unloaded): stop what runs for it."""
        self.timers.cancel_group(group_id)

    # ------------------------------------------------------------ records

    def replay_raw(self, key: bytes, value: bytes | None) -> None:
        """Load one record of this type (as the registry hands it on)."""
        family = self.record_family
        try:
            decoded = family.decode_key(key)
            body = None if value is None else family.decode_value(decoded.record_type, value)
        except DecodeError as exc:
            log.warning("skipping undecodable %s record: %s", family.name, exc)
            return
        self.apply((decoded, body))

    def apply(self, change: tuple[K, dict[str, Any] | None]) -> None:
        key, value = change
        group = self.groups.get(key.group_id)
        if group is None:
            if value is None:
                return
            group = self._new_group(key.group_id, self.registry.partition_for(key.group_id))
            self.groups[key.group_id] = group
        group.replay(key, value)
        if group.deleted:
            del self.groups[key.group_id]
            self._group_gone(key.group_id)

    async def write(self, partition: int, changes: list[tuple[K, dict[str, Any] | None]]) -> None:
        """Append the changes durably, then apply them; raises KafkaError."""
        if not changes:
            return
        family = self.record_family
        encoded = [
            (key.encode(), None if value is None else family.encode_value(key.record_type, value))
            for key, value in changes
        ]

        def apply() -> None:
            for change in changes:
                self.apply(change)

        await self.registry.write(partition, encoded, apply=apply)

    def lock(self, group_id: str) -> asyncio.Lock:
        return self._locks.setdefault(group_id, asyncio.Lock())

    # -------------------------------------------------------------- timers

    def _expired(self, group_id: str, member_id: str, kind: Deadline) -> None:
        self._spawn(self._fence_expired(group_id, member_id, kind))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _fence_expired(self, group_id: str, member_id: str, kind: Deadline) -> None:
        async with self.lock(group_id):
            group = self.groups.get(group_id)
            member = None if group is None else group.members.get(member_id)
            if group is None or member is None or group.partition not in self.registry.owned:
                return
            if kind is Deadline.REVOCATION and not self._revoking(member):
                return
            self._log_fenced(group_id, member_id, kind)
            try:
                await self.remove_member(group, member_id)
            except KafkaError as exc:
                log.warning("group %s: could not fence member %s: %s", group_id, member_id, exc)

    # ---------------------------------------------------------- partitions

    def loaded(self, partition: int) -> None:
        """After a load: every member gets a fresh session (as Kafka does on fail-over)."""
        for group in self.groups.values():
            if group.partition == partition:
                for member in group.members.values():
                    self.schedule(group.group_id, member)

    def unload(self, partition: int) -> None:
        for group_id in [g for g, grp in self.groups.items() if grp.partition == partition]:
            del self.groups[group_id]
            self._group_gone(group_id)

    def shutdown(self) -> None:
        self.timers.cancel_all()
