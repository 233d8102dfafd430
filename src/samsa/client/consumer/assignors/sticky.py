"""Cooperative-sticky assignor: balanced, keeps partitions where they are, moves in two steps.

The plan (a simpler form of Kafka's AbstractStickyAssignor):

1. Every member keeps the partitions it reports owning, if it still subscribes
   to the topic, the partition still exists and no member of a *newer*
   generation claims it too (a member that missed a rebalance loses ties).
2. Unowned partitions go, one at a time in (topic, partition) order, to the
   eligible member holding the fewest partitions.
3. While some member holds two or more partitions more than another member
   that could take one of them, one partition moves from the fuller to the
   emptier member.  This ends balanced up to subscription differences.

Cooperative protocol (KIP-429): a partition that changes owner is left out
of this round's assignment altogether.  Its old owner sees it disappear,
revokes it, and rejoins; the follow-up rebalance then hands it to the new
owner, which by then no one else holds.  Nobody stops consuming the
partitions it keeps.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from samsa.client.consumer.assignors.base import Assignment, member_order
from samsa.protocol.consumer_protocol import Subscription

__all__ = ["CooperativeStickyAssignor"]

Partition = tuple[str, int]


class CooperativeStickyAssignor:
    name = "cooperative-sticky"
    rebalance_protocol = "cooperative"

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> Assignment:
        members = member_order(subscriptions)
        all_partitions = [
            (t, p) for t in sorted(partitions_per_topic) for p in range(partitions_per_topic[t])
        ]
        subscribed = {m: set(subscriptions[m].topics) for m in members}
        previous = self._previous_owners(subscriptions, partitions_per_topic)

        owned: dict[str, set[Partition]] = {m: set() for m in members}
        for tp, member in previous.items():
            if tp[0] in subscribed[member]:
                owned[member].add(tp)
        assigned = {tp for ps in owned.values() for tp in ps}

        for tp in all_partitions:
            if tp in assigned:
                continue
            eligible = [m for m in members if tp[0] in subscribed[m]]
            if eligible:
                target = min(eligible, key=lambda m: (len(owned[m]), m))
                owned[target].add(tp)

        self._balance(members, owned, subscribed)

        result: Assignment = {m: {} for m in members}
        for member in members:
            for topic, partition in sorted(owned[member]):
                before = previous.get((topic, partition))
                if before is not None and before != member:
                    continue  # moving: its current owner revokes it first
                result[member].setdefault(topic, []).append(partition)
        return result

    @staticmethod
    def _previous_owners(
        subscriptions: Mapping[str, Subscription], partitions_per_topic: Mapping[str, int]
    ) -> dict[Partition, str]:
        """Current owner of each partition; the newest generation wins a double claim."""
        claims: dict[Partition, tuple[int, str]] = {}
        for member in member_order(subscriptions):
            sub = subscriptions[member]
            for topic, partitions in sub.owned_partitions.items():
                count = partitions_per_topic.get(topic, 0)
                for partition in partitions:
                    if not 0 <= partition < count:
                        continue
                    tp = (topic, partition)
                    held = claims.get(tp)
                    if held is None or sub.generation_id > held[0]:
                        claims[tp] = (sub.generation_id, member)
        return {tp: member for tp, (_gen, member) in claims.items()}

    @staticmethod
    def _balance(
        members: list[str], owned: dict[str, set[Partition]], subscribed: dict[str, set[str]]
    ) -> None:
        moved = True
        while moved:
            moved = False
            by_load = sorted(members, key=lambda m: (-len(owned[m]), m))
            for giver in by_load:
                for taker in reversed(by_load):
                    if len(owned[giver]) - len(owned[taker]) < 2:
                        break
                    candidates = sorted(tp for tp in owned[giver] if tp[0] in subscribed[taker])
                    if candidates:
                        tp = candidates[-1]
                        owned[giver].remove(tp)
                        owned[taker].add(tp)
                        moved = True
                        break
                if moved:
                    break

    def user_data(self, topics: Iterable[str]) -> bytes | None:
        return None
