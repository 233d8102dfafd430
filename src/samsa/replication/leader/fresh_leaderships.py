"""Partitions this broker took over recently, per follower that must fetch them.

A follower fetches all the partitions it follows from one leader with one
long-polling Fetch at a time.  When this broker starts leading a partition, a
follower whose Fetch is already parked here (for other partitions) would ask
for the new one only when that Fetch's max wait runs out: up to
``replica.fetch.wait.max.ms`` (500 ms) in which no ``acks=all`` produce to the
new leader can complete, after every topic creation, failover and controlled
shutdown.  Kafka's followers wait that out; Samsa's leader does not:

* becoming leader wakes the parked fetches of the partition's followers, so
  their next Fetch names it (the follower applied the metadata first);
* a follower Fetch that leaves out a partition it follows here, taken over
  less than that Fetch's max wait ago, is answered without parking (the
  leader applied the metadata first; the follower's next Fetch, a moment
  later, names it).

An entry is dropped once the follower fetches the partition or the window has
passed, so a follower that stays away costs one entry per partition at most.
"""

from __future__ import annotations

from collections.abc import Iterable

TopicPartition = tuple[str, int]

__all__ = ["FreshLeaderships"]


class FreshLeaderships:
    def __init__(self) -> None:
        self._since: dict[int, dict[TopicPartition, int]] = {}

    def record(self, key: TopicPartition, followers: Iterable[int], now_ms: int) -> None:
        for follower in followers:
            self._since.setdefault(follower, {})[key] = now_ms

    def omitted_by(
        self, follower: int, fetched: Iterable[TopicPartition], now_ms: int, window_ms: int
    ) -> bool:
        """Whether a Fetch from ``follower`` naming ``fetched`` leaves out a
        partition taken over here within the last ``window_ms``."""
        news = self._since.get(follower)
        if not news:
            return False
        named = set(fetched)
        omitted = False
        for key, since in list(news.items()):
            if key in named or now_ms - since > window_ms:
                del news[key]
            else:
                omitted = True
        if not news:
            del self._since[follower]
        return omitted

    def followers(self) -> int:
        """Followers with an entry (for tests and debugging)."""
        return len(self._since)
