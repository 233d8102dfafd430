"""A fenced broker asks to be unfenced as soon as its metadata reaches its
registration, not on its next poll (Kafka's BrokerLifecycleManager does the
same).  The controller here is a script of answers: what is tested is when
the lifecycle asks, which a real controller would only blur with its own
timing; the cluster tests cover the real exchange."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

from samsa.errors import ErrorCode
from samsa.server.metadata.broker_lifecycle import (
    BROKER_HEARTBEAT,
    BROKER_REGISTRATION,
    BrokerLifecycle,
    Registration,
)

EPOCH = 4242
SLOW_POLL_MS = 60_000
"""Far beyond the test's bound: a heartbeat that waited for the poll fails it."""


class ScriptedController:
    """Registers at ``EPOCH``; unfences once a heartbeat shows that offset applied."""

    def __init__(self) -> None:
        self.heartbeats: asyncio.Queue[int] = asyncio.Queue()

    async def __call__(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if api_key == BROKER_REGISTRATION:
            return {"error_code": 0, "broker_epoch": EPOCH}
        assert api_key == BROKER_HEARTBEAT
        offset = body["current_metadata_offset"]
        self.heartbeats.put_nowait(offset)
        return {"error_code": 0, "is_fenced": offset < EPOCH, "should_shut_down": False}


@contextlib.asynccontextmanager
async def registered_and_fenced() -> AsyncIterator[tuple[ScriptedController, BrokerLifecycle]]:
    """A started lifecycle whose first heartbeat (short of the registration) was answered."""
    controller = ScriptedController()
    applied = [EPOCH - 100]
    registration = Registration(1, "cluster", [], None, b"\x00" * 16)
    broker = BrokerLifecycle(
        registration,
        controller,
        lambda: applied[0],
        heartbeat_interval_ms=SLOW_POLL_MS,
        recovery_poll_ms=SLOW_POLL_MS,
    )
    broker.start()
    try:
        assert await asyncio.wait_for(controller.heartbeats.get(), 30) == EPOCH - 100
        applied[0] = EPOCH
        yield controller, broker
    finally:
        await broker.stop()


def test_the_heartbeat_that_shows_the_catch_up_goes_at_once() -> None:
    async def scenario() -> None:
        async with registered_and_fenced() as (controller, broker):
            broker.note_metadata_applied(EPOCH)
            assert await asyncio.wait_for(controller.heartbeats.get(), 30) == EPOCH
            await asyncio.wait_for(broker.unfenced.wait(), 30)

    asyncio.run(scenario())


def test_metadata_short_of_the_registration_does_not_ask_early() -> None:
    async def scenario() -> None:
        async with registered_and_fenced() as (controller, broker):
            broker.note_metadata_applied(EPOCH - 1)
            # Everything the wake-up would have started has run by now.
            for _ in range(20):
                await asyncio.sleep(0)
            assert controller.heartbeats.empty()
            assert not broker.unfenced.is_set()

    asyncio.run(scenario())


class FenceHonouringController(ScriptedController):
    """Also keeps fenced a broker whose heartbeat asks for it (``want_fence``),
    as the real controller's state machine does (see test_broker_heartbeats)."""

    def __init__(self) -> None:
        super().__init__()
        self.want_fence: list[bool] = []

    async def __call__(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        response = await super().__call__(api_key, version, body)
        if api_key == BROKER_HEARTBEAT:
            self.want_fence.append(body["want_fence"])
            response["is_fenced"] = response["is_fenced"] or body["want_fence"]
        return response


def test_a_broker_still_loading_its_logs_stays_fenced_until_it_is_ready() -> None:
    """The broker registers while its logs load (so the controller's round trips
    overlap with them) and asks to stay fenced, caught up or not, until they
    are open; then it asks at once, without waiting for the poll."""

    async def scenario() -> None:
        controller = FenceHonouringController()
        registration = Registration(1, "cluster", [], None, b"\x00" * 16)
        broker = BrokerLifecycle(
            registration,
            controller,
            lambda: EPOCH,  # caught up from the start
            heartbeat_interval_ms=SLOW_POLL_MS,
            recovery_poll_ms=SLOW_POLL_MS,
            ready_to_unfence=False,
        )
        broker.start()
        try:
            assert await asyncio.wait_for(controller.heartbeats.get(), 30) == EPOCH
            broker.note_metadata_applied(EPOCH)
            assert await asyncio.wait_for(controller.heartbeats.get(), 30) == EPOCH
            assert controller.want_fence == [True, True]
            assert not broker.unfenced.is_set()
            broker.set_ready_to_unfence()
            await asyncio.wait_for(broker.unfenced.wait(), 30)
            assert controller.want_fence[-1] is False
        finally:
            await broker.stop()

    asyncio.run(scenario())


class RefusingController(ScriptedController):
    """Refuses the first registrations as a controller does while the previous
    incarnation's session has not expired (after a SIGKILL)."""

    def __init__(self, refusals: int) -> None:
        super().__init__()
        self.refusals = refusals
        self.registrations = 0

    async def __call__(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if api_key == BROKER_REGISTRATION:
            self.registrations += 1
            if self.registrations <= self.refusals:
                return {"error_code": ErrorCode.DUPLICATE_BROKER_REGISTRATION, "broker_epoch": -1}
        return await super().__call__(api_key, version, body)


def test_a_refused_registration_is_retried_with_a_growing_backoff() -> None:
    """Five refusals at a 20 ms backoff: asked again every 20 ms they take 100 ms,
    doubling (20+40+80+160+200 ms) they take at least 500 ms."""

    async def scenario() -> None:
        controller = RefusingController(refusals=5)
        registration = Registration(1, "cluster", [], None, b"\x00" * 16)
        broker = BrokerLifecycle(
            registration,
            controller,
            lambda: EPOCH,
            heartbeat_interval_ms=SLOW_POLL_MS,
            recovery_poll_ms=SLOW_POLL_MS,
            retry_backoff_ms=20,
        )
        started = time.monotonic()
        broker.start()
        try:
            await asyncio.wait_for(controller.heartbeats.get(), 30)
            assert controller.registrations == 6
            assert broker.broker_epoch == EPOCH
            assert time.monotonic() - started >= 0.5
        finally:
            await broker.stop()

    asyncio.run(scenario())
