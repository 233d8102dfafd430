"""Server-side assignors of KIP-848: ``uniform`` and ``range``.

Both are pure functions from (members' subscribed topics, topic metadata,
previous target) to a new target assignment, so the coordinator can recompute
the target at any time and tests can call them directly.

``uniform`` (Kafka's default) balances partition counts across the members that
can take them and is sticky: a partition stays with its previous member unless
that member is over its share.  ``range`` gives each member a contiguous range
of every topic it subscribes to, so members of co-partitioned topics get the
same partition numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from samsa.coordinator.consumer.group import TopicMetadata
from samsa.protocol.internal_records.consumer_group_records import Assignment

TopicPartition = tuple[bytes, int]
Assignor = Callable[
    [Mapping[str, frozenset[str]], TopicMetadata, Mapping[str, Assignment]],
    dict[str, Assignment],
]


def _to_assignment(parts: set[TopicPartition]) -> Assignment:
    out: dict[bytes, set[int]] = {}
    for topic_id, p in parts:
        out.setdefault(topic_id, set()).add(p)
    return {t: frozenset(ps) for t, ps in out.items()}


def uniform(
    subscriptions: Mapping[str, frozenset[str]],
    topics: TopicMetadata,
    previous: Mapping[str, Assignment],
) -> dict[str, Assignment]:
    """Balanced and sticky: keep what is still valid, fill the least loaded, then even out."""
    eligible: dict[TopicPartition, list[str]] = {}
    for name, (topic_id, count) in sorted(topics.items()):
        subscribers = sorted(m for m, subs in subscriptions.items() if name in subs)
        if subscribers:
            for p in range(count):
                eligible[(topic_id, p)] = subscribers
    owned: dict[str, set[TopicPartition]] = {m: set() for m in subscriptions}
    taken: set[TopicPartition] = set()
    for member in sorted(subscriptions):
        for topic_id, parts in (previous.get(member) or {}).items():
            for p in parts:
                tp = (topic_id, p)
                if tp in eligible and member in eligible[tp] and tp not in taken:
                    owned[member].add(tp)
                    taken.add(tp)
    for tp in sorted(eligible):
        if tp not in taken:
            target = min(eligible[tp], key=lambda m: (len(owned[m]), m))
            owned[target].add(tp)
    _even_out(owned, eligible)
    return {m: _to_assignment(parts) for m, parts in owned.items()}


def _even_out(
    owned: dict[str, set[TopicPartition]], eligible: Mapping[TopicPartition, list[str]]
) -> None:
    """Move partitions from the most to the least loaded members until no move narrows the gap."""
    while True:
        moved = False
        for donor in sorted(owned, key=lambda m: (-len(owned[m]), m)):
            for tp in sorted(owned[donor]):
                receivers = [
                    m for m in eligible[tp] if m != donor and len(owned[m]) + 1 < len(owned[donor])
                ]
                if receivers:
                    receiver = min(receivers, key=lambda m: (len(owned[m]), m))
                    owned[donor].discard(tp)
                    owned[receiver].add(tp)
                    moved = True
                    break
            if moved:
                break
        if not moved:
            return


def range_(
    subscriptions: Mapping[str, frozenset[str]],
    topics: TopicMetadata,
    previous: Mapping[str, Assignment],
) -> dict[str, Assignment]:
    """Per topic, contiguous ranges to its subscribers in member-id order."""
    out: dict[str, dict[bytes, frozenset[int]]] = {m: {} for m in subscriptions}
    for name, (topic_id, count) in sorted(topics.items()):
        subscribers = sorted(m for m, subs in subscriptions.items() if name in subs)
        if not subscribers:
            continue
        share, extra = divmod(count, len(subscribers))
        start = 0
        for i, member in enumerate(subscribers):
            size = share + (1 if i < extra else 0)
            if size:
                out[member][topic_id] = frozenset(range(start, start + size))
            start += size
    return dict(out)


ASSIGNORS: dict[str, Assignor] = {"uniform": uniform, "range": range_}
