"""Assignors without a broker: balance, determinism, stickiness, cooperative hand-over."""

from __future__ import annotations

from samsa.client.consumer.assignors import (
    CooperativeStickyAssignor,
    RangeAssignor,
    RoundRobinAssignor,
)
from samsa.protocol.consumer_protocol import Subscription


def subs(**members: tuple[str, ...]) -> dict[str, Subscription]:
    return {m: Subscription(topics=t) for m, t in members.items()}


def test_range_gives_contiguous_ranges_with_extras_first() -> None:
    plan = RangeAssignor().assign({"t": 5}, subs(a=("t",), b=("t",)))
    assert plan == {"a": {"t": [0, 1, 2]}, "b": {"t": [3, 4]}}


def test_range_copartitions_topics() -> None:
    plan = RangeAssignor().assign({"x": 2, "y": 2}, subs(a=("x", "y"), b=("x", "y")))
    assert plan["a"] == {"x": [0], "y": [0]} and plan["b"] == {"x": [1], "y": [1]}


def test_roundrobin_deals_across_topics() -> None:
    plan = RoundRobinAssignor().assign({"x": 3, "y": 2}, subs(a=("x", "y"), b=("x", "y")))
    assert plan == {"a": {"x": [0, 2], "y": [1]}, "b": {"x": [1], "y": [0]}}


def test_roundrobin_skips_unsubscribed_members() -> None:
    plan = RoundRobinAssignor().assign({"x": 2, "y": 2}, subs(a=("x",), b=("x", "y")))
    assert plan["a"] == {"x": [0]} and plan["b"] == {"x": [1], "y": [0, 1]}


def test_sticky_first_assignment_is_balanced() -> None:
    plan = CooperativeStickyAssignor().assign({"t": 7}, subs(a=("t",), b=("t",), c=("t",)))
    counts = sorted(len(p.get("t", [])) for p in plan.values())
    assert counts == [2, 2, 3]
    assert sorted(p for m in plan.values() for p in m["t"]) == list(range(7))


def test_sticky_keeps_owned_and_withholds_moved_partitions() -> None:
    members = {
        "a": Subscription(topics=("t",), owned_partitions={"t": (0, 1, 2, 3)}, generation_id=1),
        "b": Subscription(topics=("t",)),
    }
    plan = CooperativeStickyAssignor().assign({"t": 4}, members)
    # a keeps two of its partitions; the two moving to b are withheld this round.
    assert len(plan["a"]["t"]) == 2 and set(plan["a"]["t"]) <= {0, 1, 2, 3}
    assert plan["b"] == {}
    # Second round: a now owns its two, b gets the remaining two.
    members = {
        "a": Subscription(
            topics=("t",), owned_partitions={"t": tuple(plan["a"]["t"])}, generation_id=2
        ),
        "b": Subscription(topics=("t",), generation_id=2),
    }
    second = CooperativeStickyAssignor().assign({"t": 4}, members)
    assert second["a"] == plan["a"]
    assert sorted(second["b"]["t"]) == sorted({0, 1, 2, 3} - set(plan["a"]["t"]))


def test_sticky_newer_generation_wins_double_claim() -> None:
    members = {
        "a": Subscription(topics=("t",), owned_partitions={"t": (0,)}, generation_id=1),
        "b": Subscription(topics=("t",), owned_partitions={"t": (0,)}, generation_id=3),
    }
    plan = CooperativeStickyAssignor().assign({"t": 2}, members)
    assert plan["b"]["t"] == [0] and plan["a"]["t"] == [1]


def test_sticky_drops_partitions_of_unsubscribed_topics() -> None:
    members = {"a": Subscription(topics=("y",), owned_partitions={"x": (0,)}, generation_id=1)}
    plan = CooperativeStickyAssignor().assign({"x": 1, "y": 1}, members)
    assert plan == {"a": {"y": [0]}}
