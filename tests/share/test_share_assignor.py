"""Share-group assignment: partitions shared when members outnumber them."""

from __future__ import annotations

from samsa.coordinator.share.assignor import share_assignment

T = b"t" * 16


def test_five_members_on_two_partitions_each_get_one_and_both_are_read() -> None:
    subs = {f"m{i}": frozenset({"t"}) for i in range(5)}
    target = share_assignment(subs, {"t": (T, 2)}, {})
    assert all(len(a.get(T, ())) == 1 for a in target.values())
    readers = [sum(1 for a in target.values() if p in a[T]) for p in (0, 1)]
    assert sorted(readers) == [2, 3]


def test_fewer_members_than_partitions_is_the_uniform_assignment() -> None:
    subs = {"a": frozenset({"t"}), "b": frozenset({"t"})}
    target = share_assignment(subs, {"t": (T, 4)}, {})
    assert sorted(len(a[T]) for a in target.values()) == [2, 2]
    assert target["a"][T] | target["b"][T] == frozenset(range(4))


def test_assignment_is_sticky_when_a_member_joins() -> None:
    subs = {"a": frozenset({"t"}), "b": frozenset({"t"})}
    before = share_assignment(subs, {"t": (T, 4)}, {})
    after = share_assignment({**subs, "c": frozenset({"t"})}, {"t": (T, 4)}, before)
    kept = sum(len(before[m][T] & after[m].get(T, frozenset())) for m in ("a", "b"))
    assert kept >= 3 and after["c"]


def test_a_member_of_an_unknown_topic_gets_nothing() -> None:
    target = share_assignment({"a": frozenset({"missing"})}, {}, {})
    assert target == {"a": {}}
