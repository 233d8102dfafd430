"""A long pass over many items, cut into slices with the event loop running
between them.

A broker of 10,000 partitions makes several passes over all of them on its
loop (the ISR expiry, the high watermark checkpoint, a ``/metrics`` scrape).
Each costs only microseconds per partition, but in one piece a pass held the
loop for 10-30 ms on a quiet machine and over 100 ms on a loaded one, and
every produce waiting behind it took that much longer.  In slices, requests
are served between them.

The items are taken as they are when the pass starts: one that goes away
(a deleted partition) may still be visited after a slice, so a pass must
tolerate what it would have met had it run just before the change.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Generator, Sequence
from typing import TypeVar

__all__ = ["SLICE", "in_slices", "run_in_steps"]

T = TypeVar("T")

SLICE = 1000
"""Items per slice: around a millisecond of work for the passes above."""


async def in_slices(items: Sequence[T], step: int = SLICE) -> AsyncIterator[Sequence[T]]:
    """``items`` ``step`` at a time, letting the loop run between two slices
    (not before the first: a short pass runs in one piece, as before)."""
    for start in range(0, len(items), step):
        if start:
            await asyncio.sleep(0)
        yield items[start : start + step]


async def run_in_steps(steps: Generator[None, None, T]) -> T:
    """Drive a generator of steps (``samsa.controller.steps``) to its result,
    letting the loop run between two steps."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
        await asyncio.sleep(0)
