"""Retry group calls while the coordinator is loading or moving, as Kafka's Admin does.

Right after a broker starts, or while ``__consumer_offsets`` moves, a group
call is answered COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE or
NOT_COORDINATOR.  These say "ask again shortly", not "no": the Java Admin
client retries them until the call's timeout, so a script calling ``list_groups``
on a fresh broker gets the groups, not an error.  Other errors (an unknown
group, a non-empty group) are answers and are raised at once.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable
from typing import Any, TypeVar

from samsa.errors import ErrorCode, KafkaError

COORDINATOR_ERRORS = frozenset(
    {
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
    }
)
BACKOFF_S = 0.1

F = TypeVar("F", bound=Callable[..., Any])


def retry_coordinator_errors(method: F) -> F:
    """Wrap an Admin method with a ``timeout`` parameter (seconds, None: the default)."""
    signature = inspect.signature(method)

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(self, *args, **kwargs)
        timeout_ms = self._ms(bound.arguments.get("timeout"))
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            try:
                return method(self, *args, **kwargs)
            except KafkaError as exc:
                if exc.code not in COORDINATOR_ERRORS or time.monotonic() + BACKOFF_S > deadline:
                    raise
            time.sleep(BACKOFF_S)

    return wrapper  # type: ignore[return-value]
