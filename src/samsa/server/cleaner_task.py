"""The broker's log cleaner task: a compaction pass every ``log.cleaner.backoff.ms``.

Each pass runs in a worker thread (``asyncio.to_thread``) so reading and
rewriting segments never stalls the event loop; the cleaner takes a log's lock
only to swap cleaned segments in.  ``stop`` asks a running pass to end at the
next batch and waits for it, before the broker closes the logs.

Crash injection for tests: ``SAMSA_CLEANER_CRASH_AT=<point>`` in the broker's
environment (one of cleaner_swap.CRASH_POINTS) makes the process SIGKILL
itself when the cleaner reaches that point, so a test can prove that a crash
there loses nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable, Collection

from samsa.storage.cleaner.manager import InjectedCrash, LogCleaner
from samsa.storage.log_dirs import LogDirs
from samsa.storage.log_manager import LogManager

log = logging.getLogger("samsa.server")

CRASH_ENV = "SAMSA_CLEANER_CRASH_AT"


def kill_self(point: str, what: str = "cleaner") -> None:
    """SIGKILL this process at an injected crash point (tests of crash safety)."""
    log.warning("%s crash point %s: killing the broker (SIGKILL)", what, point)
    for handler in logging.getLogger().handlers:
        handler.flush()
    os.kill(os.getpid(), signal.SIGKILL)


class CleanerTask:
    """Owns a LogCleaner per log dir (each keeps its ``cleaner-offset-checkpoint``
    in its own dir, as Kafka's does) and their periodic task."""

    def __init__(
        self,
        log_manager: LogManager | LogDirs,
        *,
        backoff_ms: int,
        first_unstable_offset: Callable[[tuple[str, int]], int | None] | None = None,
        paused: Callable[[], Collection[tuple[str, int]]] = frozenset,
    ) -> None:
        """``paused``: the partitions not to clean now (those moving between log
        dirs, as Kafka's ``abortAndPauseCleaning`` leaves them alone)."""
        self.backoff_ms = backoff_ms
        self._paused = paused
        crash_at = os.environ.get(CRASH_ENV) or None
        managers = log_manager.managers if isinstance(log_manager, LogDirs) else [log_manager]
        self._cleaners = [
            (
                manager,
                LogCleaner(
                    manager.data_dir,
                    crash_at=crash_at,
                    on_crash=kill_self if crash_at else None,
                    first_unstable_offset=first_unstable_offset,
                ),
            )
            for manager in managers
        ]
        self.cleaner = self._cleaners[0][1]
        """The first dir's cleaner (its stats are the ones reported)."""
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        """End a running pass at the next batch and wait for it."""
        for _, cleaner in self._cleaners:
            cleaner.stop()
        self._stopping.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        # The first pass waits one backoff too, so start-up finishes first.
        while not await self._stop_requested_within(self.backoff_ms):
            try:
                await asyncio.to_thread(self._pass)
            except InjectedCrash:
                raise
            except Exception:
                log.exception("log cleaner pass failed")

    async def _stop_requested_within(self, timeout_ms: int) -> bool:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), timeout_ms / 1000)
        return self._stopping.is_set()

    def _pass(self) -> None:
        for manager, cleaner in self._cleaners:
            if not manager.offline:
                paused = self._paused()
                logs = {k: v for k, v in manager.all_logs().items() if k not in paused}
                cleaner.run_pass(logs, time.time_ns() // 1_000_000)
