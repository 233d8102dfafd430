"""Background loops stop on the first cancel, even where 3.11's wait_for loses it."""

from __future__ import annotations

import asyncio
import sys

import pytest

from samsa.eventloop.cancellation import acquire_within, cancel_and_wait, wait_event


async def _cancel_as_the_event_fires(wait_once) -> tuple[asyncio.Task[None], list[int]]:  # type: ignore[no-untyped-def]
    """A loop waiting on an event, cancelled in the window after the event's
    waiter completed and before the loop resumed: the window 3.11 mishandles."""
    event = asyncio.Event()
    rounds = [0]

    async def loop() -> None:
        while True:
            rounds[0] += 1
            event.clear()
            await wait_once(event)

    task = asyncio.ensure_future(loop())
    for _ in range(2):
        await asyncio.sleep(0)
    event.set()
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.wait({task}, timeout=1)
    return task, rounds


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12's wait_for keeps the cancel")
def test_wait_for_on_this_python_loses_the_cancel() -> None:
    """The hazard itself, so the test below is known to cover a real window."""

    async def wait_once(event: asyncio.Event) -> None:
        try:
            await asyncio.wait_for(event.wait(), 10)
        except TimeoutError:
            pass

    async def scenario() -> bool:
        task, _ = await _cancel_as_the_event_fires(wait_once)
        running = not task.done()
        await cancel_and_wait(task)
        return running

    assert asyncio.run(scenario()), "wait_for kept the cancel: the window moved"


def test_wait_event_keeps_the_cancel_in_the_same_window() -> None:
    async def wait_once(event: asyncio.Event) -> None:
        await wait_event(event, 10)

    async def scenario() -> tuple[bool, int]:
        task, rounds = await _cancel_as_the_event_fires(wait_once)
        return task.cancelled(), rounds[0]

    cancelled, rounds = asyncio.run(scenario())
    assert cancelled and rounds == 1  # it never went round again


def test_wait_event_reports_set_or_timed_out() -> None:
    async def scenario() -> tuple[bool, bool, bool]:
        event = asyncio.Event()
        timed_out = await wait_event(event, 0.01)
        asyncio.get_running_loop().call_soon(event.set)
        fired = await wait_event(event, 10)
        already = await wait_event(event, 0)
        return timed_out, fired, already

    assert asyncio.run(scenario()) == (False, True, True)


def test_cancel_and_wait_cancels_again_until_the_task_ends() -> None:
    """A task that shrugs off its first two cancels (as a lost cancel looks from
    outside) still ends; a failed task's exception is taken, not warned about."""

    async def stubborn(shrugs: list[int]) -> None:
        while True:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                shrugs[0] += 1
                if shrugs[0] > 2:
                    raise

    async def failing() -> None:
        raise RuntimeError("failed before the stop")

    async def scenario() -> tuple[int, bool, bool]:
        shrugs = [0]
        task = asyncio.ensure_future(stubborn(shrugs))
        broken = asyncio.ensure_future(failing())
        await asyncio.sleep(0)
        await cancel_and_wait([task, broken])
        await cancel_and_wait(None)
        return shrugs[0], task.cancelled(), broken.done()

    assert asyncio.run(scenario()) == (3, True, True)


def test_acquire_within_gives_up_in_time_and_leaves_the_lock_to_the_next() -> None:
    """A wait given up on neither holds the lock nor keeps it from the next taker."""

    async def scenario() -> tuple[bool, bool, bool, bool]:
        lock = asyncio.Lock()
        free = await acquire_within(lock, 0.01)
        lock_held_by_us = lock.locked()
        gave_up = await acquire_within(lock, 0.01)
        lock.release()
        await asyncio.sleep(0)
        after_give_up = lock.locked()
        taken_again = await acquire_within(lock, 0.01)
        return free and lock_held_by_us, gave_up, after_give_up, taken_again

    assert asyncio.run(scenario()) == (True, False, False, True)
