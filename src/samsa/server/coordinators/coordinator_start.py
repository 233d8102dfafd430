"""Start a coordinator on first use, answering "loading" until it is ready.

A coordinator needs its internal topic (created on first use, as Kafka does)
and its partitions loaded before it can answer; requests meanwhile get
COORDINATOR_LOAD_IN_PROGRESS, which clients retry.  A failed start is logged
and tried again by the next request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from samsa.errors import ErrorCode

log = logging.getLogger("samsa.server")

__all__ = ["CoordinatorStarter"]


class CoordinatorStarter:
    def __init__(self, name: str, start: Callable[[], Awaitable[None]]) -> None:
        self.name = name
        self._start = start
        self._task: asyncio.Task[Any] | None = None
        self.ready = False

    def ensure(self) -> ErrorCode | None:
        """None when ready, else COORDINATOR_LOAD_IN_PROGRESS (starting it if needed)."""
        if self.ready:
            return None
        if self._task is None:
            self._task = asyncio.ensure_future(self._start())
            self._task.add_done_callback(self._started)
        return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS

    def _started(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled() or task.exception() is not None:
            log.error(
                "%s failed to start: %r", self.name, None if task.cancelled() else task.exception()
            )
            self._task = None
            return
        self.ready = True
