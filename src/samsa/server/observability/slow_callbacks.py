"""Which callback held the event loop, and for how long: a measuring aid.

A produce waits behind whatever runs on the loop before it, so a 50 ms
callback is 50 ms (more on a loaded machine) added to the request's latency.
py-spy says where time goes in total but not which single callback held the
loop; asyncio's debug mode does, but it also records a stack at every
``call_soon``, which slows a busy broker enough to change what is measured.

Off by default and free: unless the ``SAMSA_SLOW_CALLBACK_MS`` environment
variable is set when the broker starts, ``install`` does nothing.  When it is,
every loop callback (``asyncio.Handle._run``, timers included) is timed, and
one taking at least that many milliseconds is logged at WARNING on
``samsa.server.observability.slow_callbacks`` with the task's coroutine and the line it
stopped at (a task step) or the callback's name, and with the CPU time the
loop's thread spent in it (on a loaded machine a callback also takes long
when the process merely waited for a core: the CPU time is the callback's
own cost).  So is a garbage collection that long, which runs inside
whatever callback allocated when it was due.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["ENV_VAR", "describe", "install"]

ENV_VAR = "SAMSA_SLOW_CALLBACK_MS"

log = logging.getLogger(__name__)


def install() -> Callable[[], None] | None:
    """Time every loop callback from now on if ``SAMSA_SLOW_CALLBACK_MS`` asks
    for it (process-wide: a broker runs one loop); returns what undoes it
    (for tests), None when off."""
    setting = os.environ.get(ENV_VAR)
    if not setting:
        return None
    threshold_s = float(setting) / 1000
    untimed = asyncio.Handle._run

    def timed_run(handle: asyncio.Handle) -> None:
        resumed_at = suspended_at(handle)
        started, cpu_started = time.perf_counter(), time.thread_time()
        untimed(handle)
        took = time.perf_counter() - started
        if took >= threshold_s:
            log.warning(
                "loop held %.1f ms (%.1f ms of CPU) by %s%s",
                took * 1000,
                (time.thread_time() - cpu_started) * 1000,
                describe(handle),
                f" (resumed from {resumed_at})" if resumed_at else "",
            )

    on_collection = _collection_timer(threshold_s)
    asyncio.Handle._run = timed_run  # type: ignore[method-assign,assignment]
    gc.callbacks.append(on_collection)
    log.warning("timing loop callbacks: those of %s ms or more are logged", setting)

    def uninstall() -> None:
        asyncio.Handle._run = untimed  # type: ignore[method-assign]
        gc.callbacks.remove(on_collection)

    return uninstall


def _collection_timer(threshold_s: float) -> Callable[[str, dict[str, int]], None]:
    """A ``gc.callbacks`` entry logging collections of at least ``threshold_s``:
    a pass over the old generation holds the loop inside whichever callback
    happened to allocate, which would otherwise take the blame."""
    started = [0.0, 0.0]

    def on_collection(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[:] = time.perf_counter(), time.thread_time()
            return
        took = time.perf_counter() - started[0]
        if took >= threshold_s:
            log.warning(
                "garbage collection of generation %d in %s took %.1f ms (%.1f ms of CPU, "
                "%d collected)",
                info["generation"],
                threading.current_thread().name,
                took * 1000,
                (time.thread_time() - started[1]) * 1000,
                info["collected"],
            )

    return on_collection


def describe(handle: asyncio.Handle) -> str:
    """A task step as its coroutine and where it stopped (the innermost await
    it is now suspended at, or its end), any other callback by its name."""
    task = _task_of(handle)
    if task is None:
        callback: Any = getattr(handle, "_callback", None)
        name = str(getattr(callback, "__qualname__", repr(callback)))
        protocol = getattr(getattr(callback, "__self__", None), "_protocol", None)
        return name if protocol is None else f"{name} of {type(protocol).__qualname__}"
    coro: Any = task.get_coro()
    name = getattr(coro, "__qualname__", repr(coro))
    return f"task {task.get_name()} {name} (now at {suspended_at(handle) or 'its end'})"


def suspended_at(handle: asyncio.Handle) -> str:
    """The innermost coroutine a task step's task waits in, outside asyncio's
    own, as ``name file:line`` (empty for a callback that is not a task step, or a finished task)."""
    task = _task_of(handle)
    if task is None:
        return ""
    coro: Any = task.get_coro()
    where = ""
    while coro is not None:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is None:
            break
        if f"{os.sep}asyncio{os.sep}" not in frame.f_code.co_filename:  # the caller's await
            where = f"{frame.f_code.co_qualname} {frame.f_code.co_filename}:{frame.f_lineno}"
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return where


def _task_of(handle: asyncio.Handle) -> asyncio.Task[Any] | None:
    owner = getattr(getattr(handle, "_callback", None), "__self__", None)
    return owner if isinstance(owner, asyncio.Task) else None
