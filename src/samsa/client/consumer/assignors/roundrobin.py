"""Round-robin assignor: all partitions of all topics dealt out one at a time.

Partitions are sorted by (topic, partition) and dealt to members in sorted
order, skipping members not subscribed to the partition's topic.  With equal
subscriptions the counts differ by at most one across the whole group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from samsa.client.consumer.assignors.base import Assignment, empty_assignment, member_order
from samsa.protocol.consumer_protocol import Subscription

__all__ = ["RoundRobinAssignor"]


class RoundRobinAssignor:
    name = "roundrobin"
    rebalance_protocol = "eager"

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> Assignment:
        result = empty_assignment(subscriptions)
        members = member_order(subscriptions)
        if not members:
            return result
        turn = 0
        for topic in sorted(partitions_per_topic):
            eligible = [m for m in members if topic in subscriptions[m].topics]
            if not eligible:
                continue
            for partition in range(partitions_per_topic[topic]):
                # Advance the shared cursor to the next member that takes this topic.
                for _ in range(len(members)):
                    member = members[turn % len(members)]
                    turn += 1
                    if topic in subscriptions[member].topics:
                        result[member].setdefault(topic, []).append(partition)
                        break
        return result

    def user_data(self, topics: Iterable[str]) -> bytes | None:
        return None
