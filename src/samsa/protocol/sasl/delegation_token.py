"""A delegation token's secret and the SCRAM credentials it logs in with (KIP-48).

A token is its id (a UUID string) and its HMAC: HMAC-SHA512 of the id under
the cluster's ``delegation.token.secret.key``, so every node that knows the
key derives it and the metadata log never holds it.  The client logs in by
SCRAM with the id as user name and the HMAC, base64, as password (plus the
``tokenauth=true`` extension); the server checks that against credentials it
salts from the same password, for each SCRAM mechanism, at the mechanism's
minimum iterations (Kafka's ``DelegationTokenManager.prepareScramCredentials``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Container, Iterable

from samsa.protocol.sasl.scram import MECHANISMS, ScramCredential, make_credential


def token_hmac(secret_key: str, token_id: str) -> bytes:
    """Kafka's ``createHmac``: HmacSHA512 keyed by the secret's UTF-8 bytes."""
    return hmac.new(secret_key.encode(), token_id.encode(), hashlib.sha512).digest()


def token_password(token_hmac_bytes: bytes) -> str:
    """The password a client logs in with: the HMAC in base64, as Kafka's tools print it."""
    return base64.b64encode(token_hmac_bytes).decode()


def token_credential(token_hmac_bytes: bytes, mechanism: str) -> ScramCredential:
    """A SCRAM credential of the token's password (a fresh salt each call)."""
    return make_credential(
        mechanism, token_password(token_hmac_bytes), iterations=MECHANISMS[mechanism][1]
    )


class TokenHmacs:
    """The HMACs of token ids under one secret key, each computed once: the
    controller finds a token by its HMAC (renew, expire) and brokers hand it
    out (describe) and log in with it."""

    def __init__(self, secret_key: str) -> None:
        self.secret_key = secret_key
        self._by_id: dict[str, bytes] = {}

    def of(self, token_id: str) -> bytes:
        found = self._by_id.get(token_id)
        if found is None:
            found = self._by_id[token_id] = token_hmac(self.secret_key, token_id)
        return found

    def find(self, hmac_bytes: bytes, token_ids: Iterable[str]) -> str | None:
        """Which of ``token_ids`` has this HMAC (Kafka's ``tokenForHmac``), if any."""
        for token_id in token_ids:
            if hmac.compare_digest(self.of(token_id), hmac_bytes):
                return token_id
        return None

    def forget_all_but(self, token_ids: Container[str]) -> None:
        """Drop the HMACs of tokens no longer there."""
        for token_id in [t for t in self._by_id if t not in token_ids]:
            del self._by_id[token_id]
