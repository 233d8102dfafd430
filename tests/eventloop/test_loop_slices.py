"""A long pass lets the event loop run between its slices, and only between them."""

from __future__ import annotations

import asyncio

from samsa.eventloop.loop_slices import in_slices


def test_the_loop_runs_between_slices_not_before_the_first() -> None:
    async def run() -> list[object]:
        events: list[object] = []
        loop = asyncio.get_running_loop()
        loop.call_soon(events.append, "other")  # a request waiting for the loop
        async for part in in_slices(list(range(25)), step=10):
            events.append(list(part))
        return events

    events = asyncio.run(run())
    assert events == [list(range(10)), "other", list(range(10, 20)), list(range(20, 25))]


def test_a_short_pass_is_one_slice_and_an_empty_one_none() -> None:
    async def run(items: list[int]) -> list[list[int]]:
        return [list(part) async for part in in_slices(items, step=10)]

    assert asyncio.run(run([1, 2, 3])) == [[1, 2, 3]]
    assert asyncio.run(run([])) == []
