"""A client connection on an SSL or SASL_SSL listener: TLS between socket and frames.

The socket's bytes go into a ``TlsSession``; the plaintext it yields is cut
into frames by the same ``FrameReader`` a plaintext connection uses, so
everything above (dispatch, ordering, backpressure) is shared.  Responses are
encrypted as they are written: file regions are read and encrypted here, since
``sendfile`` would bypass TLS (zero-copy stays a plaintext-listener feature).

A peer that does not speak TLS, or whose certificate is refused (by the
truststore or by ``ssl.principal.mapping.rules``), is logged once with its
address and disconnected; no other connection notices.

``ListenerTls`` holds a listener's context; altering its
``listener.name.<l>.ssl.keystore.*`` through the dynamic broker config
replaces the context (Kafka's keystore reload): new connections get the new
certificate, connections already open keep the session they have.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable
from typing import Any

from samsa.config.ssl import server_context
from samsa.security.ssl_principal_mapper import NoRuleApplies, SslPrincipalMapper
from samsa.security.tls_session import TlsClosed, TlsSession
from samsa.server.connections.framing import FrameTooLarge
from samsa.server.connections.socket_server import Connection, SocketServer

# Ciphertext read per callback: large enough that a big produce request costs
# few callbacks, small enough for many idle TLS connections.
_RECEIVE_BYTES = 128 * 1024
# The plaintext one TLS record carries.
_RECORD_BYTES = 16 * 1024


class ListenerTls:
    """A TLS listener's settings as they are now; swapped whole on a reload."""

    def __init__(self, lookup: Callable[[str], str]) -> None:
        self._lookup = lookup
        self.mapper = SslPrincipalMapper(lookup("ssl.principal.mapping.rules"))
        self.context = server_context(lookup)
        self.overrides: dict[str, str] = {}

    def reload(self, overrides: dict[str, str]) -> bool:
        """Rebuild the context with dynamic ``overrides`` (keys without the
        listener prefix); False if nothing changed.  Raises ConfigError (and
        keeps the current context) when the new keystore does not load."""
        if overrides == self.overrides:
            return False
        self.context = server_context(lambda key: overrides.get(key, self._lookup(key)))
        self.overrides = dict(overrides)
        return True

    def connection(self, server: SocketServer) -> TlsConnection:
        return TlsConnection(server, self.context, self.mapper)


class TlsConnection(Connection):
    def __init__(
        self,
        server: SocketServer,
        context: ssl.SSLContext,
        mapper: SslPrincipalMapper | None = None,
    ) -> None:
        super().__init__(server)
        self._tls = TlsSession(context, server_side=True, mapper=mapper)
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
                try:
                    self.principal = tls.principal
                except NoRuleApplies as exc:
                    self.close_after_failed_authentication(str(exc))
                    return
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
        # Small chunks (a response's header, its body parts) are joined before
        # encryption: each encrypt call closes a TLS record, and a record per
        # 10-byte chunk costs a cipher call and 22+ bytes of framing each.
        tls = self._tls
        pending = bytearray()
        for chunk in chunks:
            data = (
                chunk if isinstance(chunk, (bytes, bytearray, memoryview)) else chunk.read_bytes()
            )
            if len(data) >= _RECORD_BYTES:
                if pending:
                    tls.encrypt(pending)
                    pending = bytearray()
                tls.encrypt(data)
                continue
            pending += data
            if len(pending) >= _RECORD_BYTES:
                tls.encrypt(pending)
                pending = bytearray()
        if pending:
            tls.encrypt(pending)
        self._flush()
        return None

    def _flush(self) -> None:
        out = self._tls.pending_output()
        if out and self.transport is not None and not self.transport.is_closing():
            self.transport.write(out)
