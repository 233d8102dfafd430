"""Range assignor: per topic, contiguous partition ranges in member order (Kafka's default).

For each topic, the members subscribed to it are sorted and the partitions
split into ranges; the first ``partitions % members`` members get one extra.
Co-partitioned topics therefore land on the same member, which is why joins
on keys use it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from samsa.client.consumer.assignors.base import Assignment, empty_assignment, member_order
from samsa.protocol.consumer_protocol import Subscription

__all__ = ["RangeAssignor"]


class RangeAssignor:
    name = "range"
    rebalance_protocol = "eager"

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> Assignment:
        result = empty_assignment(subscriptions)
        members = member_order(subscriptions)
        for topic in sorted(partitions_per_topic):
            count = partitions_per_topic[topic]
            consumers = [m for m in members if topic in subscriptions[m].topics]
            if not consumers or count <= 0:
                continue
            per, extra = divmod(count, len(consumers))
            start = 0
            for i, member in enumerate(consumers):
                n = per + (1 if i < extra else 0)
                if n:
                    result[member][topic] = list(range(start, start + n))
                start += n
        return result

    def user_data(self, topics: Iterable[str]) -> bytes | None:
        return None
