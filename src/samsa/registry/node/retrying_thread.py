"""A registry node's background thread: run a blocking job, retry it until told to stop.

The election (its group membership) and the ``_schemas`` reader each run one
blocking client job on a thread of its own, off the event loop, and must
outlive a cluster that is unreachable for a while: the job raising means
"start it again in a moment", not "give up".  They share this one loop so they
retry, log and stop the same way: the first failure and every 30th after it
is a warning (a long outage does not flood the log; the rest go to debug), a
second passes between tries, and setting ``stopping`` ends it -- the job
watches the same event and returns, which ends the thread.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

log = logging.getLogger("samsa.registry")

RETRY_S = 1.0
WARN_EVERY = 30
"""Of the failures in a row, the first and every ``WARN_EVERY``-th are warnings."""


class RetryingThread:
    def __init__(
        self,
        name: str,
        job: Callable[[], None],
        stopping: threading.Event,
        describe_failure: Callable[[BaseException], str],
        after_failure: Callable[[], None] | None = None,
    ) -> None:
        """``job`` runs until ``stopping`` is set, then returns; if it raises, the failure
        is logged as ``describe_failure(exc)`` says, ``after_failure`` runs (if given)
        and the job starts again after ``RETRY_S``."""
        self.name = name
        self.job = job
        self.stopping = stopping
        self.describe_failure = describe_failure
        self.after_failure = after_failure
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    async def stop(self, timeout: float) -> None:
        """Set ``stopping`` and wait (off the loop) up to ``timeout`` seconds for the thread."""
        self.stopping.set()
        thread = self._thread
        if thread is not None:
            await asyncio.to_thread(thread.join, timeout)

    def _run(self) -> None:
        failures = 0
        while not self.stopping.is_set():
            try:
                self.job()
                return
            except Exception as exc:
                failures += 1
                loud = failures == 1 or failures % WARN_EVERY == 0
                (log.warning if loud else log.debug)("%s", self.describe_failure(exc))
                if self.after_failure is not None:
                    self.after_failure()
                self.stopping.wait(RETRY_S)
