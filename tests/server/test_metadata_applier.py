"""The broker's metadata applier: file work off the loop, slices between
requests, and the committed order kept throughout."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

from samsa.server.metadata.applier import SerialMetadataApplier


def test_a_small_step_with_nothing_queued_applies_inline() -> None:
    async def main() -> None:
        applier = SerialMetadataApplier()
        done: list[str] = []
        applier.submit(lambda _: done.append("small"))
        assert done == ["small"]  # visible as soon as on_delta returns

        def one_slice(_: object) -> Iterator[None]:
            done.append("one slice")
            yield from ()

        applier.submit(one_slice)
        assert done == ["small", "one slice"]
        await applier.close()

    asyncio.run(main())


def test_later_steps_wait_for_a_prepared_one_and_the_loop_serves_meanwhile() -> None:
    async def main() -> None:
        applier = SerialMetadataApplier()
        order: list[str] = []
        release = threading.Event()
        loop_ran_while_preparing = asyncio.Event()

        def prepare() -> str:
            assert threading.current_thread() is not threading.main_thread()
            release.wait(10)
            return "logs"

        def big(prepared: object) -> Iterator[None]:
            assert prepared == "logs"
            for i in range(3):
                if i:
                    yield
                order.append(f"big slice {i}")

        applier.submit(big, prepare)
        applier.submit(lambda _: order.append("small after"))
        assert order == []  # queued behind the preparation, not inline
        asyncio.get_running_loop().call_soon(loop_ran_while_preparing.set)
        await asyncio.wait_for(loop_ran_while_preparing.wait(), 5)
        release.set()
        await asyncio.wait_for(applier.wait_idle(), 10)
        assert order == ["big slice 0", "big slice 1", "big slice 2", "small after"]
        await applier.close()

    asyncio.run(main())


def test_requests_run_between_slices_of_a_large_batch() -> None:
    async def main() -> None:
        applier = SerialMetadataApplier()
        events: list[str] = []

        def sliced(_: object) -> Iterator[None]:
            for i in range(3):
                if i:
                    yield
                events.append(f"slice {i}")

        async def request() -> None:
            events.append("request")

        applier.submit(sliced)
        assert events == ["slice 0"]  # the first slice inline, the rest later
        task = asyncio.ensure_future(request())
        await asyncio.wait_for(applier.wait_idle(), 5)
        await task
        assert events.index("request") < events.index("slice 2")
        await applier.close()

    asyncio.run(main())


def test_a_failed_preparation_still_applies_the_step_then_the_next() -> None:
    async def main() -> None:
        applier = SerialMetadataApplier()
        done: list[str] = []

        def broken() -> object:
            raise OSError("disk")

        applier.submit(lambda prepared: done.append(f"applied with {prepared}"), broken)
        applier.submit(lambda _: done.append("next"))
        await asyncio.wait_for(applier.wait_idle(), 5)
        assert done == ["applied with None", "next"]
        await applier.close()

    asyncio.run(main())


def test_preparing_runs_in_a_thread_of_its_own_at_a_lower_priority() -> None:
    """Creating a thousand partitions' files took the CPU from every broker's
    loop on the machine: the preparing thread yields it to them."""
    import os

    from samsa.server.metadata.applier import PREPARE_NICENESS

    async def main() -> list[tuple[str, int]]:
        applier = SerialMetadataApplier()
        seen: list[tuple[str, int]] = []

        def prepare() -> None:
            seen.append((threading.current_thread().name, os.getpriority(os.PRIO_PROCESS, 0)))

        for _ in range(2):
            applier.submit(lambda _: None, prepare)
        await asyncio.wait_for(applier.wait_idle(), 10)
        await applier.close()
        return seen

    own = os.getpriority(os.PRIO_PROCESS, 0)
    seen = asyncio.run(main())
    assert len(seen) == 2 and seen[0] == seen[1]  # one thread, lowered once
    name, niceness = seen[0]
    assert name.startswith("metadata-prepare")
    assert niceness == min(own + PREPARE_NICENESS, 19)
    assert os.getpriority(os.PRIO_PROCESS, 0) == own  # the loop's thread keeps its own


def test_the_collector_is_off_while_a_batch_is_prepared_and_applied_then_back() -> None:
    """Collector passes over the objects of 1,000 new partitions held the loop
    55-130 ms each, from the loop and from the preparing thread."""
    import gc

    async def main() -> list[str]:
        applier = SerialMetadataApplier()
        seen: list[str] = []

        def prepare() -> str:
            seen.append(f"prepare: collector {'on' if gc.isenabled() else 'off'}")
            return "logs"

        built: list[list[int]] = []

        def big(_: object) -> Iterator[None]:
            for i in range(2):
                if i:
                    yield
                seen.append(f"slice {i}: collector {'on' if gc.isenabled() else 'off'}")
                built.extend([n] for n in range(5_000))

        passes = gc.get_stats()[0]["collections"]
        applier.submit(big, prepare)
        await asyncio.wait_for(applier.wait_idle(), 10)
        seen.append(f"after: collector {'on' if gc.isenabled() else 'off'}")
        # Frozen before the collector was back: no pass scanned what it built.
        assert gc.get_stats()[0]["collections"] == passes
        assert gc.get_freeze_count() >= len(built)
        await applier.close()
        return seen

    assert gc.isenabled()
    try:
        seen = asyncio.run(main())
    finally:
        gc.unfreeze()
    assert seen == [
        "prepare: collector off",
        "slice 0: collector off",
        "slice 1: collector off",
        "after: collector on",
    ]
