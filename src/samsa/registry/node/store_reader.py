"""Every node replays ``_schemas`` from offset 0, and keeps tailing it, into its ``RegistryState``.

A thread reads the topic's one partition with Samsa's consumer (no group,
``read_committed``: the primary writes in transactions, and an aborted one --
a fenced primary's -- never shows), from whichever node leads it.  Records
are handed to the event loop in the batches a poll returns and applied there,
so the state the HTTP handlers read is only ever changed on the loop (no
lock), and applying a poll's batch is a few milliseconds of JSON.

``caught_up`` is set once the reader has applied everything committed before
it started (the end offset it saw then): the registry answers nobody before
that, so a restarted node never serves an older state than it served before.
``wait_applied(offset)`` is how the primary waits until its own write is in
its state, to answer from it; ``wait_position(offset)`` how a check that must
see every registration made before it (schema id validation on produce)
waits until the reader has read that far (its position passes transaction
markers too, which ``applied_offset`` never shows).  A failure (the cluster unreachable, the topic
led by nobody for a while) is logged and retried where the reader left off.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from samsa.registry.node.retrying_thread import RetryingThread
from samsa.registry.store import RegistryState

log = logging.getLogger("samsa.registry")

POLL_S = 0.5

Applied = tuple[bytes | None, bytes | None, int]


class StoreReader:
    def __init__(
        self,
        client_config: dict[str, Any],
        topic: str,
        state: RegistryState,
        loop: asyncio.AbstractEventLoop,
        name: str,
    ) -> None:
        """``name`` goes into the client id and the thread's name."""
        self.client_config = client_config
        self.topic = topic
        self.state = state
        self.loop = loop
        self.name = name
        self.caught_up = asyncio.Event()
        self.records_applied = 0
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self.position = 0
        """The next offset the reader will read, as applied on the loop."""
        self._position_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._stopping = threading.Event()
        self._thread = RetryingThread(
            f"{self.name}-reader",
            self._tail,
            self._stopping,
            lambda exc: f"schema registry: reading {self.topic} failed ({exc}); retrying",
        )
        self._next_offset = 0

    def start(self) -> None:
        self._thread.start()

    async def stop(self) -> None:
        await self._thread.stop(5.0)
        for _, waiter in self._waiters + self._position_waiters:
            if not waiter.done():
                waiter.cancel()
        self._waiters.clear()
        self._position_waiters.clear()

    async def wait_applied(self, offset: int, timeout: float) -> bool:
        """True once the state has applied the record at ``offset``; False after ``timeout``."""
        if self.state.applied_offset >= offset:
            return True
        waiter: asyncio.Future[None] = self.loop.create_future()
        self._waiters.append((offset, waiter))
        try:
            done, _ = await asyncio.wait({waiter}, timeout=timeout)
        finally:
            self._waiters = [(o, w) for o, w in self._waiters if w is not waiter]
        return bool(done) and not waiter.cancelled()

    async def wait_position(self, offset: int, timeout: float) -> bool:
        """True once everything before ``offset`` has been read and applied."""
        if self.position >= offset:
            return True
        waiter: asyncio.Future[None] = self.loop.create_future()
        self._position_waiters.append((offset, waiter))
        try:
            done, _ = await asyncio.wait({waiter}, timeout=timeout)
        finally:
            self._position_waiters = [(o, w) for o, w in self._position_waiters if w is not waiter]
        return bool(done) and not waiter.cancelled()

    # -- on the loop ----------------------------------------------------------------
    def _advance(self, position: int) -> None:
        self.position = max(self.position, position)
        for offset, waiter in self._position_waiters:
            if offset <= self.position and not waiter.done():
                waiter.set_result(None)

    def _apply(self, batch: list[Applied]) -> None:
        for key, value, offset in batch:
            if key is None:
                log.warning("%s: skipped a record without a key at offset %d", self.topic, offset)
                continue
            skipped = self.state.apply(key, value, offset)
            if skipped is not None:
                log.warning("%s offset %d: %s", self.topic, offset, skipped)
        self.records_applied += len(batch)
        applied = self.state.applied_offset
        for offset, waiter in self._waiters:
            if offset <= applied and not waiter.done():
                waiter.set_result(None)

    def _mark_caught_up(self) -> None:
        if not self.caught_up.is_set():
            log.info(
                "schema registry: replayed %s (%d records, up to offset %d)",
                self.topic,
                self.records_applied,
                self.state.applied_offset,
            )
            self.caught_up.set()

    def _to_loop(self, callback: Any, *args: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:  # the loop closed while stopping
            self._stopping.set()

    # -- on the thread (retried by ``RetryingThread`` until stopped) -------------------
    def _tail(self) -> None:
        from samsa.client import Consumer

        consumer = Consumer(
            {
                **self.client_config,
                "client.id": f"{self.name}-reader",
                "isolation.level": "read_committed",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        partition = (self.topic, 0)
        try:
            consumer.assign([partition])
            consumer.seek(partition, self._next_offset)
            end = None if self.caught_up.is_set() else consumer.end_offsets([partition])
            told = -1
            while not self._stopping.is_set():
                records = consumer.poll(POLL_S)
                if records:
                    self._next_offset = records[-1].offset + 1
                    self._to_loop(self._apply, [(r.key, r.value, r.offset) for r in records])
                position = consumer.position(partition)
                if position != told:  # after the records before it
                    self._to_loop(self._advance, position)
                    told = position
                if end is not None and consumer.position(partition) >= max(end.values()):
                    self._to_loop(self._mark_caught_up)  # after the batches before it
                    end = None
        finally:
            consumer.close(timeout=1.0)
