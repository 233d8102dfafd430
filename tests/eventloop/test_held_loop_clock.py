"""The Raft driver's clock leaves out the time its event loop was held."""

from __future__ import annotations

import asyncio

from samsa.eventloop.held_loop_clock import TICK_MS, TOLERANCE_MS, HeldLoopClock


class FakeTime:
    def __init__(self) -> None:
        self.ms = 1_000

    def __call__(self) -> int:
        return self.ms


def test_time_runs_while_ticks_come_on_time() -> None:
    real = FakeTime()
    clock = HeldLoopClock(real)
    for _ in range(10):
        real.ms += TICK_MS + 20  # scheduling noise, within the tolerance
        clock.tick()
    assert clock() == real.ms
    assert clock.held_ms == 0


def test_a_hold_counts_only_up_to_the_tolerance_before_and_after_the_late_tick() -> None:
    real = FakeTime()
    clock = HeldLoopClock(real)
    start = clock()
    real.ms += 5_000  # the loop held: no tick for five seconds
    during = clock()  # a machine call before the late tick runs
    assert during == start + TICK_MS + TOLERANCE_MS
    clock.tick()
    assert clock() == during  # continuous across the late tick
    real.ms += 30
    assert clock() == during + 30  # and runs on at the real pace
    assert clock.held_ms == 5_000 - TICK_MS - TOLERANCE_MS


def test_the_time_before_it_starts_ticking_is_no_hold() -> None:
    """A controller's clock is made at start-up and starts ticking when the node
    becomes the active controller, maybe minutes later; its first reading (the
    sessions it gives every broker) must be now, not the start-up plus a tick."""
    real = FakeTime()

    async def scenario() -> tuple[int, int]:
        clock = HeldLoopClock(real)
        real.ms += 300_000
        ticking = clock.start()
        first = clock()
        await asyncio.sleep(0)
        ticking.cancel()
        return first, clock()

    first, later = asyncio.run(scenario())
    assert first == later == real.ms
