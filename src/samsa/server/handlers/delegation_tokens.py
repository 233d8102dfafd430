"""Create/Renew/Expire/DescribeDelegationToken (38-41) on a broker, as Kafka 4.4 serves them.

No request about tokens is taken over PLAINTEXT, over SSL without a client
certificate, or from a token-authenticated principal (a token cannot beget
tokens): DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (Kafka's ``allowTokenRequests``).

Create, renew and expire change the metadata log, so they are the active
controller's: the broker forwards them with who asked and from where (Kafka's
Envelope), and the controller judges them again as that client's
(``controller_token_apis``).  Before that, a create for another owner needs
CREATE_TOKENS on that owner's USER resource (DELEGATION_TOKEN_AUTHORIZATION_FAILED)
and renewers must be users (INVALID_PRINCIPAL_TYPE), as Kafka's broker checks.

Describe is answered here from this broker's image (Kafka's
``handleDescribeTokensRequest``): DELEGATION_TOKEN_AUTH_DISABLED without a
secret key; an empty owner list asks for nothing, a null one for every
token.  A token is listed when it belongs to one of the owners asked for (as
owner, requester or renewer), and then when the caller owns, requested or may
renew it, or may DESCRIBE that DELEGATION_TOKEN, or DESCRIBE_TOKENS of its
owner's USER (KIP-373); without an authorizer every token is listed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samsa.config.security_protocols import SecurityProtocol
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.acl import AclOperation, ResourceType
from samsa.protocol.envelope import ForwardedPrincipal, RequestOrigin
from samsa.security.principal import ANONYMOUS, KafkaPrincipal
from samsa.server.connections.router import Body, RequestContext, Router
from samsa.server.controller_token_apis import owner_of, refused

if TYPE_CHECKING:
    from samsa.controller.image.delegation_token_image import TokenInformation
    from samsa.server.broker_api import BrokerApi

CREATE, RENEW, EXPIRE, DESCRIBE = 38, 39, 40, 41


def register(router: Router, broker: BrokerApi, listener: str) -> None:
    protocol = broker.security_protocol(listener)
    for api_key in (CREATE, RENEW, EXPIRE):
        router.register(
            api_key,
            lambda ctx, req, key=api_key: change(broker, protocol, key, ctx, req),  # type: ignore[misc]
        )
    router.register(DESCRIBE, lambda ctx, req: describe(broker, protocol, ctx, req))


def principal_of(ctx: RequestContext) -> KafkaPrincipal:
    caller = ctx.caller
    principal = getattr(caller, "principal", None)
    return principal if isinstance(principal, KafkaPrincipal) else ANONYMOUS


def origin_of(ctx: RequestContext) -> RequestOrigin:
    principal = principal_of(ctx)
    host = ctx.caller.host if ctx.caller is not None else ""
    return RequestOrigin(
        ForwardedPrincipal(principal.type, principal.name, principal.token_authenticated), host
    )


async def change(
    broker: BrokerApi, protocol: SecurityProtocol, api_key: int, ctx: RequestContext, req: Body
) -> Body:
    """Create, renew or expire: the broker's checks, then the controller's answer."""
    origin = origin_of(ctx)
    principal = principal_of(ctx)
    if not allow_token_requests(protocol, principal):
        return refused(api_key, req, origin, ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED)
    if api_key == CREATE:
        requester = str(principal)
        owner = owner_of(req, requester)
        if owner != requester and not _may(
            broker, ctx, AclOperation.CREATE_TOKENS, ResourceType.USER, owner
        ):
            return refused(api_key, req, origin, ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED)
        if any(r["principal_type"] != "User" for r in req["renewers"]):
            return refused(api_key, req, origin, ErrorCode.INVALID_PRINCIPAL_TYPE)
    try:
        return await broker.forward(api_key, ctx.version, req, origin=origin)
    except KafkaError as exc:
        return refused(api_key, req, origin, exc.code)


def allow_token_requests(protocol: SecurityProtocol, principal: KafkaPrincipal) -> bool:
    """Kafka's broker-side ``allowTokenRequests`` (the connection is the client's own)."""
    if principal.token_authenticated or protocol is SecurityProtocol.PLAINTEXT:
        return False
    return not (protocol is SecurityProtocol.SSL and principal == ANONYMOUS)


def describe(broker: BrokerApi, protocol: SecurityProtocol, ctx: RequestContext, req: Body) -> Body:
    answer: Body = {"error_code": ErrorCode.NONE, "tokens": [], "throttle_time_ms": 0}
    principal = principal_of(ctx)
    tokens = broker.tokens
    if not allow_token_requests(protocol, principal):
        return {**answer, "error_code": ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED}
    if not tokens.enabled:
        return {**answer, "error_code": ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED}
    owners = req.get("owners")
    if owners is not None and not owners:
        return answer
    wanted = (
        None if owners is None else [f"{o['principal_type']}:{o['principal_name']}" for o in owners]
    )
    caller = str(principal)

    def allowed(token: TokenInformation) -> bool:
        if wanted is not None and not any(token.owner_or_renewer(o) for o in wanted):
            return False
        if token.owner_or_renewer(caller):
            return True
        return _may(
            broker, ctx, AclOperation.DESCRIBE, ResourceType.DELEGATION_TOKEN, token.token_id
        ) or _may(broker, ctx, AclOperation.DESCRIBE_TOKENS, ResourceType.USER, token.owner)

    answer["tokens"] = [
        _described(token, tokens.hmac(token.token_id))
        for token in tokens.tokens()
        if allowed(token)
    ]
    return answer


def _may(
    broker: BrokerApi,
    ctx: RequestContext,
    operation: AclOperation,
    resource_type: ResourceType,
    name: str,
) -> bool:
    authorizer = broker.authorizer
    if authorizer is None:
        return True
    caller = ctx.caller
    if caller is None:
        return False
    return authorizer.authorize(caller.principal_name, caller.host, operation, resource_type, name)


def _described(token: TokenInformation, hmac: bytes) -> dict[str, Any]:
    owner_type, _, owner_name = token.owner.partition(":")
    requester_type, _, requester_name = token.requester.partition(":")
    return {
        "principal_type": owner_type,
        "principal_name": owner_name,
        "token_requester_principal_type": requester_type,
        "token_requester_principal_name": requester_name,
        "issue_timestamp": token.issue_timestamp,
        "expiry_timestamp": token.expiry_timestamp,
        "max_timestamp": token.max_timestamp,
        "token_id": token.token_id,
        "hmac": hmac,
        "renewers": [
            {"principal_type": kind, "principal_name": name}
            for kind, _, name in (renewer.partition(":") for renewer in token.renewers)
        ],
    }
