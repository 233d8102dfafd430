"""One non-blocking TCP connection to a broker, with Kafka's size-prefixed framing.

The connection knows nothing about requests or versions: it queues outgoing
frames, writes as much as the socket takes (partial writes keep their place in
a memoryview), and cuts the incoming byte stream into whole frames whatever way
the kernel splits it.  A frame may be queued as several parts (a produce
request's record batches stay in the producer's buffers); the parts go out
together with one ``sendmsg`` (scatter-gather), not one system call each.
``NetworkClient`` owns the state machine above it.

Not thread-safe: only the network thread (the producer's Sender) touches it.
"""

from __future__ import annotations

import socket
import struct
from collections import deque
from itertools import islice
from typing import Any, Protocol

__all__ = ["BrokerConnection", "SocketLike"]

_SIZE = struct.Struct(">i")
_RECV_CHUNK = 256 * 1024
# Buffers per sendmsg; Linux's IOV_MAX is 1024.
_MAX_PARTS = 64
# A response larger than this is a corrupt stream, not a real reply.
MAX_RESPONSE_SIZE = 512 * 1024 * 1024


class SocketLike(Protocol):
    """What the connection needs from a socket, so tests can pass a fake."""

    def send(self, data: Any, /) -> int: ...
    def sendmsg(self, buffers: Any, /) -> int: ...
    def recv(self, bufsize: int, /) -> bytes: ...
    def recv_into(self, buffer: Any, nbytes: int = 0, /) -> int: ...
    def close(self) -> None: ...
    def fileno(self) -> int: ...


class FramingError(Exception):
    """The peer sent a length prefix that cannot be a real frame."""


class BrokerConnection:
    """Byte pump for one socket: queued writes out, whole frames in."""

    __slots__ = (
        "_body",
        "_body_got",
        "_body_size",
        "_body_view",
        "_in",
        "_out",
        "_out_bytes",
        "node_id",
        "sock",
    )

    def __init__(self, node_id: int, sock: SocketLike) -> None:
        self.node_id = node_id
        self.sock = sock
        self._out: deque[memoryview] = deque()
        self._out_bytes = 0
        self._in = bytearray()
        # A large frame's body is received straight into its own buffer.
        self._body = bytearray()
        self._body_view = memoryview(self._body)
        self._body_size = 0  # that frame's size, 0 when none is in progress
        self._body_got = 0

    @property
    def has_pending_writes(self) -> bool:
        # A TLS socket may hold ciphertext (or an unfinished handshake) of its own.
        return self._out_bytes > 0 or getattr(self.sock, "has_backlog", False)

    def enqueue(self, frame: Any) -> None:
        """Queue one already size-prefixed frame for writing."""
        if frame:
            view = memoryview(frame)
            self._out.append(view)
            self._out_bytes += view.nbytes

    def enqueue_parts(self, parts: list[Any]) -> None:
        """Queue one frame given as parts (``encode_request_parts``), without joining them.

        The parts are referenced, not copied: they must not change until written.
        """
        for part in parts:
            self.enqueue(part)

    def write(self) -> bool:
        """Write queued bytes until the socket would block; True when all were sent.

        Raises OSError when the socket fails (the caller disconnects).
        """
        out = self._out
        sock = self.sock
        while out:
            try:
                if len(out) == 1:
                    sent = sock.send(out[0])
                else:
                    sent = sock.sendmsg(list(islice(out, _MAX_PARTS)))
            except (BlockingIOError, InterruptedError):
                return False
            if sent <= 0:
                return False
            self._out_bytes -= sent
            while sent:
                head = out[0]
                if sent >= len(head):
                    sent -= len(head)
                    out.popleft()
                else:
                    out[0] = head[sent:]
                    sent = 0
        flush = getattr(sock, "flush", None)  # a TLS socket's held ciphertext
        return bool(flush()) if flush is not None else True

    def read(self) -> list[bytes | bytearray] | None:
        """Read what the socket has; returns the whole frames (without size prefix).

        Returns None when the peer closed the connection (EOF).  Raises OSError
        on socket errors and FramingError on an impossible length prefix.

        Small frames are cut out of one receive buffer.  The body of a large
        frame (a fetch response) is received with ``recv_into`` straight into
        a buffer of its exact size, which becomes the frame: no piece is
        allocated per receive and nothing is joined or copied afterwards.
        """
        frames: list[bytes | bytearray] = []
        sock = self.sock
        eof = False
        while True:
            try:
                if self._body_size:
                    want = self._body_size - self._body_got
                    got = sock.recv_into(self._body_view[self._body_got :], want)
                    if got:
                        self._add_body(got, frames)
                    empty = not got
                else:
                    want = _RECV_CHUNK
                    chunk = sock.recv(want)
                    got = len(chunk)
                    if chunk:
                        self._in += chunk
                        self._cut_frames(frames)
                    empty = not chunk
            except (BlockingIOError, InterruptedError):
                break
            if empty:
                eof = True
                break
            if got < want:
                break
        if eof and not frames:
            return None
        return frames

    def _start_body(self, size: int, head: bytes | bytearray | memoryview) -> None:
        body = self._body = bytearray(size)
        self._body_view = memoryview(body)
        self._body_size = size
        self._body_view[: len(head)] = head
        self._body_got = len(head)

    def _add_body(self, got: int, frames: list[bytes | bytearray]) -> None:
        self._body_got += got
        if self._body_got == self._body_size:
            frames.append(self._body)
            self._body_view.release()
            self._body = bytearray()
            self._body_view = memoryview(self._body)
            self._body_size = self._body_got = 0

    def _cut_frames(self, frames: list[bytes | bytearray]) -> None:
        buf = self._in
        pos = 0
        end = len(buf)
        while end - pos >= 4:
            (size,) = _SIZE.unpack_from(buf, pos)
            if size < 0 or size > MAX_RESPONSE_SIZE:
                raise FramingError(f"impossible frame size {size}")
            if end - pos - 4 < size:
                if size > _RECV_CHUNK:
                    # A large frame: collect its body separately from here on.
                    with memoryview(buf) as view:
                        self._start_body(size, view[pos + 4 : end])
                    pos = end
                break
            frames.append(bytes(buf[pos + 4 : pos + 4 + size]))
            pos += 4 + size
        if pos:
            del buf[:pos]

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
        self._out.clear()
        self._out_bytes = 0
        self._in.clear()
        self._body_view.release()
        self._body = bytearray()
        self._body_view = memoryview(self._body)
        self._body_size = self._body_got = 0


def open_socket(
    host: str, port: int, send_buffer: int, receive_buffer: int, keepalive: bool, nodelay: bool
) -> socket.socket:
    """Start a non-blocking connect; completion is seen as writability."""
    infos = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
    family, kind, proto, _, addr = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setblocking(False)
    if send_buffer > 0:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
    if receive_buffer > 0:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    if keepalive:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    if nodelay:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    err = sock.connect_ex(addr)
    if err not in (0, 115, 36, 10035):  # 0, EINPROGRESS (Linux, macOS), WSAEWOULDBLOCK
        sock.close()
        raise OSError(err, f"connect to {host}:{port} failed")
    return sock
