"""One member's change carried through its group: epoch, target assignment, reconciliation.

Both ways into a consumer group end here -- a ConsumerGroupHeartbeat, and a
JoinGroup of a member that speaks the classic protocol -- so both follow
Kafka's three steps alike: (1) the group epoch is bumped when the member's
subscription or the subscribed topics changed; (2) the target assignment is
recomputed when the group epoch passed it; (3) the member moves towards its
target (``reconciliation``).  Pure: it returns the member's next state and adds
the records of every change to ``changes``; the caller writes them.
"""

from __future__ import annotations

from collections.abc import Mapping

from samsa.coordinator.consumer import records
from samsa.coordinator.consumer.assignors import Assignor
from samsa.coordinator.consumer.group import ConsumerGroup, ConsumerMember
from samsa.coordinator.consumer.reconciliation import reconcile
from samsa.coordinator.consumer.subscription import group_topics
from samsa.protocol.internal_records.consumer_group_records import Assignment


def advance(
    group: ConsumerGroup,
    members: dict[str, ConsumerMember],
    target: dict[str, Assignment],
    updated: ConsumerMember,
    *,
    subscription_changed: bool,
    owned: Assignment | None,
    all_topics: Mapping[str, tuple[bytes, int]],
    assignor: Assignor,
    changes: list[records.Change],
) -> ConsumerMember:
    """``updated`` (already in ``members``) after the group caught up with it.

    ``members`` and ``target`` are the group's as this request sees them (a
    replaced static member already taken out); ``owned`` is what the member says
    it holds (None: it did not say)."""
    group_id = group.group_id
    member_id = updated.member_id
    per_member, topics = group_topics(members.values(), all_topics)
    group_epoch = group.group_epoch
    if subscription_changed or topics != group.topics or group_epoch == 0:
        group_epoch += 1
        if topics != group.topics:
            changes.append(records.partition_metadata(group_id, topics))
        changes.append(records.group_epoch(group_id, group_epoch))
    assignment_epoch = group.assignment_epoch
    if group_epoch > assignment_epoch:
        new_target = assignor(per_member, topics, target)
        for mid in members:
            if new_target.get(mid, {}) != target.get(mid, {}) or mid not in group.target:
                changes.append(records.target_member(group_id, mid, new_target.get(mid, {})))
        changes.append(records.target_epoch(group_id, group_epoch))
        target, assignment_epoch = new_target, group_epoch

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
    if member_id not in group.members or reconciled is not updated:
        changes.append(records.current_assignment(group_id, reconciled))
    return reconciled


def waiting_on_unreleased(group: ConsumerGroup, member: ConsumerMember) -> bool:
    """Kafka's waitingOnUnreleasedPartition: a partition of the member's target is
    still held by another member (so rejoining now would not give it more)."""
    for topic_id, parts in group.target.get(member.member_id, {}).items():
        for p in parts - member.assigned.get(topic_id, frozenset()):
            owner = group.owner_of(topic_id, p)
            if owner is not None and owner != member.member_id:
                return True
    return False
