"""The ``sticky`` task assignor of streams groups (Kafka's StickyTaskAssignor, 4.4).

Tasks are spread over *processes* (Streams instances) first and over their
members (stream threads) second, so that a process with more threads takes
more tasks.  In order:

1. each active task stays with the member that holds it, while that member is
   below its share (ceil(tasks / members), shrinking as members fill up);
2. then with a member that holds it as a standby or warm-up (the most caught-up
   state first), under the same share;
3. the rest go, in subtopology order, to the least loaded process's least
   loaded member, which gives a range-like first assignment;
4. standby tasks (``num.standby.replicas`` per stateful task) go to the
   previous active or standby holders when their process does not already
   hold the task, else to the least loaded processes that do not.

Pure and deterministic: ties are broken by process and member id, where Kafka
leaves them to hash order.
"""

from __future__ import annotations

import heapq
import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from samsa.coordinator.streams.tasks import TaskSet

log = logging.getLogger("samsa.coordinator")

NAME = "sticky"

TaskId = tuple[str, int]
"""(subtopology id, partition); tuples order as Kafka's TaskId comparisons do."""


@dataclass(frozen=True, slots=True)
class AssignedMember:
    """What the assignor knows of a member: its process and the tasks it holds now."""

    member_id: str
    process_id: str
    current: TaskSet = field(default_factory=TaskSet)
    task_offsets: Mapping[TaskId, int] = field(default_factory=dict)
    """Changelog offset sums the member reported for tasks whose state it has."""


@dataclass(frozen=True, slots=True)
class SubtopologyShape:
    """How many tasks a subtopology has and whether they keep state (need standbys)."""

    number_of_tasks: int
    stateful: bool


class TaskAssignorError(Exception):
    """No member can take a task; the heartbeat fails with UNKNOWN_SERVER_ERROR."""


class _Process:
    """Kafka's ProcessState: one Streams instance and its members' loads."""

    def __init__(self, process_id: str) -> None:
        self.process_id = process_id
        self.counts: dict[str, int] = {}
        self.active: dict[str, set[TaskId]] = {}
        self.standby: dict[str, set[TaskId]] = {}
        self.tasks: set[TaskId] = set()
        self.task_count = 0

    def load_value(self) -> float:
        """Tasks per member (Kafka's ``load``); a process without members never takes any."""
        return self.task_count / len(self.counts) if self.counts else -1.0

    def add(self, member_id: str, task: TaskId, active: bool) -> int:
        self.tasks.add(task)
        self.task_count += 1
        (self.active if active else self.standby).setdefault(member_id, set()).add(task)
        self.counts[member_id] += 1
        return self.counts[member_id]

    def add_to_least_loaded(self, task: TaskId, active: bool) -> int:
        if not self.counts:
            return -1
        member_id = min(self.counts, key=lambda m: (self.counts[m], m))
        return self.add(member_id, task, active)

    def has(self, task: TaskId) -> bool:
        return task in self.tasks


class _State:
    def __init__(
        self,
        members: Iterable[AssignedMember],
        shapes: Mapping[str, SubtopologyShape],
        standbys: int,
    ) -> None:
        self.standbys = standbys
        self.processes: dict[str, _Process] = {}
        self.prev_active: dict[TaskId, AssignedMember] = {}
        candidates: dict[TaskId, list[tuple[int, int, str, AssignedMember]]] = {}
        members = list(members)
        for m in sorted(members, key=lambda m: m.member_id):
            process = self.processes.setdefault(m.process_id, _Process(m.process_id))
            process.counts[m.member_id] = 0
            for sid, parts in m.current.active.items():
                for p in parts:
                    self.prev_active[(sid, p)] = m
            replicas = {
                (sid, p)
                for tasks in (m.current.standby, m.current.warmup)
                for sid, parts in tasks.items()
                for p in parts
            }
            for task in replicas:
                # Holders first, then members known to hold state from their offsets;
                # the most caught-up first within each.
                offset = m.task_offsets.get(task, 0)
                candidates.setdefault(task, []).append((0, -offset, m.member_id, m))
            for task, offset in m.task_offsets.items():
                if task not in replicas:
                    candidates.setdefault(task, []).append((1, -offset, m.member_id, m))
        self.prev_standby = {
            t: [c[3] for c in sorted(cs, key=lambda c: c[:3])] for t, cs in candidates.items()
        }
        active_total = sum(s.number_of_tasks for s in shapes.values())
        total = active_total + standbys * sum(
            s.number_of_tasks for s in shapes.values() if s.stateful
        )
        self.members_with_active_capacity = self.members_with_capacity = len(members)
        self.active_total, self.total = active_total, total
        self.active_per_member = _per_member(active_total, len(members))
        self.total_per_member = _per_member(total, len(members))

    def count_of(self, m: AssignedMember) -> int:
        return self.processes[m.process_id].counts[m.member_id]

    def assigned(self, count: int, *, active: bool) -> None:
        """Kafka's maybeUpdate{Active,Total}TasksPerMember: a member that reached its
        share leaves the pool, and the share of the others is recomputed."""
        if active and count == self.active_per_member:
            self.members_with_active_capacity -= 1
            self.active_total -= count
            self.active_per_member = _per_member(
                self.active_total, self.members_with_active_capacity
            )
        if count == self.total_per_member:
            self.members_with_capacity -= 1
            self.total -= count
            self.total_per_member = _per_member(self.total, self.members_with_capacity)

    def least_loaded_prev(
        self, members: list[AssignedMember] | None, task: TaskId | None
    ) -> AssignedMember | None:
        """Kafka's findPrevMemberWithLeastLoad (a candidate replaces the current one only
        when both its process and its own load are lower)."""
        best: AssignedMember | None = None
        best_process = best_member = math.inf
        for m in members or ():
            process = self.processes[m.process_id]
            if task is not None and process.has(task):
                continue
            load, own = process.load_value(), process.counts[m.member_id]
            if best is None or (load < best_process and own < best_member):
                best, best_process, best_member = m, load, own
        return best


