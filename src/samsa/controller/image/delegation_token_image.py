"""Delegation tokens in the metadata image (Kafka's DelegationTokenImage).

One ``TokenInformation`` per token id, replayed from DelegationTokenRecord
(a new token, or the whole token again after a renewal or an expiry change)
and RemoveDelegationTokenRecord, on every node: the controller checks renewals
against it and every broker logs tokens in and describes them from it.
Principals stay as Kafka writes them in the records (``User:alice``): two
principals are the same exactly when their texts are.  As in Kafka's
``DelegationTokenDelta``, removing a token that is not there changes nothing.
The HMAC is not here: it is derived from the token id and the secret key.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TokenInformation:
    """Kafka's ``TokenInformation``: who owns the token, who asked for it, who may
    renew it, and its three timestamps (wall-clock milliseconds)."""

    token_id: str
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_timestamp: int
    max_timestamp: int
    expiry_timestamp: int

    def owner_or_renewer(self, principal: str) -> bool:
        """Kafka's ``ownerOrRenewer``: the owner, the requester or a renewer."""
        return principal in (self.owner, self.requester) or principal in self.renewers

    def may_renew(self, principal: str) -> bool:
        """Kafka's ``allowedToRenew``: the owner or a renewer (not the requester)."""
        return principal == self.owner or principal in self.renewers

    def expired(self, now_ms: int) -> bool:
        return self.max_timestamp < now_ms or self.expiry_timestamp < now_ms

    def with_expiry(self, expiry_timestamp: int) -> TokenInformation:
        return replace(self, expiry_timestamp=expiry_timestamp)

    def record_fields(self) -> dict[str, Any]:
        """The DelegationTokenRecord fields of this token."""
        return {
            "owner": self.owner,
            "requester": self.requester,
            "renewers": list(self.renewers),
            "issue_timestamp": self.issue_timestamp,
            "max_timestamp": self.max_timestamp,
            "expiration_timestamp": self.expiry_timestamp,
            "token_id": self.token_id,
        }


class DelegationTokenImage:
    def __init__(self) -> None:
        self._tokens: dict[str, TokenInformation] = {}

    def replay_upsert(self, body: Mapping[str, Any]) -> None:
        token = TokenInformation(
            token_id=body["token_id"],
            owner=body["owner"],
            requester=body["requester"],
            renewers=tuple(body["renewers"]),
            issue_timestamp=body["issue_timestamp"],
            max_timestamp=body["max_timestamp"],
            expiry_timestamp=body["expiration_timestamp"],
        )
        known = token.token_id in self._tokens
        self._tokens[token.token_id] = token
        log.info(
            "%s delegation token %s of %s (expires at %d)",
            "updated" if known else "created",
            token.token_id,
            token.owner,
            token.expiry_timestamp,
        )

    def replay_remove(self, body: Mapping[str, Any]) -> None:
        if self._tokens.pop(body["token_id"], None) is not None:
            log.info("removed delegation token %s", body["token_id"])

    def get(self, token_id: str) -> TokenInformation | None:
        return self._tokens.get(token_id)

    def __iter__(self) -> Iterator[TokenInformation]:
        return iter(list(self._tokens.values()))

    def __len__(self) -> int:
        return len(self._tokens)

    def __contains__(self, token_id: object) -> bool:
        return token_id in self._tokens

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DelegationTokenImage):
            return NotImplemented
        return self._tokens == other._tokens

    __hash__ = None  # type: ignore[assignment]
