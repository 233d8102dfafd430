"""Per-partition log lines of one event-loop turn, summed up when there are many.

A leader of 10,000 partitions whose follower comes back expands 10,000 ISRs
and then reads 10,000 answers from the controller: at a line per partition
that was 20,000 INFO lines per cycle, written on the event loop and read by
no one.  Such lines are logged here with a *kind* ("expanding ISR", ...).
Each kind's lines are held until the current turn of the loop ends; then up
to ``NAMED`` of them are logged one by one at INFO as before, and more become
one INFO line that counts them and quotes the first few, every line still
going out at DEBUG.  Outside a running loop (tests driving a partition by
hand) a line is logged at once.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

NAMED = 10
"""Lines of one kind logged one by one at INFO in a turn; past that, a summary."""

QUOTED = 3
"""Lines a summary quotes in full."""


class TurnLog:
    def __init__(self, logger: logging.Logger) -> None:
        self._log = logger
        self._held: dict[str, list[tuple[str, tuple[Any, ...]]]] = {}

    def info(self, kind: str, msg: str, *args: Any) -> None:
        if not self._log.isEnabledFor(logging.INFO):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._log.info(msg, *args)
            return
        if not self._held:
            loop.call_soon(self.flush)
        self._held.setdefault(kind, []).append((msg, args))

    def flush(self) -> None:
        """Write what this turn held (the loop calls this once the turn is over)."""
        held, self._held = self._held, {}
        for kind, lines in held.items():
            if len(lines) <= NAMED:
                for msg, args in lines:
                    self._log.info(msg, *args)
                continue
            if self._log.isEnabledFor(logging.DEBUG):
                for msg, args in lines:
                    self._log.debug(msg, *args)
            quoted = "; ".join(msg % args for msg, args in lines[:QUOTED])
            self._log.info(
                "%s: %d partitions (debug logging names each): %s; and %d more",
                kind,
                len(lines),
                quoted,
                len(lines) - QUOTED,
            )