def _per_member(tasks: int, members: int) -> int:
    return 0 if members == 0 else -(-tasks // members)


def assign(
    members: Iterable[AssignedMember],
    shapes: Mapping[str, SubtopologyShape],
    num_standby_replicas: int = 0,
) -> dict[str, TaskSet]:
    """The target assignment of every member (warm-up tasks are never targets)."""
    members = list(members)
    if not members:
        return {}
    state = _State(members, shapes, num_standby_replicas)
    tasks = [(sid, p) for sid, shape in shapes.items() for p in range(shape.number_of_tasks)]
    _assign_active(state, tasks)
    if num_standby_replicas > 0:
        stateful = [t for t in tasks if shapes[t[0]].stateful]
        _assign_standby(state, stateful)
    out: dict[str, TaskSet] = {}
    for m in members:
        process = state.processes[m.process_id]
        out[m.member_id] = TaskSet.of(
            _compact(process.active.get(m.member_id, ())),
            _compact(process.standby.get(m.member_id, ())),
        )
    return out


def _compact(tasks: Iterable[TaskId]) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for sid, p in tasks:
        out.setdefault(sid, set()).add(p)
    return out


def _assign_active(state: _State, tasks: list[TaskId]) -> None:
    remaining = sorted(tasks, key=lambda t: (t[1], t[0]))
    for previous in (
        lambda t: state.prev_active.get(t),
        lambda t: state.least_loaded_prev(state.prev_standby.get(t), None),
    ):
        left = []
        for task in remaining:
            m = previous(task)
            if m is not None and state.count_of(m) < state.active_per_member:
                count = state.processes[m.process_id].add(m.member_id, task, True)
                state.assigned(count, active=True)
            else:
                left.append(task)
        remaining = left
    heap = [(p.load_value(), pid) for pid, p in state.processes.items()]
    heapq.heapify(heap)
    for task in sorted(remaining):
        if not heap:
            raise TaskAssignorError(f"No process available to assign active task {_name(task)}.")
        _, pid = heapq.heappop(heap)
        process = state.processes[pid]
        count = process.add_to_least_loaded(task, True)
        if count == -1:
            raise TaskAssignorError(f"No member available to assign active task {_name(task)}.")
        state.assigned(count, active=True)
        heapq.heappush(heap, (process.load_value(), pid))


def _assign_standby(state: _State, tasks: list[TaskId]) -> None:
    to_least_loaded: list[tuple[TaskId, int]] = []
    for task in sorted(tasks, key=lambda t: (t[1], t[0]), reverse=True):
        for i in range(state.standbys):
            prev = state.prev_active.get(task)
            if prev is not None:
                process = state.processes[prev.process_id]
                if not process.has(task) and state.count_of(prev) < state.total_per_member:
                    state.assigned(process.add(prev.member_id, task, False), active=False)
                    continue
            holder = state.least_loaded_prev(state.prev_standby.get(task), task)
            if holder is not None and state.count_of(holder) < state.total_per_member:
                process = state.processes[holder.process_id]
                state.assigned(process.add(holder.member_id, task, False), active=False)
                continue
            to_least_loaded.append((task, state.standbys - i))
            break
    heap = [(p.load_value(), pid) for pid, p in state.processes.items()]
    heapq.heapify(heap)
    for task, replicas in sorted(to_least_loaded, reverse=True):
        for i in range(replicas):
            if not _standby_to_least_loaded(state, heap, task):
                log.warning(
                    "Unable to assign %d of %d standby tasks for task [%s]. There is not enough"
                    " available capacity. You should increase the number of threads and/or"
                    " application instances to maintain the requested number of standby replicas.",
                    state.standbys - i,
                    state.standbys,
                    _name(task),
                )
                break


def _standby_to_least_loaded(state: _State, heap: list[tuple[float, str]], task: TaskId) -> bool:
    """The least loaded process not holding ``task`` takes it (Kafka's recursion over
    its queue, as a loop that puts back what it skipped)."""
    skipped = []
    found = False
    while heap:
        entry = heapq.heappop(heap)
        process = state.processes[entry[1]]
        if process.has(task):
            skipped.append(entry)
            continue
        count = process.add_to_least_loaded(task, False)
        if count != -1:
            found = True
            state.assigned(count, active=False)
        skipped.append((process.load_value(), entry[1]))
        break
    for entry in skipped:
        heapq.heappush(heap, entry)
    return found


def _name(task: TaskId) -> str:
    return f"{task[0]}_{task[1]}"
