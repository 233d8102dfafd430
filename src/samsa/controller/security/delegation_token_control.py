"""Delegation tokens on the controller (Kafka's DelegationTokenControlManager, KIP-48).

Create, renew and expire each read the committed image and answer with the
records to write, in Kafka's order of checks:

* create: tokens disabled (no ``delegation.token.secret.key``) is
  DELEGATION_TOKEN_AUTH_DISABLED; a renewer that is not a ``User`` is
  INVALID_PRINCIPAL_TYPE.  The owner is the one the request names (v3,
  KIP-373), else the requester; the token lives until ``now +
  delegation.token.expiry.time.ms`` and can be renewed up to ``now +
  delegation.token.max.lifetime.ms`` (or the request's shorter
  ``max_lifetime_ms``).  The answer carries the id and the HMAC, the record
  neither the HMAC nor anything it could be derived from without the key.
* renew and expire find the token by its HMAC (DELEGATION_TOKEN_NOT_FOUND)
  and refuse anyone but its owner and renewers (DELEGATION_TOKEN_OWNER_MISMATCH)
  and, except for an expiry now, a token whose time is up
  (DELEGATION_TOKEN_EXPIRED); Kafka 4.4 checks renewals for expiry before the
  renewer, and expiries after.  A renewal moves the expiry to ``now`` plus the
  default period (or the request's shorter one), never past the token's
  maximum; an expiry with a negative period removes the token and answers
  ``now``, else moves its expiry to ``now`` plus the period.

``sweep`` removes the tokens whose time is up, every
``delegation.token.expiry.check.interval.ms``, at most 1,000 a time and then
again at the next poll until none is left (Kafka's
``sweepExpiredDelegationTokens`` as a periodic task).  Sums of timestamps and
periods saturate at Long.MAX, as Kafka's do.  Who may ask at all (not over a
token-authenticated connection) and who may create tokens for another owner
(CREATE_TOKENS on that user) are the request handler's checks, as in Kafka's
ControllerApis; ``requester`` here is the principal, as ``User:alice``.
Timestamps are wall-clock milliseconds, passed in.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Container, Mapping
from typing import Any

from samsa.controller.controller_config import ControllerConfig
from samsa.controller.controller_result import ControllerResult
from samsa.controller.image.delegation_token_image import TokenInformation
from samsa.controller.image.metadata_image import MetadataImage
from samsa.errors import ErrorCode
from samsa.protocol.metadata_records import MetadataRecord, make_record
from samsa.protocol.sasl.delegation_token import TokenHmacs

USER_TYPE = "User"
MAX_RECORDS_PER_SWEEP = 1000
"""Kafka's ``MAX_RECORDS_PER_EXPIRATION``."""
LONG_MAX = 2**63 - 1


def saturated_sum(a: int, b: int) -> int:
    """Kafka's ``sum``: ``a + b``, or Long.MAX when that would overflow."""
    return LONG_MAX if a > LONG_MAX - b else a + b


def principal_parts(principal: str) -> tuple[str, str]:
    """``User:alice`` -> ("User", "alice"), as Kafka's ``parseKafkaPrincipal`` splits it."""
    kind, _, name = principal.partition(":")
    return kind, name


def new_token_id(rng: random.Random, taken: Container[str]) -> str:
    """A Kafka ``Uuid`` as Kafka prints it (22 characters of URL-safe base64),
    never the zero uuid, one starting with "-" (Kafka's rule) or one in use."""
    while True:
        raw = rng.getrandbits(128).to_bytes(16, "big")
        token_id = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        if any(raw) and not token_id.startswith("-") and token_id not in taken:
            return token_id


