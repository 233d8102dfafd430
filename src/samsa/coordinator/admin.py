"""ListGroups, DescribeGroups and DeleteGroups: what admin tools see of groups.

These never change membership; DeleteGroups only removes groups that have no
members (NON_EMPTY_GROUP otherwise), writing tombstones for the group record
and every committed offset so the deletion survives a restart.
"""

from __future__ import annotations

from dataclasses import dataclass

from samsa.coordinator.group import GroupState
from samsa.coordinator.rebalance import Rebalancer
from samsa.coordinator.registry import GroupRegistry
from samsa.coordinator.store import Record, commit_error
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.internal_records.group_records import encode_group_metadata_key

S = GroupState
GROUP_TYPE = "classic"


@dataclass(frozen=True, slots=True)
class ListedGroup:
    group_id: str
    protocol_type: str
    state: str
    group_type: str = GROUP_TYPE


@dataclass(frozen=True, slots=True)
class DescribedMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class DescribedGroup:
    error: ErrorCode
    group_id: str
    state: str = S.DEAD.value
    protocol_type: str = ""
    protocol_data: str = ""
    members: tuple[DescribedMember, ...] = ()


class GroupAdmin:
    """Read-mostly group administration."""

    def __init__(self, registry: GroupRegistry, rebalancer: Rebalancer) -> None:
        self.registry = registry
        self.rebalancer = rebalancer

    def list(
        self, states: list[str] | None = None, types: list[str] | None = None
    ) -> tuple[ErrorCode, list[ListedGroup]]:
        """Groups this coordinator owns, filtered by state and type (both case-insensitive)."""
        wanted_states = {s.lower() for s in states} if states else None
        wanted_types = {t.lower() for t in types} if types else None
        if wanted_types is not None and GROUP_TYPE not in wanted_types:
            return ErrorCode.NONE, []
        out = []
        for group in self.registry.groups.values():
            if group.partition not in self.registry.owned or group.is_(S.DEAD):
                continue
            if wanted_states is not None and group.state.value.lower() not in wanted_states:
                continue
            out.append(ListedGroup(group.group_id, group.protocol_type or "", group.state.value))
        error = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS if self.registry.loading else ErrorCode.NONE
        return error, out

    def describe(self, group_id: str) -> DescribedGroup:
        err = self.registry.check(group_id, allow_empty=True)
        if err is not None:
            return DescribedGroup(err, group_id, state="")
        group = self.registry.groups.get(group_id)
        if group is None:
            return DescribedGroup(ErrorCode.NONE, group_id)
        stable = group.is_(S.STABLE)
        members = tuple(
            DescribedMember(
                m.member_id,
                m.group_instance_id,
                m.client_id,
                m.client_host,
                m.metadata(group.protocol_name) if stable else b"",
                m.assignment if stable else b"",
            )
            for m in group.members.values()
        )
        return DescribedGroup(
            ErrorCode.NONE,
            group_id,
            group.state.value,
            group.protocol_type or "",
            (group.protocol_name or "") if stable else "",
            members,
        )

    async def delete(self, group_id: str) -> ErrorCode:
        err = self.registry.check(group_id, allow_empty=True)
        if err is not None:
            return err
        group = self.registry.groups.get(group_id)
        if group is None or group.is_(S.DEAD):
            return ErrorCode.GROUP_ID_NOT_FOUND
        if not group.is_(S.EMPTY) or group.pending_members:
            return ErrorCode.NON_EMPTY_GROUP
        records: list[Record] = self.registry.tombstones(group)
        records.append((encode_group_metadata_key(group_id), None))
        # Dead before the write, as in Kafka: a JoinGroup racing the delete is
        # refused (COORDINATOR_NOT_AVAILABLE, retriable) instead of joining a
        # group whose tombstones are on their way.
        self.rebalancer.cancel_all(group)
        self.rebalancer.transition(group, S.DEAD)
        try:
            await self.registry.write(group.partition, records)
        except KafkaError as exc:
            group.state = S.EMPTY
            return commit_error(exc.code)
        self.registry.groups.pop(group_id, None)
        return ErrorCode.NONE
