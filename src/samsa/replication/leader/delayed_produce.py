"""``acks=all`` produces waiting for the high watermark: Kafka's DelayedProduce.

A produce with ``acks=-1`` is appended to the leader at once and answered only
when the high watermark passes its last offset, i.e. when every replica of
the ISR has it.  Each waiting produce is a future keyed by the offset the
watermark must reach; the partition completes them when its watermark moves
(or fails them all when it stops leading).  The request's timeout is the
waiter's business (``asyncio.wait_for``), so expiry costs nothing here.

Owned by the event loop: futures are created and completed on it.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools

from samsa.errors import ErrorCode

__all__ = ["DelayedProduceQueue"]


class DelayedProduceQueue:
    """Futures waiting for offsets, completed in offset order."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, asyncio.Future[ErrorCode]]] = []
        self._order = itertools.count()

    def __len__(self) -> int:
        return sum(1 for _, _, f in self._heap if not f.done())

    def add(self, required_offset: int) -> asyncio.Future[ErrorCode]:
        future: asyncio.Future[ErrorCode] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._heap, (required_offset, next(self._order), future))
        return future

    def complete_up_to(self, high_watermark: int, code: ErrorCode) -> int:
        """Complete every waiter whose offset the watermark reached with ``code``
        (NONE, or NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below
        ``min.insync.replicas`` meanwhile); returns how many."""
        completed = 0
        heap = self._heap
        while heap and heap[0][0] <= high_watermark:
            _, _, future = heapq.heappop(heap)
            if not future.done():
                future.set_result(code)
                completed += 1
        return completed

    def fail_all(self, code: ErrorCode) -> int:
        """The partition stopped leading (or is gone): every waiter gets ``code``."""
        heap, self._heap = self._heap, []
        failed = 0
        for _, _, future in heap:
            if not future.done():
                future.set_result(code)
                failed += 1
        return failed

    def discard_done(self) -> None:
        """Drop waiters that gave up (timed out), so the heap does not grow."""
        if any(f.done() for _, _, f in self._heap):
            self._heap = [entry for entry in self._heap if not entry[2].done()]
            heapq.heapify(self._heap)
