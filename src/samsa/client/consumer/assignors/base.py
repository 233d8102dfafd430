"""The assignor seam: who gets which partitions, computed by the group leader.

An assignor sees every member's subscription (topics, partitions owned now,
generation) and the partition count of each topic, and returns each member's
partitions.  ``rebalance_protocol`` tells the coordinator how the result is
applied: ``eager`` members give up everything before rejoining; ``cooperative``
members (KIP-429) keep what they own and give up only what the new assignment
moves away, in a second rebalance.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from samsa.protocol.consumer_protocol import Subscription

__all__ = ["Assignment", "Assignor", "member_order"]

# member id -> topic -> sorted partitions
Assignment = dict[str, dict[str, list[int]]]


class Assignor(Protocol):
    name: str
    rebalance_protocol: str

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> Assignment: ...

    def user_data(self, topics: Iterable[str]) -> bytes | None: ...


def member_order(subscriptions: Mapping[str, Subscription]) -> list[str]:
    """Members in a deterministic order, as every leader must compute the same plan."""
    return sorted(subscriptions)


def empty_assignment(subscriptions: Mapping[str, Subscription]) -> Assignment:
    return {m: {} for m in subscriptions}
