"""SCRAM users: DescribeUserScramCredentials (50) and AlterUserScramCredentials (51).

As Kafka's Admin: the password is salted here (a random salt, PBKDF2 with the
mechanism's hash) and only the salted password travels; the broker forwards
the change to the controller.  Answers are per user: None where the change
was accepted, else the error naming the user.  Describing gives each user's
mechanisms and iteration counts, never anything derived from the password.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping

from samsa.client.admin.item_errors import item_error
from samsa.client.admin.plumbing import AdminPlumbing
from samsa.client.consumer.errors import kafka_error
from samsa.errors import KafkaError
from samsa.protocol.sasl.scram import MECHANISM_NAMES, MECHANISM_TYPES, salted_password

DESCRIBE_USER_SCRAM_CREDENTIALS, ALTER_USER_SCRAM_CREDENTIALS = 50, 51


def describe_user_scram_credentials(
    admin: AdminPlumbing, users: Iterable[str] | None, timeout_ms: int
) -> dict[str, dict[str, int]]:
    """{user: {mechanism: iterations}} of ``users`` (or of every user); an unknown
    user raises its RESOURCE_NOT_FOUND error."""
    wanted = None if users is None else [{"name": u} for u in users]
    resp = admin._call(None, DESCRIBE_USER_SCRAM_CREDENTIALS, {"users": wanted}, timeout_ms)
    if resp["error_code"]:
        raise kafka_error(resp["error_code"], resp.get("error_message") or "")
    out: dict[str, dict[str, int]] = {}
    for result in resp["results"]:
        error = item_error(result["error_code"], result.get("error_message"), result["user"])
        if error is not None:
            raise error
        out[result["user"]] = {
            MECHANISM_NAMES.get(info["mechanism"], str(info["mechanism"])): info["iterations"]
            for info in result["credential_infos"]
        }
    return out


def alter_user_scram_credentials(
    admin: AdminPlumbing,
    upsertions: Mapping[tuple[str, str], tuple[str, int]],
    deletions: Iterable[tuple[str, str]],
    timeout_ms: int,
) -> dict[str, KafkaError | None]:
    """Set ``{(user, mechanism): (password, iterations)}`` and delete
    ``(user, mechanism)`` credentials; the error of each user, or None."""
    body = {
        "deletions": [
            {"name": user, "mechanism": _type(mechanism)} for user, mechanism in deletions
        ],
        "upsertions": [],
    }
    for (user, mechanism), (password, iterations) in upsertions.items():
        salt = secrets.token_bytes(32)
        body["upsertions"].append(
            {
                "name": user,
                "mechanism": _type(mechanism),
                "iterations": iterations,
                "salt": salt,
                "salted_password": salted_password(mechanism, password, salt, iterations),
            }
        )
    resp = admin._call(None, ALTER_USER_SCRAM_CREDENTIALS, body, timeout_ms)
    return {
        r["user"]: item_error(r["error_code"], r.get("error_message"), f"user {r['user']}")
        for r in resp["results"]
    }


def _type(mechanism: str) -> int:
    try:
        return MECHANISM_TYPES[mechanism.upper()]
    except KeyError:
        raise ValueError(
            f"unknown SCRAM mechanism {mechanism!r} ({', '.join(MECHANISM_TYPES)})"
        ) from None
