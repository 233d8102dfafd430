"""Keep Python's cyclic garbage collector off the broker's long-lived objects.

A broker of thousands of partitions holds millions of long-lived objects
(partitions, logs, segments, indexes, metadata registrations).  The
collector's oldest generation is scanned whole whenever it has grown by a
quarter, and that scan holds the interpreter: one pass took 106 ms while
1,000 partitions were created on one node, stalling every produce for as
long.  These objects live until their partition goes, so after start-up and
after a large batch of new partitions the broker moves everything alive into
the collector's permanent generation (``gc.freeze``), as long-running Python
servers do: later passes scan only what was made since.  Young garbage is
collected first so as little as possible is frozen with it; anything
frozen that later becomes garbage is still freed by reference counting,
only cycles among frozen objects stay (the broker makes few).

While a node starts (``collector_paused``) the collector does not run at all:
start-up builds the objects of every partition, all of which live on, and the
passes over them while they were built cost as much as building them (a
third of the time ``ReplicaManager.load_existing`` took for 10,000
partitions).  At the end of the start ``freeze_start_up`` freezes it all
without a collection: with the collector off, every object start-up made
was still in the youngest generation, and one pass over them found almost
nothing (117 garbage objects among 140,000 for 3,000 partitions) yet took
0.8 s of a restart on a loaded machine, half a second at 10,000 partitions.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Iterator

__all__ = ["CollectorPause", "collector_paused", "freeze_start_up", "settle_heap"]


def settle_heap() -> None:
    """Freeze what a batch of new partitions built, without a collection: the
    collector was paused while it was built (``collector_paused``), so all of
    it is still in the youngest generation and a pass would scan it all.

    With the collector running, the batch's objects went through every
    generation: after 1,000 new partitions, a pass over the middle generation
    took one loop callback of 60-130 ms on a loaded machine, one over the
    oldest 55 ms of CPU (67 ms of the loop), in the middle of the batch, and
    each found nothing to free; run from the preparing thread they held the
    interpreter lock from the loop as long.  The few cycles the batch left
    stay, as at start-up (see module doc)."""
    gc.freeze()


def freeze_start_up() -> None:
    """Freeze what start-up built, without collecting first (see module doc):
    the few cycles it left stay, a bounded one-off cost per process."""
    gc.freeze()


_holders = 0
"""Pauses under way (``_hold``): the collector runs again when the last ends."""
_enabled_before = True


def _hold() -> None:
    global _holders, _enabled_before
    if _holders == 0:
        _enabled_before = gc.isenabled()
        gc.disable()
    _holders += 1


def _let_go() -> None:
    global _holders
    _holders -= 1
    if _holders == 0 and _enabled_before:
        gc.enable()


@contextlib.contextmanager
def collector_paused(loop: asyncio.AbstractEventLoop, limit_s: float) -> Iterator[None]:
    """No automatic collection within (see module doc), nor while another pause
    is under way (pauses nest: the loader's run of steps and the applier's
    batch of new partitions overlap).  It resumes after ``limit_s`` even while
    still within: a node that waits for its quorum for hours must not pile up
    the garbage cycles of its retries."""
    pause = CollectorPause()
    pause.hold(loop, limit_s)
    try:
        yield
    finally:
        pause.release(settle=False)


class CollectorPause:
    """``collector_paused`` for work that spans loop callbacks without one frame
    to wrap (the metadata loader's steps): ``hold`` while it goes on, ``release``
    (which freezes what it built, see ``settle_heap``) when it ended.

    A failover's 10,000 leadership changes replayed over ~50 steps made each
    survivor run three or four passes over the oldest generation (35-63 ms of
    the loop each) while it applied them, and each freed almost nothing."""

    def __init__(self) -> None:
        self._limit: asyncio.TimerHandle | None = None
        self._held = False

    def hold(self, loop: asyncio.AbstractEventLoop, limit_s: float) -> None:
        if self._held:
            return
        self._held = True
        _hold()
        self._limit = loop.call_later(limit_s, self._expire)

    def _expire(self) -> None:
        self._limit = None
        if self._held:
            self._held = False
            _let_go()

    def release(self, *, settle: bool = True) -> None:
        if self._limit is not None:
            self._limit.cancel()
            self._limit = None
        if not self._held:
            return
        self._held = False
        _let_go()
        if settle:
            settle_heap()
