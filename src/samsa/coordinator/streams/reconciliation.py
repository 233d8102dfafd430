"""How a streams member moves from the tasks it holds towards its target, one heartbeat
at a time (Kafka 4.4's streams CurrentAssignmentBuilder).

The rules that keep a task from running twice without stopping anyone:

- a member first gives up (revokes) what the target takes from it, and keeps
  its epoch until a heartbeat no longer lists those tasks;
- an active task is granted only once no member of the group holds it, and
  never to a process that still holds it as a standby or warm-up elsewhere;
- a standby or warm-up is granted only once no other member of the same
  process holds the task in any role;
- role changes of the member's own task happen in place, so the client
  recycles the task's state store: active to standby at once (the active
  half still waits for its revocation), standby to warm-up and back at once,
  standby or warm-up to active as soon as the active task is free.

Active tasks remember the epoch they were granted at (``HeldTasks``): the
target epoch for new ones, their old epoch for kept ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from samsa.coordinator.streams.group import MemberState, StreamsMember
from samsa.coordinator.streams.tasks import HeldTasks, Tasks, TaskSet, has_task
from samsa.errors import ErrorCode

ActiveOwner = Callable[[str, int], str | None]
"""(subtopology, partition) -> process id of the active holder, or None."""
ReplicaHolders = Callable[[str, int], set[str]]
"""(subtopology, partition) -> process ids holding it as a standby (or warm-up)."""

_MutableTasks = dict[str, set[int]]
_MutableEpochs = dict[str, dict[int, int]]


class FencedMember(Exception):
    """The member is in a state this coordinator does not know: it must rejoin."""

    code = ErrorCode.FENCED_MEMBER_EPOCH


def _mutable(tasks: Tasks) -> _MutableTasks:
    return {s: set(ps) for s, ps in tasks.items()}


def _remove(tasks: _MutableTasks, sid: str, p: int) -> None:
    parts = tasks.get(sid)
    if parts is not None and p in parts:
        parts.discard(p)
        if not parts:
            del tasks[sid]


def _add(tasks: _MutableTasks, sid: str, p: int) -> None:
    tasks.setdefault(sid, set()).add(p)


def _frozen(tasks: _MutableTasks) -> dict[str, frozenset[int]]:
    return {s: frozenset(ps) for s, ps in tasks.items() if ps}


class Reconciler:
    """One reconciliation step of ``member`` towards ``target`` (Kafka's builder)."""

    def __init__(
        self,
        member: StreamsMember,
        target_epoch: int,
        target: TaskSet,
        owned: TaskSet | None,
        active_owner: ActiveOwner,
        standby_holders: ReplicaHolders,
        warmup_holders: ReplicaHolders,
    ) -> None:
        self.member = member
        self.target_epoch = target_epoch
        self.target = target
        self.owned = owned
        self.active_owner = active_owner
        self.standby_holders = standby_holders
        self.warmup_holders = warmup_holders

    def build(self) -> StreamsMember:
        """The member's next state; ``member`` itself when it cannot move."""
        m = self.member
        if m.state is MemberState.STABLE:
            if m.member_epoch != self.target_epoch:
                return self._next(m.member_epoch)
            return m
        if m.state is MemberState.UNREVOKED_TASKS:
            if self._not_released(m.pending_revocation):
                return m
            return self._next(m.member_epoch + 1)
        if m.state is MemberState.UNRELEASED_TASKS:
            return self._next(m.member_epoch)
        # UNKNOWN: a state from a newer coordinator; start over from nothing.
        if self.owned is None or not self.owned.is_empty():
            raise FencedMember(
                "The streams group member is in a unknown state. The member must abandon all"
                " its tasks and rejoin."
            )
        return self._next(self.target_epoch)

    # ------------------------------------------------------------ steps

    def _not_released(self, pending: HeldTasks) -> bool:
        """Revocation is acknowledged only by a heartbeat that lists what the member owns
        and none of ``pending``."""
        return self.owned is None or self.owned.overlaps(pending)

    def _next(self, epoch: int) -> StreamsMember:
        held = self.member.assigned
        unreleased = False
        keep_active: _MutableEpochs = {}
        revoke_active: _MutableEpochs = {}
        grant_active: _MutableEpochs = {}
        for sid in {*held.active, *self.target.active}:
            current = held.active.get(sid, {})
            wanted = self.target.active.get(sid, frozenset())
            kept = {p: e for p, e in current.items() if p in wanted}
            gone = {p: e for p, e in current.items() if p not in wanted}
            new = {p: self.target_epoch for p in wanted if p not in kept}
            for p in list(new):
                if self._unreleased_active(sid, p):
                    del new[p]
                    unreleased = True
            for out, part in ((keep_active, kept), (revoke_active, gone), (grant_active, new)):
                if part:
                    out[sid] = part
        keep_s, revoke_s, grant_s, u1 = self._diff(
            held.standby, self.target.standby, self._unreleased_standby
        )
        keep_w, revoke_w, grant_w, u2 = self._diff(
            held.warmup, self.target.warmup, self._unreleased_warmup
        )
        unreleased = unreleased or u1 or u2

        # In-place role changes needing no other member: grant them now.
        for sid, epochs in held.active.items():
            for p in epochs:
                if p in grant_s.get(sid, ()):
                    _remove(grant_s, sid, p)
                    _add(keep_s, sid, p)
        for outgoing, revoke_out, grant_in, keep_in in (
            (held.standby, revoke_s, grant_w, keep_w),
            (held.warmup, revoke_w, grant_s, keep_s),
        ):
            for sid, replica_parts in outgoing.items():
                for p in replica_parts:
                    if p in grant_in.get(sid, ()):
                        _remove(grant_in, sid, p)
                        _add(keep_in, sid, p)
                        _remove(revoke_out, sid, p)

        # Promotions to active need no revocation of the replica they come from.
        for replicas, revoke in ((held.standby, revoke_s), (held.warmup, revoke_w)):
            for sid, replica_parts in replicas.items():
                for p in replica_parts:
                    if has_task(self.target.active, sid, p):
                        _remove(revoke, sid, p)
        pending = HeldTasks(revoke_active, _frozen(revoke_s), _frozen(revoke_w))
        revoking = not pending.is_empty() and self._not_released(pending)
        # Keep the replica until its active task is granted in this very step.
        for replicas, keep in ((held.standby, keep_s), (held.warmup, keep_w)):
            for sid, replica_parts in replicas.items():
                for p in replica_parts:
                    promoted_now = not revoking and p in grant_active.get(sid, {})
                    if has_task(self.target.active, sid, p) and not promoted_now:
                        _add(keep, sid, p)

        assigned = HeldTasks(keep_active, _frozen(keep_s), _frozen(keep_w))
        granted = HeldTasks(grant_active, _frozen(grant_s), _frozen(grant_w))
        return self._member(epoch, pending, assigned, granted, unreleased, revoking)

    def _diff(
        self, current: Tasks, target: Tasks, unreleased: Callable[[str, int, HeldTasks], bool]
    ) -> tuple[_MutableTasks, _MutableTasks, _MutableTasks, bool]:
        keep: _MutableTasks = {}
        revoke: _MutableTasks = {}
        grant: _MutableTasks = {}
        blocked = False
        for sid in {*current, *target}:
            have = current.get(sid, frozenset())
            want = target.get(sid, frozenset())
            if have & want:
                keep[sid] = set(have & want)
            if have - want:
                revoke[sid] = set(have - want)
            new = set()
            for p in want - have:
                if unreleased(sid, p, self.member.assigned):
                    blocked = True
                else:
                    new.add(p)
            if new:
                grant[sid] = new
        return keep, revoke, grant, blocked

    def _member(
        self,
        epoch: int,
        pending: HeldTasks,
        assigned: HeldTasks,
        granted: HeldTasks,
        unreleased: bool,
        revoking: bool,
    ) -> StreamsMember:
        m = self.member
        if revoking:
            state, new_epoch, held, pending_out = (
                MemberState.UNREVOKED_TASKS,
                epoch,
                assigned,
                pending,
            )
        elif not granted.is_empty():
            state = MemberState.UNRELEASED_TASKS if unreleased else MemberState.STABLE
            new_epoch, held, pending_out = self.target_epoch, assigned.merge(granted), HeldTasks()
        else:
            state = MemberState.UNRELEASED_TASKS if unreleased else MemberState.STABLE
            new_epoch, held, pending_out = self.target_epoch, assigned, HeldTasks()
        new = replace(
            m,
            state=state,
            member_epoch=new_epoch,
            previous_member_epoch=m.member_epoch,
            assigned=held,
            pending_revocation=pending_out,
        )
        return m if new == m else new

    # ------------------------------------------------------- exclusivity

    def _unreleased_active(self, sid: str, p: int) -> bool:
        held = self.member.assigned
        return (
            self.active_owner(sid, p) is not None
            or self._on_this_process(self.standby_holders, held.standby, sid, p)
            or self._on_this_process(self.warmup_holders, held.warmup, sid, p)
        )

    def _unreleased_standby(self, sid: str, p: int, held: HeldTasks) -> bool:
        process = self.member.process_id
        run_by_other = self.active_owner(sid, p) == process and p not in held.active.get(sid, {})
        return (
            run_by_other
            or process in self.standby_holders(sid, p)
            or self._on_this_process(self.warmup_holders, held.warmup, sid, p)
        )

    def _unreleased_warmup(self, sid: str, p: int, held: HeldTasks) -> bool:
        process = self.member.process_id
        return (
            self.active_owner(sid, p) == process
            or self._on_this_process(self.standby_holders, held.standby, sid, p)
            or process in self.warmup_holders(sid, p)
        )

    def _on_this_process(self, holders: ReplicaHolders, mine: Tasks, sid: str, p: int) -> bool:
        """Held in that role on this member's process by another member (the member's
        own task is a role change, not a blocker)."""
        return self.member.process_id in holders(sid, p) and not has_task(mine, sid, p)
