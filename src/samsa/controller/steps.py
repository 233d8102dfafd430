"""Controller operations that may be run a step at a time.

The active controller's node is a broker too, and its loop serves produce
and fetch requests between controller writes.  An operation over a thousand
partitions (a CreateTopics of 1,000) computes for tens of milliseconds, more
on a loaded machine, and in one piece every request on that loop waited
behind it.  Such an operation is written as a generator: it ``yield``s
between slices of its work and returns its result, so the server may let the
loop run between two steps (``samsa.eventloop.loop_slices.run_in_steps``) while a
synchronous caller (the tests, the simulator) runs it through at once
(``run_through``).

Stepping changes nothing else: the operation reads the committed image,
which only the controller's own writes change (and the server runs one
write at a time, holding its write lock across the steps), and its records
still go to Raft as one batch, one transaction when the result is atomic.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TypeVar

__all__ = ["PARTITIONS_PER_STEP", "Steps", "run_through"]

T = TypeVar("T")

Steps = Generator[None, None, T]
"""Work that yields between its steps and returns a ``T``."""

PARTITIONS_PER_STEP = 200
"""Partitions an operation handles per step: a few milliseconds each."""


def run_through(steps: Steps[T]) -> T:
    """Every step at once, for a caller without an event loop to serve."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
