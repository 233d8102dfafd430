"""TLS over memory buffers: ciphertext in, plaintext out, and back.

Kafka's SslTransportLayer sits between the socket and the framing because
TLS records do not line up with Kafka frames; this is the same layer for
asyncio's BufferedProtocol, built on ``ssl.SSLObject`` and two MemoryBIOs so
the server decides what to log and when to close (asyncio's own TLS
transport swallows handshake failures).  No sockets here.
"""

from __future__ import annotations

import ssl
from typing import Any

from samsa.security.principal import KafkaPrincipal, ssl_principal
from samsa.security.ssl_principal_mapper import SslPrincipalMapper


class TlsClosed(Exception):
    """The peer sent close_notify: no more plaintext will come."""


class TlsSession:
    def __init__(
        self,
        context: ssl.SSLContext,
        *,
        server_side: bool,
        hostname: str | None = None,
        mapper: SslPrincipalMapper | None = None,
    ) -> None:
        self._mapper = mapper
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._obj = context.wrap_bio(
            self._incoming, self._outgoing, server_side=server_side, server_hostname=hostname
        )
        self.handshake_done = False

    def receive(self, ciphertext: bytes | bytearray | memoryview) -> None:
        """Feed bytes read from the socket; then call ``advance`` and ``read_into``."""
        self._incoming.write(ciphertext)

    def advance(self) -> bool:
        """Drive the handshake; True once it is complete.

        Raises ``ssl.SSLError`` when the peer is not speaking TLS or its
        certificate is refused (the caller logs and closes).
        """
        if not self.handshake_done:
            try:
                self._obj.do_handshake()
            except ssl.SSLWantReadError:
                return False
            self.handshake_done = True
        return True

    def read_into(self, buffer: memoryview) -> int:
        """Decrypt into ``buffer``; 0 when more ciphertext is needed.

        Raises TlsClosed after the peer's close_notify.
        """
        if not buffer:
            return 0
        try:
            got = int(self._obj.read(len(buffer), buffer))
        except ssl.SSLWantReadError:
            return 0
        except ssl.SSLZeroReturnError:
            raise TlsClosed from None
        if got == 0:  # a memory BIO reports close_notify as an empty read
            raise TlsClosed
        return got

    def encrypt(self, plaintext: Any) -> None:
        """Queue ``plaintext`` for sending (take it with ``pending_output``)."""
        # One call for the whole buffer: OpenSSL cuts it into 16 KiB records
        # itself, and a memory BIO takes everything, so the loop rarely turns.
        view = memoryview(plaintext).cast("B")
        while view:
            written = self._obj.write(view)
            view = view[written:]

    def pending_output(self) -> bytes:
        """Ciphertext to write to the socket (handshake messages included)."""
        return self._outgoing.read() if self._outgoing.pending else b""

    @property
    def has_pending_input(self) -> bool:
        return self._incoming.pending > 0 or self._obj.pending() > 0

    @property
    def principal(self) -> KafkaPrincipal:
        """Kafka's SSL principal: the client certificate's subject through the
        mapping rules, or ANONYMOUS; raises NoRuleApplies when the rules refuse it."""
        return ssl_principal(self._obj.getpeercert() if self.handshake_done else None, self._mapper)

    @property
    def version(self) -> str:
        return self._obj.version() or ""
