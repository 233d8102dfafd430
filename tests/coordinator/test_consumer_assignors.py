"""The server-side assignors of KIP-848 groups, as pure functions."""

from __future__ import annotations

from samsa.coordinator.consumer.assignors import range_, uniform
from samsa.coordinator.consumer.group import ConsumerMember, MemberState
from samsa.coordinator.consumer.reconciliation import reconcile

A = b"\x0a" * 16
B = b"\x0b" * 16
TOPICS = {"a": (A, 6), "b": (B, 3)}


def counts(assignment: dict[str, dict[bytes, frozenset[int]]]) -> dict[str, int]:
    return {m: sum(len(ps) for ps in a.values()) for m, a in assignment.items()}


def test_uniform_balances_every_partition_once() -> None:
    subs = {m: frozenset({"a", "b"}) for m in ("m1", "m2", "m3", "m4")}
    out = uniform(subs, TOPICS, {})
    assert sorted(counts(out).values()) == [2, 2, 2, 3]
    held = [(t, p) for a in out.values() for t, ps in a.items() for p in ps]
    assert len(held) == len(set(held)) == 9


def test_uniform_moves_only_what_a_new_member_needs() -> None:
    subs = {m: frozenset({"a"}) for m in ("m1", "m2")}
    before = uniform(subs, TOPICS, {})
    after = uniform({**subs, "m3": frozenset({"a"})}, TOPICS, before)
    assert counts(after) == {"m1": 2, "m2": 2, "m3": 2}
    for m in ("m1", "m2"):
        assert after[m][A] <= before[m][A], "an existing member was given someone else's partition"


def test_uniform_respects_heterogeneous_subscriptions() -> None:
    out = uniform({"only-a": frozenset({"a"}), "only-b": frozenset({"b"})}, TOPICS, {})
    assert out == {"only-a": {A: frozenset(range(6))}, "only-b": {B: frozenset(range(3))}}


def test_range_gives_each_member_a_contiguous_slice_per_topic() -> None:
    subs = {m: frozenset({"a", "b"}) for m in ("m1", "m2")}
    out = range_(subs, TOPICS, {})
    assert out["m1"] == {A: frozenset({0, 1, 2}), B: frozenset({0, 1})}
    assert out["m2"] == {A: frozenset({3, 4, 5}), B: frozenset({2})}


def test_reconcile_revokes_first_and_keeps_the_epoch() -> None:
    member = ConsumerMember("m", member_epoch=1, assigned={A: frozenset({0, 1, 2})})
    target = {A: frozenset({2, 3})}
    revoking = reconcile(member, 2, target, None, lambda t, p: p == 3)
    assert revoking.state is MemberState.UNREVOKED_PARTITIONS
    assert (revoking.member_epoch, revoking.assigned) == (1, {A: frozenset({2})})
    assert revoking.pending_revocation == {A: frozenset({0, 1})}
    # Still reporting a revoked partition: nothing moves.
    assert reconcile(revoking, 2, target, {A: frozenset({1, 2})}, lambda t, p: False) is revoking
    # Revoked; partition 3 is still held by another member.
    waiting = reconcile(revoking, 2, target, {A: frozenset({2})}, lambda t, p: p == 3)
    assert waiting.state is MemberState.UNRELEASED_PARTITIONS
    assert (waiting.member_epoch, waiting.previous_member_epoch) == (2, 1)
    assert waiting.assigned == {A: frozenset({2})}
    done = reconcile(waiting, 2, target, None, lambda t, p: False)
    assert done.state is MemberState.STABLE
    assert done.assigned == target
    assert done.previous_member_epoch == 1
