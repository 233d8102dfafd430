"""A client connection on an SSL or SASL_SSL listener: TLS between socket and frames.

The socket's bytes go into a ``TlsSession``; the plaintext it yields is cut
into frames by the same ``FrameReader`` a plaintext connection uses, so
everything above (dispatch, ordering, backpressure) is shared.  Responses are
encrypted as they are written: file regions are read and encrypted here, since
``sendfile`` would bypass TLS (zero-copy stays a plaintext-listener feature).

A peer that does not speak TLS, or whose certificate is refused, is logged
once with its address and disconnected; no other connection notices.
"""

from __future__ import annotations

import ssl
import time
from typing import Any

from samsa.security.tls_session import TlsClosed, TlsSession
from samsa.server.framing import FrameTooLarge
from samsa.server.network import Connection, SocketServer

# Ciphertext read per callback: large enough that a big produce request costs
# few callbacks, small enough for many idle TLS connections.
_RECEIVE_BYTES = 128 * 1024


class TlsConnection(Connection):
    def __init__(self, server: SocketServer, context: ssl.SSLContext) -> None:
        super().__init__(server)
        self._tls = TlsSession(context, server_side=True)
        self._ciphertext = memoryview(bytearray(_RECEIVE_BYTES))

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._ciphertext

    def buffer_updated(self, nbytes: int) -> None:
        self.last_active = time.monotonic()
        tls = self._tls
        tls.receive(self._ciphertext[:nbytes])
        frames: list[bytes | bytearray] = []
        try:
            if not tls.handshake_done:
                done = tls.advance()
                self._flush()
                if not done:
                    return
                self.principal = tls.principal
            while True:
                got = tls.read_into(self._frames.buffer())
                if not got:
                    break
                frames.extend(self._frames.received(got))
        except ssl.SSLError as exc:
            self._flush()
            if tls.handshake_done:
                self.close(f"TLS failed: {exc.reason or exc}")
            else:
                self.close_after_failed_authentication(f"TLS handshake failed: {exc.reason or exc}")
            return
        except TlsClosed:
            self._flush()
            if self.transport is not None:
                self.transport.close()
            return
        except FrameTooLarge as exc:
            self.close(str(exc))
            return
        self._flush()
        self.accept(frames)

    def write(self, chunks: list[Any]) -> None:
        if self.closed or self.transport is None:
            return None
        tls = self._tls
        for chunk in chunks:
            tls.encrypt(
                chunk if isinstance(chunk, (bytes, bytearray, memoryview)) else chunk.read_bytes()
            )
        self._flush()
        return None

    def _flush(self) -> None:
        out = self._tls.pending_output()
        if out and self.transport is not None and not self.transport.is_closing():
            self.transport.write(out)


def tls_connections(context: ssl.SSLContext) -> Any:
    """A ``SocketServer`` connection factory for a TLS listener."""
    return lambda server: TlsConnection(server, context)
