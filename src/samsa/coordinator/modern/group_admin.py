"""What the other group APIs see of record-backed groups, where every type answers alike:
ListGroups entries, a describe's lookup and its not-found answer, DeleteGroups, and the
offset commits that name no member.

Shared because Kafka answers these the same way for consumer and streams groups:
a group is listed only by the coordinator of its partition, a describe of a
group this coordinator does not hold says so before anything type-specific,
only an empty group may be deleted (all its records tombstoned under its lock),
and an admin's or an old transactional client's commit is not checked against
the members.  What each type's describe and member checks say stays with it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Generic, Protocol, TypeVar

from samsa.coordinator.modern.record_groups import RecordGroup, RecordGroups
from samsa.errors import ErrorCode, KafkaError

Body = dict[str, Any]


class AdministeredGroup(RecordGroup[Any], Protocol):
    """What these views read of a group, beyond what its records build."""

    @property
    def state(self) -> str: ...

    @property
    def target(self) -> Mapping[str, Any]: ...


G = TypeVar("G", bound=AdministeredGroup)
M = TypeVar("M", bound=RecordGroups[Any, Any])


class ModernGroupAdmin(ABC, Generic[G, M]):
    """Read views and deletion of one type's groups, for the coordinator façade."""

    group_type: str
    """ListGroups' GroupType."""
    protocol_type: str
    """ListGroups' ProtocolType."""

    def __init__(self, manager: M) -> None:
        self.manager = manager

    @abstractmethod
    def _removal(self, group: G) -> list[Any]:
        """The tombstones of every record of ``group`` (the type's order)."""

    def _listed_state(self, group: G) -> str:
        """The group's state as ListGroups' StatesFilter names it."""
        return group.state.lower()

    def get(self, group_id: str) -> G | None:
        group: G | None = self.manager.groups.get(group_id)
        return group

    def has_members(self, group_id: str) -> bool:
        """Whether a group of that id is in use (its offsets do not expire)."""
        group = self.get(group_id)
        return group is not None and bool(group.members)

    @staticmethod
    def commits_unchecked(
        group: G, member_id: str, member_epoch: int, instance_id: str | None, transactional: bool
    ) -> bool:
        """Kafka's validateOffsetCommit: a commit without a member epoch is an admin's,
        allowed only while nobody consumes; a transactional one that names no member at
        all (TxnOffsetCommit before v3, as aiokafka sends it) is not checked against the
        members."""
        if member_epoch < 0 and not group.members:
            return True
        return transactional and member_epoch == -1 and not member_id and instance_id is None

    def listed(self, states: set[str] | None) -> list[Body]:
        out = []
        for group in self.manager.groups.values():
            if group.partition not in self.manager.registry.owned:
                continue
            if states is not None and self._listed_state(group) not in states:
                continue
            out.append(
                {
                    "group_id": group.group_id,
                    "protocol_type": self.protocol_type,
                    "group_state": group.state,
                    "group_type": self.group_type,
                }
            )
        return out

    def _to_describe(self, group_id: str) -> tuple[G | None, Body]:
        """The group a describe answers for; else None and the error fields of the answer
        (the coordinator's error first, then GROUP_ID_NOT_FOUND with Kafka's message)."""
        err = self.manager.registry.check(group_id)
        group = self.get(group_id)
        if err is None and group is not None:
            return group, {}
        code = err or ErrorCode.GROUP_ID_NOT_FOUND
        return None, {
            "error_code": int(code),
            "error_message": f"Group {group_id} not found."
            if code is ErrorCode.GROUP_ID_NOT_FOUND
            else None,
            "group_id": group_id,
        }

    async def delete(self, group_id: str) -> ErrorCode | None:
        """Tombstone an empty group; None if ``group_id`` is not one of this type."""
        group = self.get(group_id)
        if group is None:
            return None
        async with self.manager.lock(group_id):
            if group.members:
                return ErrorCode.NON_EMPTY_GROUP
            try:
                await self.manager.write(group.partition, self._removal(group))
            except KafkaError as exc:
                return exc.code
        return ErrorCode.NONE
