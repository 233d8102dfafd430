"""Share-group assignment: every subscribed partition to at least one member, and
every member to at least one partition when there are more members than partitions.

In a share group several members may read the same partition (the partition
leader hands each record to one of them), so unlike a consumer group a member
never waits for a partition to be revoked.  The first pass is the consumer
groups' sticky ``uniform`` assignor; members it leaves empty (more members than
partitions) then share the partitions with the fewest readers, as Kafka's
SimpleAssignor does.
"""

from __future__ import annotations

from collections.abc import Mapping

from samsa.coordinator.consumer.assignors import uniform
from samsa.coordinator.consumer.group import TopicMetadata
from samsa.protocol.internal_records.consumer_group_records import Assignment


def share_assignment(
    subscriptions: Mapping[str, frozenset[str]],
    topics: TopicMetadata,
    previous: Mapping[str, Assignment],
) -> dict[str, Assignment]:
    """The target assignment of a share group (pure; ``previous`` keeps it sticky)."""
    exclusive = {m: a for m, a in previous.items() if _size(a) > 0}
    target = uniform(subscriptions, topics, _unshared(exclusive))
    readers: dict[tuple[bytes, int], int] = {}
    for assignment in target.values():
        for topic_id, parts in assignment.items():
            for p in parts:
                readers[(topic_id, p)] = readers.get((topic_id, p), 0) + 1
    for member in sorted(subscriptions):
        if _size(target.get(member, {})):
            continue
        ids = {topics[name][0] for name in subscriptions[member] if name in topics}
        choices = sorted((n, tp) for tp, n in readers.items() if tp[0] in ids)
        if not choices:
            continue
        _, (topic_id, p) = choices[0]
        readers[(topic_id, p)] += 1
        target[member] = {topic_id: frozenset({p})}
    return target


def _size(assignment: Assignment) -> int:
    return sum(len(parts) for parts in assignment.values())


def _unshared(previous: Mapping[str, Assignment]) -> dict[str, Assignment]:
    """The previous target without partitions that several members shared, so that
    ``uniform`` (which gives a partition to one member) keeps the rest sticky."""
    seen: dict[tuple[bytes, int], int] = {}
    for assignment in previous.values():
        for topic_id, parts in assignment.items():
            for p in parts:
                seen[(topic_id, p)] = seen.get((topic_id, p), 0) + 1
    return {
        member: {
            t: frozenset(p for p in parts if seen[(t, p)] == 1) for t, parts in assignment.items()
        }
        for member, assignment in previous.items()
    }
