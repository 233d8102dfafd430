"""The sticky task assignor of streams groups, as pure functions (cases after Kafka's
StickyTaskAssignorTest, written for Samsa): every task active exactly once,
balanced over processes and then their members, sticky to previous owners,
standbys never on the process running the task."""

from __future__ import annotations

from collections import Counter

from samsa.coordinator.streams.assignment.assignor import AssignedMember, SubtopologyShape, assign
from samsa.coordinator.streams.tasks import TaskSet

STATELESS = {"0": SubtopologyShape(4, stateful=False)}
TWO_SUBS = {"0": SubtopologyShape(3, stateful=False), "1": SubtopologyShape(3, stateful=True)}


def member(member_id: str, process: str, **current: dict[str, list[int]]) -> AssignedMember:
    return AssignedMember(
        member_id,
        process,
        TaskSet.of(current.get("active"), current.get("standby"), current.get("warmup")),
    )


def active_tasks(result: dict[str, TaskSet]) -> Counter[tuple[str, int]]:
    return Counter((s, p) for t in result.values() for s, ps in t.active.items() for p in ps)


def count(tasks: TaskSet, role: str = "active") -> int:
    return sum(len(ps) for ps in getattr(tasks, role).values())


def test_every_task_is_active_exactly_once() -> None:
    members = [member("a", "p1"), member("b", "p2"), member("c", "p3")]
    result = assign(members, TWO_SUBS)
    assert active_tasks(result) == Counter({(s, p): 1 for s in "01" for p in range(3)})
    assert sorted(count(t) for t in result.values()) == [2, 2, 2]


def test_a_lone_member_takes_everything() -> None:
    result = assign([member("a", "p1")], TWO_SUBS, num_standby_replicas=1)
    assert result["a"].active == {"0": {0, 1, 2}, "1": {0, 1, 2}}
    assert result["a"].standby == {}, "no other process can hold the standbys"


def test_first_assignment_is_range_like_per_subtopology() -> None:
    result = assign([member("a", "p1"), member("b", "p2")], STATELESS)
    assert result["a"].active == {"0": {0, 2}} or result["a"].active == {"0": {0, 1}}
    assert count(result["a"]) == count(result["b"]) == 2


def test_previous_owners_keep_their_tasks_up_to_their_share() -> None:
    before = member("a", "p1", active={"0": [0, 1, 2, 3]})
    result = assign([before, member("b", "p2")], STATELESS)
    assert count(result["a"]) == count(result["b"]) == 2
    assert result["a"].active["0"] <= {0, 1, 2, 3}
    # Nothing moves when nothing changes.
    again = assign(
        [
            member("a", "p1", active={"0": sorted(result["a"].active["0"])}),
            member("b", "p2", active={"0": sorted(result["b"].active["0"])}),
        ],
        STATELESS,
    )
    assert again == result


def test_a_process_with_more_threads_gets_more_tasks() -> None:
    members = [member("a1", "p1"), member("a2", "p1"), member("b", "p2")]
    result = assign(members, {"0": SubtopologyShape(6, stateful=False)})
    per_process = Counter(
        {"p1": count(result["a1"]) + count(result["a2"]), "p2": count(result["b"])}
    )
    assert per_process == Counter({"p1": 4, "p2": 2})


def test_standby_holder_takes_over_the_active_task() -> None:
    members = [
        member("a", "p1", active={"1": [0, 1, 2]}),
        member("b", "p2", standby={"1": [0, 1, 2]}),
    ]
    result = assign(members, {"1": SubtopologyShape(3, stateful=True)}, num_standby_replicas=1)
    # a keeps its share; what it gives up goes to b, which already has the state.
    assert count(result["a"]) == 2 and count(result["b"]) == 1
    for m in ("a", "b"):
        assert not (result[m].active.get("1", set()) & result[m].standby.get("1", set()))
    standbys = Counter(p for t in result.values() for p in t.standby.get("1", ()))
    assert standbys == Counter({0: 1, 1: 1, 2: 1})


def test_standbys_never_share_a_process_with_their_active_task() -> None:
    members = [member("a1", "p1"), member("a2", "p1"), member("b", "p2"), member("c", "p3")]
    result = assign(members, TWO_SUBS, num_standby_replicas=2)
    process = {"a1": "p1", "a2": "p1", "b": "p2", "c": "p3"}
    holders: dict[tuple[str, int], list[str]] = {}
    for m, tasks in result.items():
        for role in ("active", "standby"):
            for s, ps in getattr(tasks, role).items():
                for p in ps:
                    holders.setdefault((s, p), []).append(process[m])
    for task, procs in holders.items():
        assert len(procs) == len(set(procs)), (task, procs)
        if task[0] == "1":
            assert len(procs) == 3, "a stateful task: active plus two standbys"
        else:
            assert len(procs) == 1, "a stateless task has no standbys"


def test_the_result_does_not_depend_on_member_order() -> None:
    members = [member("a", "p1"), member("b", "p2"), member("c", "p2")]
    assert assign(members, TWO_SUBS, 1) == assign(list(reversed(members)), TWO_SUBS, 1)


def test_no_members_no_assignment() -> None:
    assert assign([], TWO_SUBS) == {}
