"""One benchmark run in a new interpreter, so no run inherits another's state
(imported modules, allocator arenas, warmed caches, a client's threads).

The function and its arguments are pickled to a ``spawn`` child: the function
must live at module level (a bench script's own functions work too, as
multiprocessing re-imports the main script in the child).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any, TypeVar, cast

T = TypeVar("T")


def _report(fn: Callable[..., Any], args: tuple[Any, ...], results: Any) -> None:
    try:
        results.put(fn(*args))
    except BaseException as exc:
        results.put(exc)
        raise


def in_fresh_process(label: str, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a fresh interpreter; a failure there is raised here."""
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    child = ctx.Process(target=_report, args=(fn, args, results))
    child.start()
    outcome = results.get()
    child.join()
    if isinstance(outcome, BaseException):
        raise RuntimeError(f"{label} run failed") from outcome
    return cast(T, outcome)
