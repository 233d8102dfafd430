"""Stopping background tasks reliably on Python 3.11.

Python 3.11's ``asyncio.wait_for`` loses a cancellation that arrives while the
future it waits on has just completed (the wait returns that result instead of
raising; fixed in 3.12, CPython gh-86296).  A background loop that waits with
``wait_for`` then goes round again, and a ``stop()`` that cancelled it once and
awaits it waits forever: a broker that never exits after SIGTERM, seen once in
a few hundred whole-cluster stops.  Loops wait with :func:`wait_event`, which
cannot lose a cancellation, and ``stop()`` methods use :func:`cancel_and_wait`,
which cancels again until the task has ended.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

RECANCEL_AFTER_S = 0.5


async def wait_event(event: asyncio.Event, timeout_s: float) -> bool:
    """Wait until ``event`` is set or ``timeout_s`` passes; True if it was set.
    A cancellation of the caller always propagates."""
    if event.is_set():
        return True
    waiter = asyncio.ensure_future(event.wait())
    try:
        done, _ = await asyncio.wait({waiter}, timeout=timeout_s)
    finally:
        waiter.cancel()
    return bool(done)


async def acquire_within(lock: asyncio.Lock, timeout_s: float) -> bool:
    """Acquire ``lock`` if it comes free within ``timeout_s``; True if the caller
    now holds it.  Not ``wait_for(lock.acquire())``: on 3.11 that can return a
    lock acquired as the timeout struck without telling, or lose a cancellation.
    An acquisition given up on that still completes is released at once."""
    if not lock.locked():
        await lock.acquire()
        return True
    acquiring = asyncio.ensure_future(lock.acquire())

    def release_if_acquired(task: asyncio.Future[Any]) -> None:
        if not task.cancelled() and task.exception() is None:
            lock.release()

    try:
        done, _ = await asyncio.wait({acquiring}, timeout=timeout_s)
    except BaseException:
        acquiring.cancel()
        acquiring.add_done_callback(release_if_acquired)
        raise
    if done:
        return True
    acquiring.cancel()
    acquiring.add_done_callback(release_if_acquired)
    return False


async def cancel_and_wait(
    tasks: asyncio.Future[Any] | Iterable[asyncio.Future[Any]] | None,
) -> None:
    """Cancel tasks and wait until each has ended, cancelling again while one
    keeps running (a lost cancellation).  Their results and failures are
    dropped: the caller is stopping them."""
    if tasks is None:
        return
    current = asyncio.current_task()
    listed = [tasks] if isinstance(tasks, asyncio.Future) else list(tasks)
    everything = [task for task in listed if task is not current]
    pending = [task for task in everything if not task.done()]
    while pending:
        for task in pending:
            task.cancel()
        await asyncio.wait(pending, timeout=RECANCEL_AFTER_S)
        pending = [task for task in pending if not task.done()]
    for task in everything:
        if not task.cancelled():
            task.exception()  # retrieved, so asyncio does not warn about it
