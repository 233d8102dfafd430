"""Readiness multiplexing for the network thread, with a cross-thread wakeup.

A thin layer over ``selectors.DefaultSelector``: the network client registers a
connection for reads always and for writes only while it has bytes queued (or
while a connect is in progress), and another thread can interrupt a blocking
``select`` through ``wakeup()`` -- the producer does this when a batch fills so
the Sender does not sleep through linger.ms.  Tests substitute their own
implementation of the same four methods.
"""

from __future__ import annotations

import selectors
import socket
from typing import Protocol

__all__ = ["Selector", "SelectorLike"]


class SelectorLike(Protocol):
    def register(self, node_id: int, sock: object, want_write: bool) -> None: ...
    def unregister(self, node_id: int) -> None: ...
    def select(self, timeout_ms: float) -> list[tuple[int, bool, bool]]: ...
    def wakeup(self) -> None: ...
    def close(self) -> None: ...


class Selector:
    """selectors-based implementation; events come back as (node_id, readable, writable)."""

    def __init__(self) -> None:
        self._sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        self._socks: dict[int, object] = {}
        self._want_write: dict[int, bool] = {}
        self._woken = False

    def register(self, node_id: int, sock: object, want_write: bool) -> None:
        """Register, or change interest of, a node's socket."""
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if want_write else 0)
        if node_id in self._socks:
            if self._want_write[node_id] != want_write:
                self._sel.modify(sock, events, node_id)  # type: ignore[arg-type]
                self._want_write[node_id] = want_write
            return
        self._sel.register(sock, events, node_id)  # type: ignore[arg-type]
        self._socks[node_id] = sock
        self._want_write[node_id] = want_write

    def unregister(self, node_id: int) -> None:
        sock = self._socks.pop(node_id, None)
        self._want_write.pop(node_id, None)
        if sock is not None:
            try:
                self._sel.unregister(sock)  # type: ignore[arg-type]
            except (KeyError, ValueError, OSError):
                pass

    def select(self, timeout_ms: float) -> list[tuple[int, bool, bool]]:
        timeout = None if timeout_ms < 0 else timeout_ms / 1000.0
        out: list[tuple[int, bool, bool]] = []
        for key, mask in self._sel.select(timeout):
            if key.data is None:
                try:
                    while self._wake_r.recv(4096):
                        pass
                except (BlockingIOError, InterruptedError):
                    pass
                self._woken = False
                continue
            out.append(
                (key.data, bool(mask & selectors.EVENT_READ), bool(mask & selectors.EVENT_WRITE))
            )
        return out

    def wakeup(self) -> None:
        """Make a concurrent or the next ``select`` return at once (any thread)."""
        if self._woken:
            return
        self._woken = True
        try:
            self._wake_w.send(b"\x00")
        except (BlockingIOError, InterruptedError, OSError):
            pass

    def close(self) -> None:
        self._sel.close()
        self._wake_r.close()
        self._wake_w.close()
