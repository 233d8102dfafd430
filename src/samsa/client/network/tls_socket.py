"""A non-blocking TLS socket the connection can use like a plain one.

``ssl.SSLSocket`` hides decrypted bytes inside OpenSSL where ``select`` cannot
see them and has no ``sendmsg``; this wrapper keeps TLS in memory
(``ssl.SSLObject`` over two MemoryBIOs) instead: ``recv_into`` decrypts all
that has arrived, so "less than asked" always means "nothing left", and
``send`` encrypts what it is given and keeps any ciphertext the kernel did not
take until ``flush``.  The handshake runs inside these calls; until it is done
they raise BlockingIOError, which the connection already treats as "later".
"""

from __future__ import annotations

import socket
import ssl
from typing import Any

_RECORD = 16 * 1024
_RECV = 256 * 1024


class TlsSocket:
    def __init__(self, sock: socket.socket, context: ssl.SSLContext, hostname: str) -> None:
        self._sock = sock
        self._in = ssl.MemoryBIO()
        self._out = ssl.MemoryBIO()
        server_hostname = hostname if context.check_hostname else None
        self._obj = context.wrap_bio(self._in, self._out, server_hostname=server_hostname)
        self._backlog = b""
        self._handshake_done = False
        self._eof = False

    # ---------------------------------------------------------------- socket-like
    def fileno(self) -> int:
        return self._sock.fileno()

    def getsockopt(self, *args: Any) -> Any:
        return self._sock.getsockopt(*args)

    def close(self) -> None:
        self._sock.close()

    @property
    def has_backlog(self) -> bool:
        return bool(self._backlog) or not self._handshake_done

    def flush(self) -> bool:
        """Write held ciphertext (and drive the handshake); True when none is left."""
        self._advance()
        self._backlog += self._out.read()
        while self._backlog:
            try:
                sent = self._sock.send(self._backlog)
            except (BlockingIOError, InterruptedError):
                return False
            self._backlog = self._backlog[sent:]
        return self._handshake_done

    def send(self, data: Any) -> int:
        if not self.flush():
            raise BlockingIOError
        view = memoryview(data).cast("B")[:_RECORD]
        written = self._obj.write(view)
        self.flush()
        return written

    def sendmsg(self, buffers: list[Any]) -> int:
        return self.send(buffers[0])

    def recv(self, bufsize: int) -> bytes:
        buf = bytearray(bufsize)
        got = self.recv_into(memoryview(buf), bufsize)
        return bytes(buf[:got])

    def recv_into(self, buffer: Any, nbytes: int = 0) -> int:
        view = memoryview(buffer).cast("B")
        want = nbytes or len(view)
        got = 0
        while got < want:
            try:
                n = int(self._obj.read(want - got, view[got:want])) if self._handshake_done else -1
            except ssl.SSLWantReadError:
                n = -1
            except ssl.SSLZeroReturnError:
                n = 0
            if n == 0:  # close_notify
                self._eof = True
                break
            if n > 0:
                got += n
                continue
            if not self._pull():
                break
        if got:
            return got
        if self._eof:
            return 0
        raise BlockingIOError

    # ---------------------------------------------------------------- internals
    def _pull(self) -> bool:
        """Move ciphertext from the socket into TLS; False when none is waiting."""
        try:
            data = self._sock.recv(_RECV)
        except (BlockingIOError, InterruptedError):
            return False
        if not data:
            self._eof = True
            return False
        self._in.write(data)
        if not self._handshake_done:
            self._advance()
            self._backlog += self._out.read()
            self.flush()
        return True

    def _advance(self) -> None:
        if self._handshake_done:
            return
        try:
            self._obj.do_handshake()
        except ssl.SSLWantReadError:
            return
        self._handshake_done = True
