"""The inline coroutine runner the socket server uses for handlers."""

from __future__ import annotations

import asyncio

import pytest

from samsa.server.connections import eager


async def _immediate() -> str:
    lock = asyncio.Lock()
    async with lock:  # uncontended: never suspends
        return "done"


async def _waits(fut: asyncio.Future[int]) -> int:
    before = 1
    value = await fut
    await asyncio.sleep(0)
    return before + value


async def _fails_later(fut: asyncio.Future[None]) -> None:
    await fut
    raise ValueError("after the wait")


def test_a_coroutine_that_never_waits_finishes_inline() -> None:
    async def main() -> None:
        finished, value = eager.start(_immediate())
        assert finished and value == "done"

    asyncio.run(main())


def test_a_waiting_coroutine_resumes_where_it_stopped() -> None:
    async def main() -> None:
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        finished, suspended = eager.start(_waits(fut))
        assert not finished and isinstance(suspended, eager.Suspended)
        task = asyncio.ensure_future(_await(suspended))
        await asyncio.sleep(0)
        assert not task.done()
        fut.set_result(41)
        assert await task == 42

    asyncio.run(main())


def test_errors_before_and_after_the_wait_reach_the_caller() -> None:
    async def raises_at_once() -> None:
        raise KeyError("now")

    async def main() -> None:
        with pytest.raises(KeyError):
            eager.start(raises_at_once())
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        finished, suspended = eager.start(_fails_later(fut))
        assert not finished
        task = asyncio.ensure_future(_await(suspended))
        fut.set_result(None)
        with pytest.raises(ValueError, match="after the wait"):
            await task

    asyncio.run(main())


def test_cancelling_the_task_cancels_the_coroutine() -> None:
    cleaned = []

    async def parked(fut: asyncio.Future[None]) -> None:
        try:
            await fut
        finally:
            cleaned.append(True)

    async def main() -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        _, suspended = eager.start(parked(fut))
        task = asyncio.ensure_future(_await(suspended))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert cleaned == [True] and fut.cancelled()

    asyncio.run(main())


async def _await(aw: object) -> object:
    return await aw  # type: ignore[misc]
