"""A fetch parked until enough bytes it may read arrive (Kafka's DelayedFetch).

A fetch that cannot be answered yet (fewer than ``min_bytes`` available) parks
a ``FetchWaiter`` on its partitions; the ReplicaManager tells each waiter how
many bytes became readable *for it*, and a waiter whose total reaches its
minimum wakes at once -- the response goes out the moment enough data is
there, not when ``max_wait_ms`` runs out.  What is readable differs: a
follower reads up to the leader's log end, so appends count for it; a
consumer reads below the high watermark, so on a replicated leader only
watermark moves count for it.
"""

from __future__ import annotations

import asyncio

__all__ = ["FetchWaiter"]


class FetchWaiter:
    def __init__(
        self, needed_bytes: int, *, from_follower: bool = False, replica_id: int = -1
    ) -> None:
        self.needed = needed_bytes
        self.replica_id = replica_id
        self.from_follower = from_follower or replica_id >= 0
        self.future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def on_bytes(self, count: int) -> None:
        self.needed -= count
        if self.needed <= 0 and not self.future.done():
            self.future.set_result(None)

    def on_append(self, size: int, *, standalone: bool) -> None:
        """Appended bytes: readable at once by a follower, and by anyone on a
        standalone partition (its watermark is its log end)."""
        if standalone or self.from_follower:
            self.on_bytes(size)

    def on_visible(self, size: int) -> None:
        """Bytes a high watermark move made readable: only consumers wait for those."""
        if not self.from_follower:
            self.on_bytes(size)

    def wake(self) -> None:
        if not self.future.done():
            self.future.set_result(None)
