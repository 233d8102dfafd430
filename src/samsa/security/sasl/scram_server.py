"""SCRAM-SHA-256/512 on the server (RFC 5802; Kafka's ScramSaslServer).

Two round trips: client-first -> server-first (nonce, salt, iterations),
client-final (proof) -> server-final (the server's signature).  A failure
anywhere raises AuthenticationFailed with Kafka's wording, which does not
reveal whether the user exists.

A client-first-message with the ``tokenauth=true`` extension logs in by
delegation token (KIP-48): its user name is the token's id, checked against
credentials salted from the token's HMAC, and the login is the token's owner
(``User:<owner name>``, as Kafka's), marked token-authenticated.  Beyond Kafka, a
login without the extension whose user name is no SCRAM user but a token's id
logs in by that token too: librdkafka (confluent-kafka, kcat) has no way to send
SCRAM extensions, so this is how its clients use tokens.  A SCRAM user of the
same name wins (token ids are random, so that takes an operator's doing).  A token whose
expiry has passed is refused (Kafka lets its login through only to end the
session at once, then removes the token at the next expiry check).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from samsa.errors import DecodeError
from samsa.protocol.sasl.scram import (
    GS2_HEADER,
    ScramCredential,
    b64,
    hash_name,
    hmac_digest,
    is_token_auth,
    parse_attributes,
    parse_client_first_bare,
    unb64,
    xor,
)
from samsa.security.sasl.mechanism import AuthenticationFailed

CredentialLookup = Callable[[str, str], ScramCredential | None]


@dataclass(frozen=True, slots=True)
class TokenLogin:
    """What a login by delegation token is checked against (Kafka's
    ``DelegationTokenCredentialCallback``)."""

    credential: ScramCredential
    owner: str
    """The owner's name: the login is ``User:<owner>``, whatever the owner's type."""
    expiry_ms: int
    """The token's expiry, wall-clock milliseconds."""


TokenLookup = Callable[[str, str], TokenLogin | None]
"""(token id, mechanism) -> the token's login, or None for no such token."""


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


class ScramServer:
    def __init__(
        self,
        mechanism: str,
        lookup: CredentialLookup,
        tokens: TokenLookup | None = None,
        clock: Callable[[], int] = _wall_ms,
    ) -> None:
        """``tokens``: the delegation tokens a ``tokenauth=true`` login may name
        (None: such logins are refused, as with tokens disabled)."""
        hash_name(mechanism)
        self.mechanism = mechanism
        self._lookup = lookup
        self._tokens = tokens
        self._clock = clock
        self._step = 0
        self._user = ""
        self.attempted_user = ""
        self.token_authenticated = False
        self.token_expiry_ms: int | None = None
        """A token login's expiry (the session ends by then with re-authentication on)."""
        self._credential: ScramCredential | None = None
        self._nonce = ""
        self._client_first_bare = ""
        self._server_first = ""

    @property
    def complete(self) -> bool:
        return self._step == 2

    @property
    def authorization_id(self) -> str:
        return self._user

    def _failed(self, detail: str = "") -> AuthenticationFailed:
        self._step = -1
        return AuthenticationFailed(
            "Authentication failed during authentication due to invalid credentials "
            f"with SASL mechanism {self.mechanism}",
            detail,
        )

    def evaluate(self, token: bytes) -> bytes:
        try:
            text = token.decode()
            if self._step == 0:
                return self._client_first(text)
            if self._step == 1:
                return self._client_final(text)
        except (DecodeError, UnicodeDecodeError) as exc:
            raise self._failed(str(exc)) from None
        raise self._failed("message after the exchange ended")

    def _client_first(self, text: str) -> bytes:
        if not text.startswith(("n,", "y,")):
            raise DecodeError("channel binding is not supported")
        _, authzid, bare = text.split(",", 2) if text.count(",") >= 2 else ("", "", "")
        user, client_nonce, extensions = parse_client_first_bare(bare)
        if not user or not client_nonce:
            raise DecodeError("client-first-message needs n= and r=")
        self.attempted_user = user
        if authzid and authzid != f"a={user}":
            raise DecodeError("authorization id differs from the user name")
        if is_token_auth(extensions):
            credential = self._token_credential(user)
        else:
            found = self._lookup(user, self.mechanism)
            if found is not None:
                self._user, credential = user, found
            elif self._tokens is not None:
                # No such user: a token id, from a client that cannot send the
                # extension (librdkafka).  Tokens still need their HMAC as the password.
                credential = self._token_credential(user)
            else:
                raise DecodeError("unknown user")
        self._credential = credential
        self._nonce = client_nonce + secrets.token_hex(16)  # alphanumeric, as Kafka's
        self._client_first_bare = bare
        self._server_first = f"r={self._nonce},s={b64(credential.salt)},i={credential.iterations}"
        self._step = 1
        return self._server_first.encode()

    def _token_credential(self, token_id: str) -> ScramCredential:
        login = None if self._tokens is None else self._tokens(token_id, self.mechanism)
        if login is None:
            raise DecodeError(f"no delegation token {token_id!r}")
        if login.expiry_ms < self._clock():
            raise DecodeError(f"delegation token {token_id!r} has expired")
        self._user = login.owner
        self.token_authenticated = True
        self.token_expiry_ms = login.expiry_ms
        return login.credential

    def _client_final(self, text: str) -> bytes:
        assert self._credential is not None
        without_proof, sep, proof_part = text.rpartition(",p=")
        if not sep:
            raise DecodeError("client-final-message has no proof")
        attrs = parse_attributes(without_proof)
        if attrs.get("c") != b64(GS2_HEADER.encode()) and attrs.get("c") != b64(b"y,,"):
            raise DecodeError("bad channel binding")
        # Kafka checks that the nonce ends with the server's (not equality):
        # older librdkafka releases send the client nonce twice.
        if not attrs.get("r", "").endswith(self._nonce):
            raise DecodeError("nonce mismatch")
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode()
        signature = hmac_digest(self.mechanism, self._credential.stored_key, auth_message)
        proof = unb64(proof_part)
        if len(proof) != len(signature):
            raise DecodeError("bad proof length")
        client_key = xor(proof, signature)
        stored = hashlib.new(hash_name(self.mechanism), client_key).digest()
        if not hmac.compare_digest(stored, self._credential.stored_key):
            raise DecodeError("bad proof")
        server_signature = hmac_digest(self.mechanism, self._credential.server_key, auth_message)
        self._step = 2
        return f"v={b64(server_signature)}".encode()
