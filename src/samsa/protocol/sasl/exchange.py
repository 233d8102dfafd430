"""A client's side of SASL PLAIN, SCRAM and OAUTHBEARER, as a sequence of tokens.

``first()`` is the token sent with the first SaslAuthenticate; ``next(answer)``
turns each server answer into the next token, or None when the exchange is
complete (having checked the server's SCRAM signature).  An OAUTHBEARER
server's JSON error is acknowledged with ``^A``, after which the server fails
the exchange with that error.  Used by the client
and by a node's own connections to other nodes.
"""

from __future__ import annotations

from samsa.errors import DecodeError
from samsa.protocol.sasl.oauthbearer import KVSEP, client_message
from samsa.protocol.sasl.oauthbearer import MECHANISM as OAUTHBEARER
from samsa.protocol.sasl.plain import plain_token
from samsa.protocol.sasl.scram import MECHANISMS as SCRAM_MECHANISMS
from samsa.protocol.sasl.scram import ScramClient

SUPPORTED = ("PLAIN", *SCRAM_MECHANISMS, OAUTHBEARER)


class SaslClientExchange:
    def __init__(
        self,
        mechanism: str,
        username: str,
        password: str,
        *,
        token: str = "",
        scram_extensions: dict[str, str] | None = None,
    ) -> None:
        """``scram_extensions``: sent in SCRAM's first message (``tokenauth=true``
        logs in by delegation token: the user name is its id, the password its HMAC)."""
        if mechanism not in SUPPORTED:
            raise ValueError(f"unsupported SASL mechanism {mechanism!r}")
        self.mechanism, self._username, self._password = mechanism, username, password
        self._token = token
        self._scram_extensions = scram_extensions
        self._scram: ScramClient | None = None
        self._step = 0

    def first(self) -> bytes:
        self._step = 1
        if self.mechanism == "PLAIN":
            return plain_token(self._username, self._password)
        if self.mechanism == OAUTHBEARER:
            return client_message(self._token)
        self._scram = ScramClient(
            self.mechanism, self._username, self._password, extensions=self._scram_extensions
        )
        return self._scram.first_message()

    def next(self, answer: bytes) -> bytes | None:
        """The next token, or None when done; DecodeError if the server is not
        who it claims (a wrong SCRAM signature)."""
        if self.mechanism == OAUTHBEARER and answer and self._step == 1:
            self._step = 2
            return KVSEP.encode()
        if self._scram is None:
            return None
        self._step += 1
        if self._step == 2:
            return self._scram.final_message(answer)
        if self._step == 3:
            self._scram.check_server_final(answer)
            return None
        raise DecodeError("SASL exchange went on after it ended")
