"""The rebalance engine: timers and the transitions between group states.

Kafka parks JoinGroup requests in a "join purgatory" until every known member
has rejoined or the rebalance timeout fires, and expires members whose
heartbeats stop.  Here the same happens with asyncio: a waiting request awaits
its member's future, and ``loop.call_later`` timers stand in for Kafka's
delayed operations.  Everything runs on the broker's single event loop, so no
locks are needed around group state — only writes to the store yield.

Timer callbacks always re-check that the group, member and generation they
were armed for are still current, because cancelling a timer from a state
change is easy to miss and a stale timer must never act.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from samsa.coordinator.group import Group, GroupState, JoinResult, Member, SyncResult
from samsa.coordinator.registry import GroupRegistry
from samsa.errors import ErrorCode, KafkaError

log = logging.getLogger("samsa.coordinator")

S = GroupState

# The first join of a new group waits at least this long, extended while more
# members keep arriving (Kafka's InitialDelayedJoin rule), even when
# group.initial.rebalance.delay.ms is 0.  Members started together reach the
# coordinator a few milliseconds apart; completing the first generation
# without the stragglers forces a second rebalance at once, and librdkafka
# rejoins at most once a second, so a 0 ms delay cost 0.5-2 s instead of
# saving time.  50 ms covers the spread seen with 10 confluent-kafka members.
MIN_INITIAL_JOIN_DELAY_MS = 50
TransitionListener = Callable[[str, GroupState, GroupState], None]


class Rebalancer:
    """Prepares and completes rebalances, expires members, and persists group snapshots."""

    def __init__(
        self, registry: GroupRegistry, on_transition: TransitionListener | None = None
    ) -> None:
        self.registry = registry
        self.config = registry.config
        self._on_transition = on_transition
        self._tasks: set[asyncio.Task[None]] = set()
        registry.on_member_loaded = lambda g, m: self.schedule_heartbeat(g, m)

    # ------------------------------------------------------------ utilities

    def transition(self, group: Group, new: GroupState) -> None:
        old = group.state
        group.transition(new, self.registry.time_ms())
        if self._on_transition is not None and old is not new:
            self._on_transition(group.group_id, old, new)

    def _later(self, delay_ms: int, callback: Callable[[], None]) -> asyncio.TimerHandle:
        return asyncio.get_running_loop().call_later(max(delay_ms, 0) / 1000, callback)

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run a background write; kept referenced so it is neither collected nor lost at shutdown."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Wait for background writes (shutdown, tests)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def cancel_all(self, group: Group) -> None:
        """Stop every timer of a group that is leaving memory (unload, delete)."""
        for timer in (group.join_timer, group.sync_timer, *group.pending_members.values()):
            if timer is not None:
                timer.cancel()
        group.join_timer = group.sync_timer = None
        for member in group.members.values():
            member.cancel_heartbeat()

    # ----------------------------------------------------------- heartbeats

    def schedule_heartbeat(
        self, group: Group, member: Member, timeout_ms: int | None = None
    ) -> None:
        """(Re)arm a member's session timer; every heartbeat, join, sync and commit calls this.

        Renewing only moves the deadline: a timer already set to fire no later
        re-arms itself for the remainder when it fires, so a member that
        heartbeats (or commits) thousands of times a second costs no timer
        churn.
        """
        loop = asyncio.get_running_loop()
        delay = member.session_timeout_ms if timeout_ms is None else timeout_ms
        deadline = loop.time() + max(delay, 0) / 1000
        member.session_deadline = deadline
        timer = member.heartbeat_timer
        if timer is not None and not timer.cancelled() and timer.when() <= deadline:
            return
        member.cancel_heartbeat()
        member.heartbeat_timer = loop.call_at(
            deadline, lambda: self._session_timer_fired(group, member)
        )

    def _session_timer_fired(self, group: Group, member: Member) -> None:
        member.heartbeat_timer = None
        loop = asyncio.get_running_loop()
        if member.session_deadline > loop.time():
            member.heartbeat_timer = loop.call_at(
                member.session_deadline, lambda: self._session_timer_fired(group, member)
            )
            return
        self._heartbeat_expired(group, member)

    def _heartbeat_expired(self, group: Group, member: Member) -> None:
        member.heartbeat_timer = None
        if group.members.get(member.member_id) is not member or group.is_(S.DEAD):
            return
        if (member.awaiting_join or member.awaiting_sync) and not member.is_new:
            # The member is waiting on us, not silent: the rebalance timeout bounds the wait.
            self.schedule_heartbeat(group, member)
            return
        log.info("group %s: member %s session expired", group.group_id, member.member_id)
        self.remove_member_and_update(group, member, "session timeout expired")

    def schedule_pending_expiry(self, group: Group, member_id: str, timeout_ms: int) -> None:
        """A MEMBER_ID_REQUIRED member that never comes back is forgotten after its session timeout."""

        def expire() -> None:
            if group.pending_members.pop(member_id, "gone") != "gone":
                self.try_complete_join(group)

        group.pending_members[member_id] = self._later(timeout_ms, expire)

    def remove_pending(self, group: Group, member_id: str) -> bool:
        if member_id not in group.pending_members:
            return False
        timer = group.pending_members.pop(member_id)
        if timer is not None:
            timer.cancel()
        return True

    # ------------------------------------------------------------ rebalance

    def remove_member_and_update(self, group: Group, member: Member, reason: str) -> None:
        """Drop a member (left, expired) and move the group along as Kafka does."""
        member.complete_join(JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member.member_id))
        member.complete_sync(SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        if group.is_(S.STABLE, S.COMPLETING_REBALANCE):
            self.maybe_prepare_rebalance(group, reason)
        elif group.is_(S.PREPARING_REBALANCE):
            self.try_complete_join(group)

    def maybe_prepare_rebalance(self, group: Group, reason: str) -> None:
        if group.can_rebalance:
            self.prepare_rebalance(group, reason)

    def prepare_rebalance(self, group: Group, reason: str) -> None:
        log.info("group %s: preparing rebalance: %s", group.group_id, reason)
        if group.is_(S.COMPLETING_REBALANCE):
            self._reset_and_propagate(group, ErrorCode.REBALANCE_IN_PROGRESS)
        if group.sync_timer is not None:
            group.sync_timer.cancel()
            group.sync_timer = None
        group.pending_sync.clear()
        was_empty = group.is_(S.EMPTY)
        self.transition(group, S.PREPARING_REBALANCE)
        if was_empty:
            delay = self.initial_delay_ms
            remaining = max(group.rebalance_timeout_ms - delay, 0)
            group.initial_delay_active = True
            group.new_member_added = False
            self._arm_initial_delay(group, delay, remaining)
        else:
            group.initial_delay_active = False
            gen = group.generation_id
            group.join_timer = self._later(
                group.rebalance_timeout_ms, lambda: self._join_timeout(group, gen)
            )
        self.try_complete_join(group)

    @property
    def initial_delay_ms(self) -> int:
        """``group.initial.rebalance.delay.ms``, but never below MIN_INITIAL_JOIN_DELAY_MS."""
        return max(self.config.group_initial_rebalance_delay_ms, MIN_INITIAL_JOIN_DELAY_MS)

    def _arm_initial_delay(self, group: Group, delay: int, remaining: int) -> None:
        """Kafka's InitialDelayedJoin: keep waiting while new members arrive, within the rebalance timeout."""

        def fire() -> None:
            group.join_timer = None
            if not group.is_(S.PREPARING_REBALANCE):
                return
            if group.new_member_added and remaining != 0:
                group.new_member_added = False
                next_delay = min(self.initial_delay_ms, remaining)
                self._arm_initial_delay(group, next_delay, max(remaining - delay, 0))
            else:
                # The delay is a minimum wait.  From here on the join completes as
                # a regular one does: once every member, including those still
                # answering MEMBER_ID_REQUIRED, has joined, or at the timeout.
                # Without this, with a 0 ms delay a member whose first JoinGroup
                # landed a moment late starts a second rebalance at once.
                group.initial_delay_active = False
                gen = group.generation_id
                group.join_timer = self._later(remaining, lambda: self._join_timeout(group, gen))
                self.try_complete_join(group)

        group.join_timer = self._later(delay, fire)

    def _join_timeout(self, group: Group, generation: int) -> None:
        group.join_timer = None
        if group.is_(S.PREPARING_REBALANCE) and group.generation_id == generation:
            self.complete_join(group)

    def try_complete_join(self, group: Group) -> None:
        if (
            group.is_(S.PREPARING_REBALANCE)
            and not group.initial_delay_active
            and group.all_members_joined()
        ):
            self.complete_join(group)

    def complete_join(self, group: Group) -> None:
        """End the join phase: drop who did not rejoin, start the next generation, answer everyone."""
        if group.join_timer is not None:
            group.join_timer.cancel()
            group.join_timer = None
        if group.is_(S.DEAD) or not group.is_(S.PREPARING_REBALANCE):
            return
        # Dynamic members that did not rejoin are gone; static ones keep their
        # place (and old metadata) because they are expected back under the
        # same group.instance.id — their session timeout decides.
        for member in [m for m in group.members.values() if not m.awaiting_join]:
            if member.group_instance_id is None:
                log.info(
                    "group %s: member %s did not rejoin in time", group.group_id, member.member_id
                )
                group.remove(member.member_id)
        if group.members and not self._elect_joined_leader(group):
            # Only absent static members are left: wait another rebalance timeout
            # for them to rejoin or for their sessions to expire.
            gen = group.generation_id
            group.join_timer = self._later(
                group.rebalance_timeout_ms, lambda: self._join_timeout(group, gen)
            )
            return
        group.generation_id += 1
        if not group.members:
            group.protocol_name = None
            self.transition(group, S.EMPTY)
            self.spawn(self.store_empty_group(group, group.generation_id))
            return
        group.protocol_name = group.select_protocol()
        self.transition(group, S.COMPLETING_REBALANCE)
        group.pending_sync = set(group.members)
        for member in list(group.members.values()):
            leader = group.is_leader(member.member_id)
            member.is_new = False
            member.complete_join(
                JoinResult(
                    ErrorCode.NONE,
                    member.member_id,
                    generation_id=group.generation_id,
                    protocol_type=group.protocol_type,
                    protocol_name=group.protocol_name,
                    leader=group.leader_id or "",
                    members=group.member_metadata() if leader else (),
                )
            )
            self.schedule_heartbeat(group, member)
        gen = group.generation_id
        group.sync_timer = self._later(
            group.rebalance_timeout_ms, lambda: self._sync_timeout(group, gen)
        )

    @staticmethod
    def _elect_joined_leader(group: Group) -> bool:
        """Make sure the leader is a member that rejoined; False when nobody did."""
        leader = group.members.get(group.leader_id or "")
        if leader is not None and leader.awaiting_join:
            return True
        joined = next((m.member_id for m in group.members.values() if m.awaiting_join), None)
        if joined is None:
            return False
        group.leader_id = joined
        return True

    def _sync_timeout(self, group: Group, generation: int) -> None:
        """Kafka's DelayedSync: members that never sent SyncGroup are removed."""
        group.sync_timer = None
        if generation != group.generation_id or not group.is_(S.COMPLETING_REBALANCE, S.STABLE):
            return
        missing = [group.members[m] for m in group.pending_sync if m in group.members]
        group.pending_sync.clear()
        if not missing:
            return
        for member in missing:
            member.complete_sync(SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))
            group.remove(member.member_id)
        self.prepare_rebalance(group, "members did not sync in time")

    def _reset_and_propagate(self, group: Group, error: ErrorCode) -> None:
        for member in group.members.values():
            member.assignment = b""
            member.complete_sync(SyncResult(error))

    def propagate_assignment(self, group: Group, assignments: dict[str, bytes]) -> None:
        """Apply the leader's assignment and release every waiting SyncGroup; the group is Stable."""
        for member in group.members.values():
            member.assignment = assignments.get(member.member_id, b"")
            if member.awaiting_sync:
                member.complete_sync(
                    SyncResult(
                        ErrorCode.NONE, member.assignment, group.protocol_type, group.protocol_name
                    )
                )
                self.schedule_heartbeat(group, member)
        self.transition(group, S.STABLE)

    def fail_sync(self, group: Group, error: ErrorCode) -> None:
        """The group snapshot could not be written: everyone rejoins."""
        self._reset_and_propagate(group, error)
        self.maybe_prepare_rebalance(group, f"failed to store group metadata: {error.name}")

    # ------------------------------------------------------------ persisting

    async def store_empty_group(self, group: Group, generation: int) -> None:
        """Persist that the group is now Empty at ``generation`` (so a restart keeps the generation)."""
        if group.generation_id != generation or not group.is_(S.EMPTY):
            return
        try:
            await self.registry.write(
                group.partition, [self.registry.group_record(group)], replay=False
            )
        except KafkaError as exc:
            log.warning("group %s: could not store empty group: %s", group.group_id, exc)
