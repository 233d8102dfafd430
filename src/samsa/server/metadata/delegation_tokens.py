"""A node's delegation tokens: logins by token and their HMACs (Kafka's DelegationTokenManager).

The tokens themselves are the metadata image's (``delegation_token_image``),
replayed from the controller's records on every node, so a token created
through one broker logs in on any other as soon as that one has caught up.
What each node adds is what the records leave out: the HMAC (from the token
id and ``delegation.token.secret.key``) and the SCRAM credentials salted from
it for each mechanism (Kafka's ``DelegationTokenCache``), made on a token's
first login and kept while the token exists.  Without a secret key nothing
logs in by token, as in Kafka.
"""

from __future__ import annotations

from collections.abc import Callable

from samsa.controller.image.delegation_token_image import DelegationTokenImage, TokenInformation
from samsa.protocol.sasl.delegation_token import TokenHmacs, token_credential
from samsa.protocol.sasl.scram import ScramCredential
from samsa.security.sasl.scram_server import TokenLogin

_PRUNE_EVERY = 256
"""Logins between two drops of the credentials of tokens that are gone."""


class NodeTokens:
    def __init__(self, secret_key: str | None, image: Callable[[], DelegationTokenImage]) -> None:
        """``image``: the node's current tokens (the loader's image holds them)."""
        self._hmacs = TokenHmacs(secret_key) if secret_key else None
        self._image = image
        self._credentials: dict[tuple[str, str], ScramCredential] = {}
        self._logins = 0

    @property
    def enabled(self) -> bool:
        """A secret key is set (Kafka's ``tokenAuthEnabled``)."""
        return self._hmacs is not None

    def hmac(self, token_id: str) -> bytes:
        assert self._hmacs is not None, "delegation tokens are disabled"
        return self._hmacs.of(token_id)

    def tokens(self) -> list[TokenInformation]:
        return list(self._image())

    def login(self, token_id: str, mechanism: str) -> TokenLogin | None:
        """What a SCRAM login naming ``token_id`` is checked against (None: no such
        token here, or tokens disabled)."""
        hmacs = self._hmacs
        if hmacs is None:
            return None
        tokens = self._image()
        self._logins += 1
        if self._logins % _PRUNE_EVERY == 0:
            self._prune(tokens)
        token = tokens.get(token_id)
        if token is None:
            return None
        credential = self._credentials.get((token_id, mechanism))
        if credential is None:
            credential = token_credential(hmacs.of(token_id), mechanism)
            self._credentials[(token_id, mechanism)] = credential
        owner_name = token.owner.partition(":")[2]
        return TokenLogin(credential, owner_name, token.expiry_timestamp)

    def _prune(self, tokens: DelegationTokenImage) -> None:
        assert self._hmacs is not None
        for key in [k for k in self._credentials if k[0] not in tokens]:
            del self._credentials[key]
        self._hmacs.forget_all_but(tokens)
