"""A shorter interpreter thread switch interval while a worker thread runs
beside the event loop.

A worker that gives the GIL up at each system call waits a whole switch
interval (5 ms by default) to get it back while the loop runs Python, and a
worker that holds it delays the loop as long: both the start-up's log loading
and the preparing of new partitions' files ran slower, or held produces
longer, at the default.  The interval is the interpreter's, so it is set for
the worker's run only and put back after.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

__all__ = ["switch_interval"]


@contextlib.contextmanager
def switch_interval(seconds: float) -> Iterator[None]:
    previous = sys.getswitchinterval()
    sys.setswitchinterval(seconds)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)
