"""The cyclic collector is off while a node starts, and never for long."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable

import pytest

from samsa.server.metadata.heap import (
    CollectorPause,
    collector_paused,
    freeze_start_up,
    settle_heap,
)


def test_the_collector_is_off_within_and_back_after() -> None:
    async def scenario() -> None:
        with collector_paused(asyncio.get_running_loop(), 60.0):
            assert not gc.isenabled()
        assert gc.isenabled()

    assert gc.isenabled()
    asyncio.run(scenario())
    assert gc.isenabled()


def test_the_collector_resumes_after_the_limit_even_within() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        with collector_paused(loop, 0.0):
            assert not gc.isenabled()
            later = loop.create_future()
            loop.call_later(0.01, later.set_result, None)  # due after the limit
            await later
            assert gc.isenabled()
        assert gc.isenabled()

    asyncio.run(scenario())


def test_a_collector_that_was_off_stays_off() -> None:
    async def scenario() -> None:
        with collector_paused(asyncio.get_running_loop(), 0.0):
            await asyncio.sleep(0)
        assert not gc.isenabled()

    gc.disable()
    try:
        asyncio.run(scenario())
    finally:
        gc.enable()


def test_pauses_nest_the_collector_comes_back_when_the_last_ends() -> None:
    """The loader's run of replay steps and the applier's batch of new partitions
    overlap: the run ending first turned the collector back on in the middle of
    the batch, whose passes it is off for (60-130 ms each)."""

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        run = CollectorPause()
        run.hold(loop, 60.0)
        with collector_paused(loop, 60.0):
            run.release()
            assert not gc.isenabled()
        assert gc.isenabled()
        with collector_paused(loop, 60.0):
            run.hold(loop, 60.0)
        assert not gc.isenabled()
        run.release()
        assert gc.isenabled()

    frozen = gc.get_freeze_count()
    try:
        asyncio.run(scenario())
        assert gc.get_freeze_count() > frozen  # what each run built is frozen
    finally:
        gc.unfreeze()
    assert gc.isenabled()


@pytest.mark.parametrize("freeze", [freeze_start_up, settle_heap])
def test_start_up_and_a_batch_are_frozen_without_a_collection(freeze: Callable[[], None]) -> None:
    """One pass over everything a 10,000-partition start built cost half a
    second of the restart and found almost no garbage; passes over what 1,000
    new partitions built held the loop 55-130 ms on a loaded machine and found
    nothing."""
    gc.disable()
    try:
        built = [[i] for i in range(10_000)]  # tracked objects, as a start builds
        passes = [generation["collections"] for generation in gc.get_stats()]
        frozen = gc.get_freeze_count()
        freeze()
        assert [generation["collections"] for generation in gc.get_stats()] == passes
        assert gc.get_freeze_count() >= frozen + len(built)
    finally:
        gc.unfreeze()
        gc.enable()
