"""A response's chunks onto a connection: bytes as they are, large file regions zero-copy.

A handler answers with a list of chunks: bytes, and for a fetch the segment
file regions its records sit in (the broker never reads records it only
forwards).  A region of ``SENDFILE_MIN_BYTES`` or more goes out with
``loop.sendfile`` straight from the segment file; a smaller one is cheaper to
pread and write.  Apart from ``socket_server`` because it is how bytes leave,
not when: the connection decides the order of responses and stays busy while
a write here is still sending.  TLS connections write their own way
(``tls_connection``): sendfile would bypass the encryption.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable
from typing import IO, Any, Protocol, cast

SENDFILE_MIN_BYTES = 64 * 1024
"""Below this size a region is cheaper to pread and write than to sendfile
(sendfile waits for the transport's buffer to drain first)."""


class Writable(Protocol):
    """The connection as written to (``socket_server.Connection``)."""

    @property
    def transport(self) -> asyncio.Transport | None: ...

    @property
    def closed(self) -> bool: ...


def write_response(conn: Writable, chunks: list[Any], use_sendfile: bool) -> Awaitable[None] | None:
    """Write a response; large file regions go out with ``os.sendfile``.

    Returns an awaitable when a region is being sent zero-copy (the
    connection stays busy until it completes, keeping responses in order),
    or None when everything was handed to the transport at once.
    """
    transport = conn.transport
    if conn.closed or transport is None:
        return None
    out = []
    for chunk in chunks:
        if isinstance(chunk, (bytes, bytearray, memoryview)):
            out.append(chunk)
        elif len(chunk) >= SENDFILE_MIN_BYTES and use_sendfile:
            return _write_with_sendfile(conn, chunks)
        else:
            out.append(chunk.read_bytes())
    transport.writelines(out)
    return None


async def _write_with_sendfile(conn: Writable, chunks: list[Any]) -> None:
    loop = asyncio.get_running_loop()
    pending: list[bytes | bytearray | memoryview] = []
    for chunk in chunks:
        transport = conn.transport
        if conn.closed or transport is None:
            return
        if isinstance(chunk, (bytes, bytearray, memoryview)):
            pending.append(chunk)
        elif len(chunk) < SENDFILE_MIN_BYTES:
            pending.append(chunk.read_bytes())
        else:
            if pending:
                transport.writelines(pending)
                pending = []
            await loop.sendfile(
                transport,
                cast(IO[bytes], _RegionFile(chunk)),
                chunk.position,
                len(chunk),
                fallback=True,
            )
    transport = conn.transport
    if pending and not conn.closed and transport is not None:
        transport.writelines(pending)


class _RegionFile:
    """File-like view of a FileRegion for ``loop.sendfile``.

    Reads are positional (pread), so sending never moves the offset of the
    segment's shared file descriptor; ``seek`` only sets this view's position
    (used by asyncio's copy fallback when sendfile is unavailable).
    """

    mode = "rb"

    def __init__(self, region: Any) -> None:
        self._region = region
        self._pos = region.position

    def fileno(self) -> int:
        fd: int = self._region.fileno()
        return fd

    def seek(self, pos: int, whence: int = 0) -> int:
        self._pos = pos
        return pos

    def readinto(self, buf: memoryview) -> int:
        data = os.pread(self.fileno(), len(buf), self._pos)
        buf[: len(data)] = data
        self._pos += len(data)
        return len(data)
