"""This node's copy of the registry's state, for the broker's own questions (validation, console).

A broker checks schema ids on produce (``confluent.value.schema.validation``)
and its console lists subjects, whether or not this node serves the
registry's REST API.  So every broker that needs the registry's state has
it here: on a node started with ``--registry-listen`` it is the registry's
own (its reader already replays ``_schemas``); on any other node a reader of
its own replays ``_schemas`` the same way, started the first time something
asks (a produce to a validated topic, the console's subjects page), and then
tails it for as long as the broker runs.  The state is a few kilobytes per
schema, and reading it is what every registry node does anyway; the
alternative, requiring ``--registry-listen`` on every broker that leads a
validated partition, would tie a topic's configuration to where its leaders
happen to be.

``refresh`` is what makes validation exact: a producer that registers a
schema and produces at once may reach a broker whose reader has not yet
read the registration.  Before refusing a record for an unknown id the
broker asks ``_schemas``'s end offset (ListOffsets, read_committed) and
waits until the reader has read that far, so every registration answered
before the produce was sent is seen.  Concurrent refreshes share one round
trip: a refresh that started after the caller asked answers for it too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from samsa.eventloop.cancellation import wait_event
from samsa.registry.node.store_reader import StoreReader
from samsa.registry.store import RegistryState

log = logging.getLogger("samsa.registry")


class RegistryMirror:
    def __init__(
        self,
        client_config: dict[str, Any],
        topic: str,
        name: str,
        *,
        state: RegistryState | None = None,
        reader: StoreReader | None = None,
    ) -> None:
        """With ``state`` and ``reader``: the registry's own (already started by it);
        without: a reader of this mirror's, started by ``start``."""
        self.loop = asyncio.get_running_loop()
        self.topic = topic
        self.client_config = client_config
        self.name = name
        self.state = state if state is not None else RegistryState()
        self._owns_reader = reader is None
        self.reader = reader or StoreReader(client_config, topic, self.state, self.loop, name)
        self._started = not self._owns_reader
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"{name}-probe")
        self._probe: Any = None
        self._refreshing: asyncio.Future[bool] | None = None
        self._refresh_started = 0.0

    @property
    def ready(self) -> bool:
        """The state holds everything ``_schemas`` held when the reader started."""
        return self.reader.caught_up.is_set()

    def start(self) -> None:
        if not self._started:
            self._started = True
            log.info("schema registry: reading %s for this broker (%s)", self.topic, self.name)
            self.reader.start()

    async def wait_ready(self, timeout: float) -> bool:
        self.start()
        return await wait_event(self.reader.caught_up, timeout)

    async def refresh(self, timeout: float) -> bool:
        """Read ``_schemas`` up to its end as of now (or as of a refresh that started
        after this call); False when that takes longer than ``timeout``."""
        if not await self.wait_ready(timeout):
            return False
        asked = self.loop.time()
        deadline = asked + timeout
        while True:
            running = self._refreshing
            if running is None or running.done():
                self._refresh_started = self.loop.time()
                running = self._refreshing = asyncio.ensure_future(self._read_to_end(deadline))
                return await asyncio.shield(running)
            if self._refresh_started >= asked:
                return await asyncio.shield(running)
            # started before this call: it may miss what was registered since
            left = deadline - self.loop.time()
            if left <= 0:
                return False
            await asyncio.wait({running}, timeout=left)

    async def _read_to_end(self, deadline: float) -> bool:
        try:
            end = await self.loop.run_in_executor(self._executor, self._end_offset)
        except Exception as exc:
            log.warning("schema registry: the end of %s is unknown: %s", self.topic, exc)
            return False
        return await self.reader.wait_position(end, max(0.0, deadline - self.loop.time()))

    def _end_offset(self) -> int:
        """On the probe's thread: ``_schemas``'s last stable offset."""
        from samsa.client import Consumer

        if self._probe is None:
            self._probe = Consumer(
                {
                    **self.client_config,
                    "client.id": f"{self.name}-probe",
                    "isolation.level": "read_committed",
                    "enable.auto.commit": False,
                }
            )
        partition = (self.topic, 0)
        return int(max(self._probe.end_offsets([partition]).values()))

    async def stop(self) -> None:
        if self._owns_reader and self._started:
            await self.reader.stop()
        probe = self._probe
        if probe is not None:
            with contextlib.suppress(Exception):
                await self.loop.run_in_executor(self._executor, probe.close, 1.0)
        self._executor.shutdown(wait=False)
