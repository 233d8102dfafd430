"""A socket that cannot be bound is a configuration error, told in one line.

A busy port, an address this machine does not have or a host name that does
not resolve are things the operator fixes in the configuration, so they end
the process like any other bad setting (``samsa: error: ...``, status 2)
instead of as a traceback, naming what was being bound, where, and why.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from samsa.errors import ConfigError


class BindError(ConfigError):
    """A listener, the metrics endpoint or the console could not bind its address."""


def reason(exc: OSError) -> str:
    """The operating system's words (asyncio wraps them in a longer message)."""
    if exc.errno is not None and exc.errno > 0:
        return os.strerror(exc.errno)
    return exc.strerror or str(exc)


@contextlib.contextmanager
def explain_bind_failure(what: str, host: str, port: int) -> Iterator[None]:
    """Turn an OSError while binding ``what`` to ``host:port`` into a BindError."""
    try:
        yield
    except OSError as exc:
        address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        raise BindError(f"cannot bind {what} to {address}: {reason(exc)}") from None
