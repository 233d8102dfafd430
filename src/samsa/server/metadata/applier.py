"""Apply committed metadata to the broker in order, without holding the loop.

A committed batch that creates a thousand partitions here means a thousand
directories and segment files and a thousand role changes; made inline, that
blocked the event loop (and with it every produce and fetch) for seconds,
and the CreateTopics forwarded to the controller timed out.  So a step can
have two parts, as Kafka's metadata publisher does its log creation beside
the request threads: ``prepare`` (the file work, in a worker thread), then
``apply`` on the loop, which may be a generator: each ``yield`` lets the loop
serve requests before the next slice of the batch is applied (so yield
between slices, not after the last: a batch of one slice then applies
entirely inline).

Order is kept: while any step waits for its preparation or is between
slices, later steps (even small ones, which would otherwise apply at once)
queue behind it.  A small step with nothing queued applies inline, as before,
so a single partition's change is visible as soon as ``on_delta`` returns.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

from samsa.eventloop.cancellation import cancel_and_wait
from samsa.eventloop.switch_interval import switch_interval
from samsa.server.metadata.heap import collector_paused, settle_heap

log = logging.getLogger("samsa.server")

Prepare = Callable[[], object]
Apply = Callable[[object], Iterator[None] | None]

PREPARE_NICENESS = 10
"""How much lower than the broker's own the preparing thread's scheduling
priority is (Linux nice levels).  Making a thousand partitions' directories
and files is kernel work that released the GIL but took the CPU from the
event loops of every broker on the machine; produce latency waits on the
loops, the new partitions can wait a little longer."""

BATCH_WITHOUT_COLLECTOR_S = 120.0
"""The longest the cyclic collector stays off for one batch of new partitions
(10,000 of them take about a minute on a loaded machine)."""

PREPARE_SWITCH_INTERVAL_S = 0.001
"""The interpreter's thread switch interval while a worker prepares: the default
5 ms let a worker holding the GIL delay each of the loop's system calls by up
to that much, which added up to 100+ ms for a single produce."""


_DONE = object()


class SerialMetadataApplier:
    """A FIFO of (prepare in a thread, then apply on the loop) steps."""

    def __init__(self) -> None:
        self._queue: collections.deque[tuple[Prepare | None, Apply]] = collections.deque()
        self._task: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._preparer: ThreadPoolExecutor | None = None

    def submit(self, apply: Apply, prepare: Prepare | None = None) -> None:
        """Run ``apply(prepare())`` after everything submitted before; inline
        when nothing is queued and there is nothing to prepare (the first slice
        only, when ``apply`` is a generator with more)."""
        if prepare is None and not self._queue and self._idle.is_set():
            steps = apply(None)
            if steps is not None and next(steps, _DONE) is not _DONE:
                self._enqueue(None, lambda _: steps)
            return
        self._enqueue(prepare, apply)

    def _enqueue(self, prepare: Prepare | None, apply: Apply) -> None:
        self._queue.append((prepare, apply))
        self._idle.clear()
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        try:
            while self._queue:
                prepare, apply = self._queue.popleft()
                try:
                    if prepare is None:
                        await _apply_in_steps(apply, None)
                        continue
                    # A batch of new partitions: no collector passes over what it
                    # builds, a freeze after it (see heap.settle_heap).
                    with collector_paused(asyncio.get_running_loop(), BATCH_WITHOUT_COLLECTOR_S):
                        prepared = None
                        try:
                            prepared = await _in_thread(self._prepare_thread(), prepare)
                        except Exception:
                            # Apply it all the same: what the worker could not make
                            # is made inline, where a failing log dir is handled.
                            log.exception("preparing committed metadata failed")
                        await _apply_in_steps(apply, prepared)
                        # Before the collector is back: its first pass would
                        # scan all the batch built (25 ms of CPU for 1,000).
                        settle_heap()
                except Exception:
                    log.exception("applying committed metadata failed")
        finally:
            if not self._queue:
                self._idle.set()

    def _prepare_thread(self) -> ThreadPoolExecutor:
        """One thread of its own for preparing, at a lower priority (see
        PREPARE_NICENESS), so no other work handed to a thread runs lowered."""
        if self._preparer is None:
            self._preparer = ThreadPoolExecutor(
                1, thread_name_prefix="metadata-prepare", initializer=_lower_priority
            )
        return self._preparer

    async def wait_idle(self) -> None:
        """Until every submitted step has been applied."""
        await self._idle.wait()

    async def close(self) -> None:
        self._queue.clear()
        if self._task is not None:
            await cancel_and_wait(self._task)
        if self._preparer is not None:
            self._preparer.shutdown(wait=False)
            self._preparer = None
        self._idle.set()


async def _apply_in_steps(apply: Apply, prepared: object) -> None:
    steps = apply(prepared)
    if steps is not None:
        for _ in steps:
            await asyncio.sleep(0)


async def _in_thread(thread: ThreadPoolExecutor, prepare: Prepare) -> object:
    with switch_interval(PREPARE_SWITCH_INTERVAL_S):
        return await asyncio.get_running_loop().run_in_executor(thread, prepare)


def _lower_priority() -> None:
    """Where threads have priorities of their own (Linux), lower this one's."""
    try:
        os.setpriority(
            os.PRIO_PROCESS,
            threading.get_native_id(),
            os.getpriority(os.PRIO_PROCESS, 0) + PREPARE_NICENESS,
        )
    except (AttributeError, OSError):
        log.debug("could not lower the metadata preparing thread's priority")
