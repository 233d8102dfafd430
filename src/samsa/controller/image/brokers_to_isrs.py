"""Index from a broker to the partitions whose ISR it is in and that it leads.

Kafka's ``BrokersToIsrs``: fencing a broker or shutting it down must touch only
the partitions that broker is in, not scan every partition of the cluster.  The
image keeps this index up to date on every replay; the key ``NO_LEADER`` in the
leader index holds the partitions without a leader, which the controller scans
when a broker comes back.

Shape: broker id -> topic id -> set of partition ids.  Nested per topic because
deleting a topic then drops whole sets, and because one small set per (broker,
topic) costs far less than one tuple key per (broker, topic, partition).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from samsa.controller.image.registrations import NO_LEADER

_Index = dict[int, dict[bytes, set[int]]]


def _add(index: _Index, broker: int, topic_id: bytes, partition: int) -> None:
    topics = index.get(broker)
    if topics is None:
        topics = index[broker] = {}
    parts = topics.get(topic_id)
    if parts is None:
        topics[topic_id] = {partition}
    else:
        parts.add(partition)


def _discard(index: _Index, broker: int, topic_id: bytes, partition: int) -> None:
    topics = index.get(broker)
    if topics is None:
        return
    parts = topics.get(topic_id)
    if parts is None:
        return
    parts.discard(partition)
    if not parts:
        del topics[topic_id]
        if not topics:
            del index[broker]


def _iterate(index: _Index, broker: int) -> Iterator[tuple[bytes, int]]:
    # Copy first: callers build records while iterating, and a replay between
    # two steps must not break the iteration.
    topics = index.get(broker)
    if not topics:
        return iter(())
    return iter([(tid, p) for tid, parts in topics.items() for p in parts])


class BrokersToIsrs:
    """Which partitions each broker is in the ISR of, and which it leads."""

    __slots__ = ("_isr", "_leaders")

    def __init__(self) -> None:
        self._isr: _Index = {}
        self._leaders: _Index = {}

    def update(
        self,
        topic_id: bytes,
        partition: int,
        prev_isr: Sequence[int],
        new_isr: Sequence[int],
        prev_leader: int | None,
        new_leader: int,
    ) -> None:
        """Move one partition's entries from its old ISR/leader to its new ones.

        ``prev_leader`` None means the partition is new.
        """
        if prev_isr is not new_isr:
            for broker in prev_isr:
                if broker not in new_isr:
                    _discard(self._isr, broker, topic_id, partition)
            for broker in new_isr:
                if broker not in prev_isr:
                    _add(self._isr, broker, topic_id, partition)
        if prev_leader != new_leader:
            if prev_leader is not None:
                _discard(self._leaders, prev_leader, topic_id, partition)
            _add(self._leaders, new_leader, topic_id, partition)

    def remove(self, topic_id: bytes, partition: int, isr: Sequence[int], leader: int) -> None:
        for broker in isr:
            _discard(self._isr, broker, topic_id, partition)
        _discard(self._leaders, leader, topic_id, partition)

    def partitions_with_broker_in_isr(self, broker: int) -> Iterator[tuple[bytes, int]]:
        """(topic id, partition) pairs whose ISR holds ``broker``; a snapshot."""
        return _iterate(self._isr, broker)

    def partitions_led_by(self, broker: int) -> Iterator[tuple[bytes, int]]:
        """(topic id, partition) pairs ``broker`` leads; a snapshot."""
        return _iterate(self._leaders, broker)

    def partitions_without_leader(self) -> Iterator[tuple[bytes, int]]:
        return _iterate(self._leaders, NO_LEADER)

    def has_leaderships(self, broker: int) -> bool:
        return bool(self._leaders.get(broker))

    def leader_count(self, broker: int) -> int:
        return sum(len(parts) for parts in self._leaders.get(broker, {}).values())

    def isr_count(self, broker: int) -> int:
        return sum(len(parts) for parts in self._isr.get(broker, {}).values())

    def offline_partition_count(self) -> int:
        return self.leader_count(NO_LEADER)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BrokersToIsrs):
            return NotImplemented
        return self._isr == other._isr and self._leaders == other._leaders

    __hash__ = None  # type: ignore[assignment]
