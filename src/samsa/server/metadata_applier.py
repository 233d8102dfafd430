"""Apply committed metadata to the broker in order, with file work off the loop.

A committed batch that creates a thousand partitions here means a thousand
directories and segment files; made inline, that blocked the event loop (and
with it every produce and fetch) for seconds on a busy disk, and the
CreateTopics forwarded to the controller timed out.  So a batch that brings
many new partitions is applied in two steps, as Kafka's metadata publisher
does its log creation beside the request threads: ``prepare`` (creating the
logs, in a worker thread), then ``apply`` (cheap now, on the loop).

Order is kept: while any batch waits for its preparation, later batches (even
small ones, which would otherwise apply at once) queue behind it.  A small
batch with nothing queued applies inline, as before.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable

from samsa.cancellation import cancel_and_wait

log = logging.getLogger("samsa.server")

Prepare = Callable[[], object]
Apply = Callable[[object], None]


class SerialMetadataApplier:
    """A FIFO of (prepare in a thread, then apply on the loop) steps."""

    def __init__(self) -> None:
        self._queue: collections.deque[tuple[Prepare | None, Apply]] = collections.deque()
        self._task: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()

    def submit(self, apply: Apply, prepare: Prepare | None = None) -> None:
        """Run ``apply(prepare())`` after everything submitted before; inline
        when nothing is queued and there is nothing to prepare."""
        if prepare is None and not self._queue and self._idle.is_set():
            apply(None)
            return
        self._queue.append((prepare, apply))
        self._idle.clear()
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        try:
            while self._queue:
                prepare, apply = self._queue.popleft()
                try:
                    prepared = None if prepare is None else await asyncio.to_thread(prepare)
                    apply(prepared)
                except Exception:
                    log.exception("applying committed metadata failed")
        finally:
            if not self._queue:
                self._idle.set()

    async def wait_idle(self) -> None:
        """Until every submitted step has been applied."""
        await self._idle.wait()

    async def close(self) -> None:
        self._queue.clear()
        if self._task is not None:
            await cancel_and_wait(self._task)
        self._idle.set()
