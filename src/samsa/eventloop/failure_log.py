"""Per-item failure bookkeeping for the broker's periodic tasks.

Retention, checkpoints, compaction and offset expiry each walk many items
(logs, partitions, groups) on a timer.  One item's exception must not abandon
the work for every other item, or a single odd log stops compaction or
retention for the whole broker, silently and forever.  So each item runs on
its own; a failure is logged once with the item's name and traceback when it
starts, the item is retried on the next pass (most failures are transient:
a full disk, a file being swapped), and its recovery is logged once too.
Repeating the same traceback every pass would drown the log without telling
the operator anything new.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class FailureLog:
    """Which items of one periodic task are failing now, each logged once."""

    def __init__(self, logger: logging.Logger, task: str) -> None:
        self._logger = logger
        self._task = task
        self._failing: dict[str, str] = {}

    @property
    def failing(self) -> dict[str, str]:
        """Item name -> the error it is failing with, for status surfaces."""
        return dict(self._failing)

    def run(self, item: str, work: Callable[[], T]) -> T | None:
        """Run ``work`` for ``item``; on an exception log it (once) and return None."""
        try:
            result = work()
        except Exception as exc:
            self.failed(item, exc)
            return None
        self.succeeded(item)
        return result

    def failed(self, item: str, exc: BaseException) -> None:
        if item in self._failing:
            return
        self._failing[item] = f"{type(exc).__name__}: {exc}"
        self._logger.error(
            "%s failed for %s (skipped; retried on the next pass): %s",
            self._task,
            item,
            exc,
            exc_info=exc,
        )

    def succeeded(self, item: str) -> None:
        if self._failing.pop(item, None) is not None:
            self._logger.info("%s for %s works again", self._task, item)

    def forget(self, item: str) -> None:
        """The item is gone (a deleted log or group): stop tracking it."""
        self._failing.pop(item, None)
