"""The Raft driver's clock leaves out the time its event loop was held."""

from __future__ import annotations

from samsa.held_loop_clock import TICK_MS, TOLERANCE_MS, HeldLoopClock


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