class DelegationTokenControl:
    def __init__(self, image: MetadataImage, config: ControllerConfig, rng: random.Random) -> None:
        self.image = image
        self.config = config
        self.rng = rng
        secret = config.delegation_token_secret_key
        self._hmacs = TokenHmacs(secret) if secret else None
        self._next_sweep_ms: int | None = None

    @property
    def enabled(self) -> bool:
        return self._hmacs is not None

    # ------------------------------------------------------------------ create
    def create(self, request: Mapping[str, Any], requester: str, now_ms: int) -> ControllerResult:
        owner = requester
        if request.get("owner_principal_name"):
            owner = f"{request.get('owner_principal_type')}:{request['owner_principal_name']}"
        owner_type, owner_name = principal_parts(owner)
        requester_type, requester_name = principal_parts(requester)
        response: dict[str, Any] = {
            "error_code": ErrorCode.NONE,
            "principal_type": owner_type,
            "principal_name": owner_name,
            "token_requester_principal_type": requester_type,
            "token_requester_principal_name": requester_name,
            "issue_timestamp_ms": 0,
            "expiry_timestamp_ms": 0,
            "max_timestamp_ms": 0,
            "token_id": "",
            "hmac": b"",
            "throttle_time_ms": 0,
        }
        hmacs = self._hmacs
        if hmacs is None:
            return _answer({**response, "error_code": ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED})
        max_lifetime = self.config.delegation_token_max_lifetime_ms
        if request["max_lifetime_ms"] > 0:
            max_lifetime = min(max_lifetime, request["max_lifetime_ms"])
        max_timestamp = saturated_sum(now_ms, max_lifetime)
        expiry_timestamp = min(
            max_timestamp, saturated_sum(now_ms, self.config.delegation_token_expiry_time_ms)
        )
        renewers = []
        for renewer in request["renewers"]:
            if renewer["principal_type"] != USER_TYPE:
                return _answer({**response, "error_code": ErrorCode.INVALID_PRINCIPAL_TYPE})
            renewers.append(f"{renewer['principal_type']}:{renewer['principal_name']}")
        token = TokenInformation(
            token_id=new_token_id(self.rng, self.image.delegation_tokens),
            owner=owner,
            requester=requester,
            renewers=tuple(renewers),
            issue_timestamp=now_ms,
            max_timestamp=max_timestamp,
            expiry_timestamp=expiry_timestamp,
        )
        response.update(
            issue_timestamp_ms=now_ms,
            expiry_timestamp_ms=expiry_timestamp,
            max_timestamp_ms=max_timestamp,
            token_id=token.token_id,
            hmac=hmacs.of(token.token_id),
        )
        return ControllerResult([token_record(token)], response)

    # ------------------------------------------------------------------ renew and expire
    def renew(self, request: Mapping[str, Any], requester: str, now_ms: int) -> ControllerResult:
        token, error = self._find(bytes(request["hmac"]))
        if token is None:
            return _answer(_expiry_answer(error, 0))
        if token.expired(now_ms):
            return _answer(_expiry_answer(ErrorCode.DELEGATION_TOKEN_EXPIRED, 0))
        if not token.may_renew(requester):
            return _answer(_expiry_answer(ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH, 0))
        renew_lifetime = self.config.delegation_token_expiry_time_ms
        if request["renew_period_ms"] > 0:
            renew_lifetime = min(renew_lifetime, request["renew_period_ms"])
        expiry = min(token.max_timestamp, now_ms + renew_lifetime)
        return ControllerResult(
            [token_record(token.with_expiry(expiry))], _expiry_answer(ErrorCode.NONE, expiry)
        )

    def expire(self, request: Mapping[str, Any], requester: str, now_ms: int) -> ControllerResult:
        token, error = self._find(bytes(request["hmac"]))
        if token is None:
            return _answer(_expiry_answer(error, 0))
        if not token.may_renew(requester):
            return _answer(_expiry_answer(ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH, 0))
        period = request["expiry_time_period_ms"]
        if period < 0:  # expire at once, expired already or not
            record = make_record("RemoveDelegationTokenRecord", token_id=token.token_id)
            return ControllerResult([record], _expiry_answer(ErrorCode.NONE, now_ms))
        if token.expired(now_ms):
            return _answer(_expiry_answer(ErrorCode.DELEGATION_TOKEN_EXPIRED, 0))
        expiry = min(token.max_timestamp, saturated_sum(now_ms, period))
        return ControllerResult(
            [token_record(token.with_expiry(expiry))], _expiry_answer(ErrorCode.NONE, expiry)
        )

    def _find(self, hmac_bytes: bytes) -> tuple[TokenInformation | None, ErrorCode]:
        """The token of this HMAC (Kafka's ``getToken``), or why there is none."""
        hmacs = self._hmacs
        if hmacs is None:
            return None, ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED
        tokens = self.image.delegation_tokens
        hmacs.forget_all_but(tokens)
        token_id = hmacs.find(hmac_bytes, (t.token_id for t in tokens))
        token = None if token_id is None else tokens.get(token_id)
        if token is None:
            return None, ErrorCode.DELEGATION_TOKEN_NOT_FOUND
        return token, ErrorCode.NONE

    # ------------------------------------------------------------------ timed work
    def sweep(self, now_ms: int) -> list[MetadataRecord]:
        """RemoveDelegationTokenRecords for the tokens whose time is up, once per
        ``delegation.token.expiry.check.interval.ms`` (nothing in between, and
        nothing while tokens are disabled, as Kafka schedules it)."""
        if not self.enabled:
            return []
        interval = self.config.delegation_token_expiry_check_interval_ms
        if self._next_sweep_ms is None:
            self._next_sweep_ms = now_ms + interval
            return []
        if now_ms < self._next_sweep_ms:
            return []
        records = [
            make_record("RemoveDelegationTokenRecord", token_id=token.token_id)
            for token in self.image.delegation_tokens
            if token.expired(now_ms)
        ][:MAX_RECORDS_PER_SWEEP]
        # A full sweep may have left more: the next poll goes on (Kafka reruns it at once).
        more = len(records) == MAX_RECORDS_PER_SWEEP
        self._next_sweep_ms = now_ms if more else now_ms + interval
        return records


def token_record(token: TokenInformation) -> MetadataRecord:
    return make_record("DelegationTokenRecord", **token.record_fields())


def _answer(response: dict[str, Any]) -> ControllerResult:
    return ControllerResult([], response)


def _expiry_answer(error: ErrorCode, expiry_ms: int) -> dict[str, Any]:
    return {"error_code": error, "expiry_timestamp_ms": expiry_ms, "throttle_time_ms": 0}
