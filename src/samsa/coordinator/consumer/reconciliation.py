"""How a member moves from its current assignment towards its target (Kafka's
CurrentAssignmentBuilder), one heartbeat at a time.

The rule that makes the protocol safe without stopping anyone: a member first
gives up (revokes) what the target takes from it, and keeps its epoch until it
confirms; a partition is handed to its new member only once no other member
holds it.  Members never wait for each other beyond that one partition.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from samsa.coordinator.consumer.group import ConsumerMember, MemberState
from samsa.protocol.internal_records.consumer_group_records import Assignment

OwnedElsewhere = Callable[[bytes, int], bool]


def _minus(a: Assignment, b: Assignment) -> Assignment:
    out = {t: ps - b.get(t, frozenset()) for t, ps in a.items()}
    return {t: ps for t, ps in out.items() if ps}


def _intersect(a: Assignment, b: Assignment) -> Assignment:
    out = {t: ps & b.get(t, frozenset()) for t, ps in a.items()}
    return {t: ps for t, ps in out.items() if ps}


def _overlaps(a: Assignment, b: Assignment) -> bool:
    return any(ps & b.get(t, frozenset()) for t, ps in a.items())


def reconcile(
    member: ConsumerMember,
    target_epoch: int,
    target: Assignment,
    owned: Assignment | None,
    owned_elsewhere: OwnedElsewhere,
) -> ConsumerMember:
    """The member's next state; returns ``member`` itself when nothing changes.

    ``owned`` is what the member reported holding in this heartbeat (None when
    it did not say, which never completes a revocation).
    """
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        if owned is None or _overlaps(member.pending_revocation, owned):
            return member
        member = replace(member, pending_revocation={})
    elif member.state is MemberState.STABLE and member.member_epoch == target_epoch:
        return member
    return _next(member, target_epoch, target, owned, owned_elsewhere)


def _next(
    member: ConsumerMember,
    target_epoch: int,
    target: Assignment,
    owned: Assignment | None,
    owned_elsewhere: OwnedElsewhere,
) -> ConsumerMember:
    keep = _intersect(member.assigned, target)
    revoke = _minus(member.assigned, target)
    # Kafka's ownsRevokedPartitions: a member that says it no longer holds what
    # it must give up (a classic member rejoining after revoking everything)
    # moves on at once instead of being asked to revoke it.
    if revoke and (owned is None or _overlaps(revoke, owned)):
        return replace(
            member,
            state=MemberState.UNREVOKED_PARTITIONS,
            assigned=keep,
            pending_revocation=revoke,
        )
    grown: dict[bytes, set[int]] = {t: set(ps) for t, ps in keep.items()}
    unreleased = False
    for topic_id, parts in _minus(target, keep).items():
        for p in parts:
            if owned_elsewhere(topic_id, p):
                unreleased = True
            else:
                grown.setdefault(topic_id, set()).add(p)
    new = replace(
        member,
        state=MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE,
        assigned={t: frozenset(ps) for t, ps in grown.items() if ps},
        pending_revocation={},
        member_epoch=target_epoch,
        previous_member_epoch=(
            member.member_epoch
            if target_epoch != member.member_epoch
            else member.previous_member_epoch
        ),
    )
    if (
        new.state == member.state
        and new.assigned == member.assigned
        and new.member_epoch == member.member_epoch
        and not member.pending_revocation
        and not revoke
    ):
        return member
    return new
