"""What the consumer reads and where it stands (Kafka's SubscriptionState).

Holds the subscription (topics, a pattern, or a user assignment -- never two
at once, as in Kafka), the assigned partitions in assignment order, and per
partition the *position*: the offset of the next record ``poll()`` will
return.  A partition without a position is waiting for its committed offset
or for a reset (``auto.offset.reset``); it is not fetched until it has one.

Owned by the application thread (the one calling ``poll``); the heartbeat
thread never touches it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from samsa.client.metadata import TopicPartition
from samsa.errors import SamsaError

__all__ = ["PartitionState", "SubscriptionState", "SubscriptionType"]


class SubscriptionType(Enum):
    NONE = 0
    AUTO_TOPICS = 1
    AUTO_PATTERN = 2
    USER_ASSIGNED = 3


@dataclass(slots=True)
class PartitionState:
    """Per-partition consumption state.

    ``epoch`` grows on every seek/reset so the fetcher can drop responses to
    fetches sent before the position moved.
    """

    position: int | None = None
    leader_epoch: int | None = None
    paused: bool = False
    reset_strategy: str | None = None
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    epoch: int = 0
    # Fetch offset of the latest fetch answered without records: nothing is
    # stored from there up to the high watermark (compaction may leave gaps).
    last_empty_fetch: int = -1


class SubscriptionState:
    def __init__(self, default_reset: str) -> None:
        self.default_reset = default_reset
        self.type = SubscriptionType.NONE
        self.subscription: set[str] = set()
        self.pattern: re.Pattern[str] | None = None
        # Topics of every member, known to the group leader; metadata covers them.
        self.group_subscription: set[str] = set()
        self.assignment: dict[TopicPartition, PartitionState] = {}

    def _set_type(self, kind: SubscriptionType) -> None:
        if self.type is SubscriptionType.NONE:
            self.type = kind
        elif self.type is not kind:
            raise SamsaError(
                "subscribe(), subscribe(pattern) and assign() are mutually exclusive; "
                "call unsubscribe() first"
            )

    # -- subscription ------------------------------------------------------
    def subscribe(self, topics: Iterable[str]) -> bool:
        """Subscribe to topic names; True if the set changed."""
        self._set_type(SubscriptionType.AUTO_TOPICS)
        new = set(topics)
        changed = new != self.subscription
        self.subscription = new
        return changed

    def subscribe_pattern(self, pattern: re.Pattern[str]) -> None:
        self._set_type(SubscriptionType.AUTO_PATTERN)
        self.pattern = pattern

    def match_pattern(self, topics: Iterable[str]) -> bool:
        """Set the subscription to the topics the pattern matches; True if it changed."""
        assert self.pattern is not None
        new = {t for t in topics if self.pattern.fullmatch(t)}
        changed = new != self.subscription
        self.subscription = new
        return changed

    def assign_from_user(self, partitions: Iterable[TopicPartition]) -> None:
        self._set_type(SubscriptionType.USER_ASSIGNED)
        self._set_assignment(partitions)
        self.subscription = {tp.topic for tp in self.assignment}

    def assign_from_subscribed(self, partitions: Iterable[TopicPartition]) -> None:
        """The group's assignment; keeps positions of partitions we already had."""
        self._set_assignment(partitions)

    def _set_assignment(self, partitions: Iterable[TopicPartition]) -> None:
        old = self.assignment
        self.assignment = {
            TopicPartition(*tp): old.get(TopicPartition(*tp)) or PartitionState()
            for tp in partitions
        }

    def unsubscribe(self) -> None:
        self.type = SubscriptionType.NONE
        self.subscription = set()
        self.group_subscription = set()
        self.pattern = None
        self.assignment = {}

    @property
    def has_auto_assignment(self) -> bool:
        return self.type in (SubscriptionType.AUTO_TOPICS, SubscriptionType.AUTO_PATTERN)

    # -- positions -----------------------------------------------------------
    def state(self, tp: TopicPartition) -> PartitionState:
        st = self.assignment.get(tp)
        if st is None:
            raise SamsaError(f"partition {tp.topic}-{tp.partition} is not assigned")
        return st

    def seek(self, tp: TopicPartition, offset: int, leader_epoch: int | None = None) -> None:
        st = self.state(tp)
        st.position = offset
        st.leader_epoch = leader_epoch
        st.reset_strategy = None
        st.epoch += 1

    def request_reset(self, tp: TopicPartition, strategy: str | None = None) -> None:
        st = self.state(tp)
        st.reset_strategy = strategy or self.default_reset
        st.position = None
        st.epoch += 1

    def missing_positions(self) -> list[TopicPartition]:
        """Partitions with neither a position nor a pending reset."""
        return [
            tp
            for tp, st in self.assignment.items()
            if st.position is None and st.reset_strategy is None
        ]

    def awaiting_reset(self) -> list[TopicPartition]:
        return [tp for tp, st in self.assignment.items() if st.reset_strategy is not None]

    def fetchable(self) -> list[TopicPartition]:
        return [
            tp for tp, st in self.assignment.items() if st.position is not None and not st.paused
        ]

    def all_consumed(self) -> dict[TopicPartition, int]:
        return {tp: st.position for tp, st in self.assignment.items() if st.position is not None}

    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            self.state(TopicPartition(*tp)).paused = True

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            self.state(TopicPartition(*tp)).paused = False

    def paused(self) -> set[TopicPartition]:
        return {tp for tp, st in self.assignment.items() if st.paused}
