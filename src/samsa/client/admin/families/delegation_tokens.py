"""Delegation tokens (KIP-48): Create/Renew/Expire/DescribeDelegationToken (38-41).

As Kafka's Admin: a token is created for the caller (or, KIP-373, for an
owner the caller may create tokens for) and answered with its id and HMAC,
which together log a client in by SCRAM (``DelegationToken.jaas_config``).
Renewing and expiring name the token by its HMAC and answer its new expiry.
A refusal raises the KafkaError of Kafka's code (DELEGATION_TOKEN_NOT_FOUND,
DELEGATION_TOKEN_OWNER_MISMATCH, ...).  Principals are ``Type:name`` texts.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from samsa.client.admin.plumbing import AdminPlumbing
from samsa.client.consumer.errors import kafka_error

CREATE, RENEW, EXPIRE, DESCRIBE = 38, 39, 40, 41


@dataclass(frozen=True)
class DelegationToken:
    token_id: str
    hmac: bytes
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_timestamp_ms: int
    expiry_timestamp_ms: int
    max_timestamp_ms: int

    @property
    def password(self) -> str:
        """The SCRAM password of a login by this token: the HMAC in base64."""
        return base64.b64encode(self.hmac).decode()

    def jaas_config(self) -> str:
        """``sasl.jaas.config`` logging a client in by this token (SCRAM-SHA-256/512)."""
        return (
            "org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="{self.token_id}" password="{self.password}" tokenauth="true";'
        )


def create_delegation_token(
    admin: AdminPlumbing,
    renewers: Iterable[str],
    owner: str | None,
    max_lifetime_ms: int,
    timeout_ms: int,
) -> DelegationToken:
    owner_type, owner_name = _parts(owner) if owner else (None, None)
    renewer_list = [_principal(r) for r in renewers]
    body = {
        "owner_principal_type": owner_type,
        "owner_principal_name": owner_name,
        "renewers": renewer_list,
        "max_lifetime_ms": max_lifetime_ms,
    }
    resp = _checked(admin._call(None, CREATE, body, timeout_ms))
    owner_text = f"{resp['principal_type']}:{resp['principal_name']}"
    requester = resp.get("token_requester_principal_name")
    return DelegationToken(
        token_id=resp["token_id"],
        hmac=bytes(resp["hmac"]),
        owner=owner_text,
        requester=(
            f"{resp['token_requester_principal_type']}:{requester}" if requester else owner_text
        ),
        renewers=tuple(f"{r['principal_type']}:{r['principal_name']}" for r in renewer_list),
        issue_timestamp_ms=resp["issue_timestamp_ms"],
        expiry_timestamp_ms=resp["expiry_timestamp_ms"],
        max_timestamp_ms=resp["max_timestamp_ms"],
    )


def renew_delegation_token(
    admin: AdminPlumbing, hmac: bytes, renew_period_ms: int, timeout_ms: int
) -> int:
    """The token's new expiry (wall-clock ms)."""
    body = {"hmac": hmac, "renew_period_ms": renew_period_ms}
    return int(_checked(admin._call(None, RENEW, body, timeout_ms))["expiry_timestamp_ms"])


def expire_delegation_token(
    admin: AdminPlumbing, hmac: bytes, expiry_time_period_ms: int, timeout_ms: int
) -> int:
    """The token's new expiry; a negative period removes the token at once."""
    body = {"hmac": hmac, "expiry_time_period_ms": expiry_time_period_ms}
    return int(_checked(admin._call(None, EXPIRE, body, timeout_ms))["expiry_timestamp_ms"])


def describe_delegation_tokens(
    admin: AdminPlumbing, owners: Iterable[str] | None, timeout_ms: int
) -> list[DelegationToken]:
    """The tokens of ``owners`` (None: every token the caller may see)."""
    body = {"owners": None if owners is None else [_principal(o) for o in owners]}
    resp = _checked(admin._call(None, DESCRIBE, body, timeout_ms))
    return [
        DelegationToken(
            token_id=t["token_id"],
            hmac=bytes(t["hmac"]),
            owner=f"{t['principal_type']}:{t['principal_name']}",
            requester=(
                f"{t['token_requester_principal_type']}:{t['token_requester_principal_name']}"
                if t.get("token_requester_principal_name")
                else f"{t['principal_type']}:{t['principal_name']}"
            ),
            renewers=tuple(f"{r['principal_type']}:{r['principal_name']}" for r in t["renewers"]),
            issue_timestamp_ms=t["issue_timestamp"],
            expiry_timestamp_ms=t["expiry_timestamp"],
            max_timestamp_ms=t["max_timestamp"],
        )
        for t in resp["tokens"]
    ]


def _checked(resp: Any) -> Any:
    if resp["error_code"]:
        raise kafka_error(resp["error_code"])
    return resp


def _parts(principal: str) -> tuple[str, str]:
    kind, sep, name = principal.partition(":")
    if not sep or not kind or not name:
        raise ValueError(f"principal {principal!r} is not TYPE:NAME (User:alice)")
    return kind, name


def _principal(principal: str) -> dict[str, str]:
    kind, name = _parts(principal)
    return {"principal_type": kind, "principal_name": name}
