"""Tasks of a streams group: a task is a (subtopology, partition) pair, held in one of
three roles -- active (processes it), standby (keeps a copy of its state) or
warm-up (restores state before taking the task over).

Two value types, as Kafka's TasksTuple and TasksTupleWithEpochs:
``TaskSet`` is what a target assignment or a heartbeat names; ``HeldTasks``
is what a member holds, whose active tasks remember the epoch at which each
was handed over (KIP-1251: a commit at an older member epoch is accepted only
for tasks held since that epoch).  Both are immutable; maps are keyed by
subtopology id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

Tasks = Mapping[str, frozenset[int]]
"""Partitions by subtopology id."""
TaskEpochs = Mapping[str, Mapping[int, int]]
"""Assignment epoch by partition, by subtopology id."""

Body = dict[str, Any]


def _clean(tasks: Mapping[str, Iterable[int]]) -> dict[str, frozenset[int]]:
    return {s: frozenset(ps) for s, ps in tasks.items() if ps}


def _minus(a: Tasks, b: Tasks) -> dict[str, frozenset[int]]:
    return _clean({s: ps - b.get(s, frozenset()) for s, ps in a.items()})


def _overlaps(a: Tasks, b: Tasks) -> bool:
    return any(ps & b.get(s, frozenset()) for s, ps in a.items())


def has_task(tasks: Tasks, subtopology: str, partition: int) -> bool:
    return partition in tasks.get(subtopology, ())


@dataclass(frozen=True, slots=True)
class TaskSet:
    """Tasks by role, without epochs (Kafka's TasksTuple)."""

    active: Tasks = field(default_factory=dict)
    standby: Tasks = field(default_factory=dict)
    warmup: Tasks = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        active: Mapping[str, Iterable[int]] | None = None,
        standby: Mapping[str, Iterable[int]] | None = None,
        warmup: Mapping[str, Iterable[int]] | None = None,
    ) -> TaskSet:
        return cls(_clean(active or {}), _clean(standby or {}), _clean(warmup or {}))

    def is_empty(self) -> bool:
        return not (self.active or self.standby or self.warmup)

    def overlaps(self, other: HeldTasks) -> bool:
        """Whether any task of ``other`` is in this set in the same role."""
        return (
            _overlaps(self.active, other.active_tasks())
            or _overlaps(self.standby, other.standby)
            or _overlaps(self.warmup, other.warmup)
        )


@dataclass(frozen=True, slots=True)
class HeldTasks:
    """Tasks a member holds (or must give up), active ones with their assignment
    epochs (Kafka's TasksTupleWithEpochs)."""

    active: TaskEpochs = field(default_factory=dict)
    standby: Tasks = field(default_factory=dict)
    warmup: Tasks = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not (self.active or self.standby or self.warmup)

    def active_tasks(self) -> dict[str, frozenset[int]]:
        return {s: frozenset(ps) for s, ps in self.active.items() if ps}

    def as_task_set(self) -> TaskSet:
        return TaskSet(self.active_tasks(), self.standby, self.warmup)

    def merge(self, other: HeldTasks) -> HeldTasks:
        active: dict[str, dict[int, int]] = {s: dict(ps) for s, ps in self.active.items()}
        for s, ps in other.active.items():
            active.setdefault(s, {}).update(ps)
        standby = {
            s: self.standby.get(s, frozenset()) | other.standby.get(s, frozenset())
            for s in {*self.standby, *other.standby}
        }
        warmup = {
            s: self.warmup.get(s, frozenset()) | other.warmup.get(s, frozenset())
            for s in {*self.warmup, *other.warmup}
        }
        return HeldTasks({s: ps for s, ps in active.items() if ps}, _clean(standby), _clean(warmup))


EMPTY_TASKS = TaskSet()
NO_TASKS = HeldTasks()


# ------------------------------------------------------------------ wire


def tasks_to_wire(tasks: Tasks) -> list[Body]:
    """``[]TaskIds`` of requests, responses and records, in a stable order."""
    return [
        {"subtopology_id": s, "partitions": sorted(ps)} for s, ps in sorted(tasks.items()) if ps
    ]


def tasks_from_wire(entries: Iterable[Body] | None) -> dict[str, frozenset[int]]:
    out: dict[str, frozenset[int]] = {}
    for entry in entries or ():
        parts = frozenset(entry["partitions"])
        if parts:
            sid = entry["subtopology_id"]
            out[sid] = out.get(sid, frozenset()) | parts
    return out


def epochs_to_record(active: TaskEpochs) -> list[Body]:
    """Active tasks with their AssignmentEpochs (a tagged field of the record)."""
    out = []
    for sid, parts in sorted(active.items()):
        if parts:
            order = sorted(parts)
            out.append(
                {
                    "subtopology_id": sid,
                    "partitions": order,
                    "assignment_epochs": [parts[p] for p in order],
                }
            )
    return out


def epochs_from_record(
    entries: Iterable[Body] | None, member_epoch: int
) -> dict[str, dict[int, int]]:
    """The inverse of ``epochs_to_record``; a record without epochs (written before
    KIP-1251) gives every task the member's epoch, as Kafka reads it."""
    out: dict[str, dict[int, int]] = {}
    for entry in entries or ():
        partitions = entry["partitions"]
        epochs = entry.get("assignment_epochs")
        if epochs is None or len(epochs) != len(partitions):
            epochs = [member_epoch] * len(partitions)
        if partitions:
            out.setdefault(entry["subtopology_id"], {}).update(zip(partitions, epochs, strict=True))
    return out


def held_to_record(held: HeldTasks) -> tuple[list[Body], list[Body], list[Body]]:
    return epochs_to_record(held.active), tasks_to_wire(held.standby), tasks_to_wire(held.warmup)


def task_set_from_request(request: Body) -> TaskSet | None:
    """The tasks a heartbeat says its member owns; None when it did not say (all three
    lists null), which never completes a revocation."""
    if request.get("active_tasks") is None:
        return None
    return TaskSet(
        tasks_from_wire(request.get("active_tasks")),
        tasks_from_wire(request.get("standby_tasks")),
        tasks_from_wire(request.get("warmup_tasks")),
    )


def difference(a: Tasks, b: Tasks) -> dict[str, frozenset[int]]:
    """Tasks in ``a`` that are not in ``b``."""
    return _minus(a, b)
