"""Create, Renew and ExpireDelegationToken at the active controller (Kafka's ControllerApis).

Brokers forward these three with the client's principal and address
(``RequestOrigin``, in an Envelope when the controller is another node), and
the controller judges the request as that client's, as Kafka's does:

* never from a token-authenticated principal: a token cannot beget tokens
  (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED).  The security protocol of the
  client's own connection is not judged here: Kafka's controller lets
  forwarded requests through whatever listener they came on.
* a token for an owner other than the requester needs CREATE_TOKENS on that
  owner's USER resource (``User:carol``), when an authorizer is configured
  (DELEGATION_TOKEN_AUTHORIZATION_FAILED).

These refusals answer with Kafka's ``-1`` timestamps; everything else is the
controller's (``controller.delegation_token_control``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from samsa.controller.controller_result import ControllerResult
from samsa.errors import ErrorCode
from samsa.protocol.acl import AclOperation, ResourceType
from samsa.protocol.envelope import RequestOrigin

if TYPE_CHECKING:
    from samsa.controller.quorum_controller import QuorumController
    from samsa.security.authorizer.standard import StandardAuthorizer

Body = dict[str, Any]

CREATE_DELEGATION_TOKEN, RENEW_DELEGATION_TOKEN, EXPIRE_DELEGATION_TOKEN = 38, 39, 40
TOKEN_APIS = frozenset({CREATE_DELEGATION_TOKEN, RENEW_DELEGATION_TOKEN, EXPIRE_DELEGATION_TOKEN})
ERROR_TIMESTAMP = -1
"""Kafka's ``DelegationTokenManager.ErrorTimestamp``."""


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


def requester_of(origin: RequestOrigin) -> str:
    principal = origin.principal
    return f"{principal.type}:{principal.name}"


def refusal(
    api_key: int, body: Body, origin: RequestOrigin | None, authorizer: StandardAuthorizer | None
) -> Body | None:
    """The answer to a request the controller refuses before it looks at tokens."""
    if origin is None or origin.principal.token_authenticated:
        return refused(api_key, body, origin, ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED)
    if api_key != CREATE_DELEGATION_TOKEN or authorizer is None:
        return None
    requester = requester_of(origin)
    owner = owner_of(body, requester)
    if owner != requester and not authorizer.authorize(
        requester, origin.client_host, AclOperation.CREATE_TOKENS, ResourceType.USER, owner
    ):
        return refused(api_key, body, origin, ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED)
    return None


def run(
    controller: QuorumController, api_key: int, body: Body, origin: RequestOrigin
) -> ControllerResult:
    """The controller's answer and records (``refusal`` found nothing to refuse)."""
    requester, now = requester_of(origin), wall_ms()
    if api_key == CREATE_DELEGATION_TOKEN:
        return controller.create_delegation_token(body, requester, now)
    if api_key == RENEW_DELEGATION_TOKEN:
        return controller.renew_delegation_token(body, requester, now)
    return controller.expire_delegation_token(body, requester, now)


def refused(api_key: int, body: Body, origin: RequestOrigin | None, code: int) -> Body:
    """An answer refusing the whole request with ``code``, in the API's shape."""
    if api_key != CREATE_DELEGATION_TOKEN:
        return {"error_code": code, "expiry_timestamp_ms": ERROR_TIMESTAMP, "throttle_time_ms": 0}
    requester = requester_of(origin) if origin is not None else ":"
    owner_type, _, owner_name = owner_of(body, requester).partition(":")
    requester_type, _, requester_name = requester.partition(":")
    return {
        "error_code": code,
        "principal_type": owner_type,
        "principal_name": owner_name,
        "token_requester_principal_type": requester_type,
        "token_requester_principal_name": requester_name,
        "issue_timestamp_ms": ERROR_TIMESTAMP,
        "expiry_timestamp_ms": ERROR_TIMESTAMP,
        "max_timestamp_ms": ERROR_TIMESTAMP,
        "token_id": "",
        "hmac": b"",
        "throttle_time_ms": 0,
    }


def owner_of(body: Body, requester: str) -> str:
    """A CreateDelegationToken's owner: the one it names (v3), else the requester."""
    name = body.get("owner_principal_name")
    if not name:
        return requester
    return f"{body.get('owner_principal_type')}:{name}"
