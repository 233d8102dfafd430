"""ConsumerGroupHeartbeat: joining, reconciling and leaving KIP-848 groups.

Each heartbeat runs under its group's lock: it reads the group, computes the
records of every change (member metadata, group epoch, target assignment, the
member's current assignment), writes them to ``__consumer_offsets`` and only
then applies them by replay, so memory never runs ahead of the log and a
reloaded coordinator rebuilds the same state.

Members are fenced after ``group.consumer.session.timeout.ms`` without a
heartbeat, and after their rebalance timeout if they do not revoke partitions
the target moved elsewhere.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from samsa.coordinator.consumer import records
from samsa.coordinator.consumer.assignors import ASSIGNORS
from samsa.coordinator.consumer.config import ConsumerGroupConfig
from samsa.coordinator.consumer.group import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroup,
    ConsumerMember,
    MemberState,
)
from samsa.coordinator.consumer.heartbeat_request import (
    GroupError,
    check_epoch,
    error_response,
    validate,
    with_request,
)
from samsa.coordinator.consumer.reconciliation import reconcile
from samsa.coordinator.consumer.subscription import group_topics
from samsa.coordinator.consumer.timers import Deadline, MemberTimers
from samsa.coordinator.registry import GroupRegistry
from samsa.coordinator.store import group_store_error
from samsa.errors import DecodeError, ErrorCode, KafkaError
from samsa.protocol.internal_records.consumer_group_records import (
    assignment_from_wire,
    assignment_to_wire,
    decode_consumer_group_key,
    decode_consumer_group_value,
    encode_consumer_group_value,
)
from samsa.protocol.internal_records.group_records import encode_group_metadata_key

log = logging.getLogger("samsa.coordinator")

Body = dict[str, Any]
TopicLookup = Callable[[], Mapping[str, tuple[bytes, int]]]


class ConsumerGroupManager:
    """Every KIP-848 group of the ``__consumer_offsets`` partitions this coordinator owns."""

    def __init__(
        self, registry: GroupRegistry, config: ConsumerGroupConfig, topics: TopicLookup
    ) -> None:
        self.registry = registry
        self.config = config
        self.topics = topics
        self.groups: dict[str, ConsumerGroup] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self.timers = MemberTimers(self._expired)
        self._tasks: set[asyncio.Task[None]] = set()
        registry.replay_other = self.replay_raw

    # ------------------------------------------------------------ records

    def replay_raw(self, key: bytes, value: bytes | None) -> None:
        """Load one consumer-group record (called by the registry for key versions 3-8)."""
        try:
            decoded = decode_consumer_group_key(key)
            body = (
                None if value is None else decode_consumer_group_value(decoded.record_type, value)
            )
        except DecodeError as exc:
            log.warning("skipping undecodable consumer-group record: %s", exc)
            return
        self._apply((decoded, body))

    def _apply(self, change: records.Change) -> None:
        key, value = change
        group = self.groups.get(key.group_id)
        if group is None:
            if value is None:
                return
            group = ConsumerGroup(key.group_id, self.registry.partition_for(key.group_id))
            self.groups[key.group_id] = group
        group.replay(key, value)
        if group.deleted:
            del self.groups[key.group_id]
            self.timers.cancel_group(key.group_id)

    async def write(self, partition: int, changes: list[records.Change]) -> None:
        """Append the changes durably, then apply them; raises KafkaError."""
        if not changes:
            return
        encoded = [
            (
                key.encode(),
                None if value is None else encode_consumer_group_value(key.record_type, value),
            )
            for key, value in changes
        ]

        def apply() -> None:
            for change in changes:
                self._apply(change)

        await self.registry.write(partition, encoded, apply=apply)

    def lock(self, group_id: str) -> asyncio.Lock:
        return self._locks.setdefault(group_id, asyncio.Lock())

    # ----------------------------------------------------------- heartbeat

    async def heartbeat(
        self, request: Body, version: int, *, client_id: str = "", client_host: str = ""
    ) -> Body:
        """ConsumerGroupHeartbeat (68)."""
        try:
            validate(request, version, self.config)
            group_id = request["group_id"]
            err = self.registry.check(group_id)
            if err is not None:
                raise GroupError(err)
            async with self.lock(group_id):
                return await self._heartbeat(request, version, client_id, client_host)
        except GroupError as exc:
            return error_response(exc.code, exc.message)
        except KafkaError as exc:
            return error_response(group_store_error(exc.code), None)

    async def _heartbeat(self, req: Body, version: int, client_id: str, client_host: str) -> Body:
        group_id: str = req["group_id"]
        epoch: int = req["member_epoch"]
        member_id: str = req["member_id"] or ""
        if not member_id:  # v0: the coordinator names new members
            member_id = uuid.uuid4().hex
        partition = self.registry.partition_for(group_id)
        group = self.groups.get(group_id)
        if epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return await self._leave(group, member_id, epoch)
        changes: list[records.Change] = []
        if group is None:
            if epoch != 0:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"group {group_id} has no members")
            await self._take_over_classic(group_id, partition)
            group = ConsumerGroup(group_id, partition)
        members = dict(group.members)
        target = dict(group.target)
        member = members.get(member_id)
        subscription_changed = False
        if epoch == 0:
            member, replaced = self._joining(group, member, member_id, req.get("instance_id"))
            if replaced is not None:
                changes += records.member_removal(group_id, replaced.member_id)
                changes.append(
                    records.target_member(group_id, member_id, target.get(replaced.member_id, {}))
                )
                target[member_id] = target.pop(replaced.member_id, {})
                members.pop(replaced.member_id)
            subscription_changed = member_id not in group.members and replaced is None
        else:
            if member is None:
                raise GroupError(
                    ErrorCode.UNKNOWN_MEMBER_ID, f"member {member_id} is not in group {group_id}"
                )
            check_epoch(member, epoch, req.get("topic_partitions"))
        updated = with_request(member, req, client_id, client_host)
        subscription_changed |= updated.subscription() != member.subscription()
        if updated.metadata_value() != member.metadata_value() or member_id not in group.members:
            changes.append(records.member_metadata(group_id, updated))
        members[member_id] = updated

        per_member, topics = group_topics(members.values(), self.topics())
        group_epoch = group.group_epoch
        if subscription_changed or topics != group.topics or group_epoch == 0:
            group_epoch += 1
            if topics != group.topics:
                changes.append(records.partition_metadata(group_id, topics))
            changes.append(records.group_epoch(group_id, group_epoch))
        assignment_epoch = group.assignment_epoch
        if group_epoch > assignment_epoch:
            assignor = ASSIGNORS[self._assignor(members.values())]
            new_target = assignor(per_member, topics, target)
            for mid in members:
                if new_target.get(mid, {}) != target.get(mid, {}) or mid not in group.target:
                    changes.append(records.target_member(group_id, mid, new_target.get(mid, {})))
            changes.append(records.target_epoch(group_id, group_epoch))
            target, assignment_epoch = new_target, group_epoch

        owned_req = req.get("topic_partitions")
        owned = None if owned_req is None else assignment_from_wire(owned_req)

        def owned_elsewhere(topic_id: bytes, p: int) -> bool:
            for other in members.values():
                if other.member_id != member_id and (
                    p in other.assigned.get(topic_id, ())
                    or p in other.pending_revocation.get(topic_id, ())
                ):
                    return True
            return False

        reconciled = reconcile(
            updated, assignment_epoch, target.get(member_id, {}), owned, owned_elsewhere
        )
        fresh = member_id not in group.members
        if fresh or reconciled is not updated:
            changes.append(records.current_assignment(group_id, reconciled))
        # Decided before the write: replaying it updates ``member`` in place.
        send_assignment = (
            epoch == 0
            or reconciled.member_epoch != epoch
            or reconciled.assigned != member.assigned
            or (owned is not None and owned != reconciled.assigned)
        )
        await self.write(partition, changes)
        self._schedule(group_id, reconciled)
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "member_id": member_id,
            "member_epoch": reconciled.member_epoch,
            "heartbeat_interval_ms": self.config.heartbeat_interval_ms,
            "assignment": (
                {"topic_partitions": assignment_to_wire(reconciled.assigned)}
                if send_assignment
                else None
            ),
        }

    def _joining(
        self,
        group: ConsumerGroup,
        member: ConsumerMember | None,
        member_id: str,
        instance_id: str | None,
    ) -> tuple[ConsumerMember, ConsumerMember | None]:
        """The member joining with epoch 0, and the static member it replaces, if any."""
        if instance_id is not None:
            previous = group.member_by_instance(instance_id)
            if previous is not None and previous.member_id != member_id:
                if previous.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                    raise GroupError(
                        ErrorCode.UNRELEASED_INSTANCE_ID,
                        f"static member {instance_id} is still in use by {previous.member_id}",
                    )
                # The same instance is back under a new member id: it takes over the
                # old member's subscription and target, so nothing is reassigned.
                joined = replace(
                    previous,
                    member_id=member_id,
                    member_epoch=0,
                    previous_member_epoch=0,
                    state=MemberState.STABLE,
                    assigned={},
                    pending_revocation={},
                )
                return joined, previous
        if member is not None:
            return member, None
        if len(group.members) >= self.config.max_size:
            raise GroupError(
                ErrorCode.GROUP_MAX_SIZE_REACHED,
                f"group {group.group_id} has reached its maximum size",
            )
        return ConsumerMember(member_id, instance_id=instance_id), None

    def assignor_of(self, group: ConsumerGroup) -> str:
        return self._assignor(group.members.values())

    def _assignor(self, members: Any) -> str:
        """The assignor most members ask for, else the first configured (Kafka's rule)."""
        asked = Counter(m.server_assignor for m in members if m.server_assignor)
        if asked:
            return asked.most_common(1)[0][0]
        return self.config.assignors[0]

    async def _take_over_classic(self, group_id: str, partition: int) -> None:
        """A classic group of this id: refused while it has members, upgraded when empty
        (its group record is tombstoned; committed offsets stay)."""
        classic = self.registry.groups.get(group_id)
        if classic is None:
            return
        if classic.members or classic.pending_members:
            raise GroupError(
                ErrorCode.GROUP_ID_NOT_FOUND, f"group {group_id} is not a consumer group"
            )
        if classic.generation_id > 0 or classic.protocol_type is not None:
            log.info("upgrading empty classic group %s to the consumer protocol", group_id)
            await self.registry.write(partition, [(encode_group_metadata_key(group_id), None)])

    async def _leave(self, group: ConsumerGroup | None, member_id: str, epoch: int) -> Body:
        member = None if group is None else group.members.get(member_id)
        if group is None or member is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"member {member_id} is not in the group")
        if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if member.instance_id is None:
                raise GroupError(ErrorCode.INVALID_REQUEST, "only static members leave with -2")
            # Kept with its partitions until the session times out or the instance returns.
            left = replace(
                member,
                member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                previous_member_epoch=member.member_epoch,
            )
            await self.write(group.partition, [records.current_assignment(group.group_id, left)])
        else:
            await self.remove_member(group, member_id)
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "member_id": member_id,
            "member_epoch": epoch,
            "heartbeat_interval_ms": 0,
            "assignment": None,
        }

    async def remove_member(self, group: ConsumerGroup, member_id: str) -> None:
        """Fence a member: its records are tombstoned and the group epoch bumps, so the
        next heartbeat computes a target without it."""
        changes = records.member_removal(group.group_id, member_id)
        changes.append(records.group_epoch(group.group_id, group.group_epoch + 1))
        await self.write(group.partition, changes)
        self.timers.cancel(group.group_id, member_id)

    # -------------------------------------------------------------- timers

    def _schedule(self, group_id: str, member: ConsumerMember) -> None:
        """Restart the session; start the revocation deadline when the member must revoke
        (and drop it once it has)."""
        member_id = member.member_id
        self.timers.start(group_id, member_id, Deadline.SESSION, self.config.session_timeout_ms)
        if member.state is not MemberState.UNREVOKED_PARTITIONS:
            self.timers.cancel(group_id, member_id, Deadline.REVOCATION)
        elif not self.timers.running(group_id, member_id, Deadline.REVOCATION):
            timeout_ms = member.rebalance_timeout_ms
            if timeout_ms <= 0:
                timeout_ms = self.config.session_timeout_ms
            self.timers.start(group_id, member_id, Deadline.REVOCATION, timeout_ms)

    def _expired(self, group_id: str, member_id: str, kind: Deadline) -> None:
        task = asyncio.ensure_future(self._fence_expired(group_id, member_id, kind))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _fence_expired(self, group_id: str, member_id: str, kind: Deadline) -> None:
        async with self.lock(group_id):
            group = self.groups.get(group_id)
            member = None if group is None else group.members.get(member_id)
            if group is None or member is None or group.partition not in self.registry.owned:
                return
            if kind is Deadline.REVOCATION and member.state is not (
                MemberState.UNREVOKED_PARTITIONS
            ):
                return
            log.info(
                "group %s: member %s missed its %s deadline, fencing it",
                group_id,
                member_id,
                kind.value,
            )
            try:
                await self.remove_member(group, member_id)
            except KafkaError as exc:
                log.warning("group %s: could not fence member %s: %s", group_id, member_id, exc)

    def loaded(self, partition: int) -> None:
        """After a load: every member gets a fresh session (as Kafka does on fail-over)."""
        for group in self.groups.values():
            if group.partition == partition:
                for member in group.members.values():
                    self._schedule(group.group_id, member)

    def unload(self, partition: int) -> None:
        for group_id in [g for g, grp in self.groups.items() if grp.partition == partition]:
            self.timers.cancel_group(group_id)
            del self.groups[group_id]

    def shutdown(self) -> None:
        self.timers.cancel_all()
