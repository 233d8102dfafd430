"""Every API checks what Kafka's KafkaApis checks, before its handler runs.

Each handler is wrapped, once, when the listener's router is built and only
when an authorizer is configured: with authorization off no wrapper exists and
the hot paths are exactly as before.  A wrapper asks the authorizer about the
resources the request names; denied parts are answered with Kafka's error
(TOPIC_/GROUP_/CLUSTER_/TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and only the
allowed rest reaches the handler, whose answer gets the denied parts merged
back in.  One module per family of APIs.

Fail closed: an API that no module checks (one added later and not yet given
its check) is left to principals with CLUSTER_ACTION (the nodes and super
users), never open to everyone; others get CLUSTER_AUTHORIZATION_FAILED, or
their connection closed where the response has no error field to say so.
Open stay only the APIs a client needs before it is known (ApiVersions, the
SASL exchange) and those whose handlers ask the authorizer themselves (the ACL
APIs, which must answer SECURITY_DISABLED without one; the delegation token
APIs, whose checks depend on the token and the owner asked for, and which the
controller judges as the client's).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode
from samsa.protocol.acl import AclOperation
from samsa.protocol.messages import APIS
from samsa.server.access import (
    admin,
    groups,
    inter_node,
    metadata,
    share_groups,
    topics,
    transactions,
)
from samsa.server.access.base import Check, can_cluster, guard, whole
from samsa.server.connections.router import Body, Handler, RequestContext
from samsa.server.connections.socket_server import CloseConnection

log = logging.getLogger("samsa.server")

SASL_HANDSHAKE, API_VERSIONS, SASL_AUTHENTICATE = 17, 18, 36
DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = 29, 30, 31
DELEGATION_TOKEN_APIS = (38, 39, 40, 41)
OPEN_APIS = frozenset(
    (
        SASL_HANDSHAKE,
        API_VERSIONS,
        SASL_AUTHENTICATE,
        DESCRIBE_ACLS,
        CREATE_ACLS,
        DELETE_ACLS,
        *DELEGATION_TOKEN_APIS,
    )
)


def cluster_action_only(api_key: int) -> Check:
    """The check of an API no module knows: CLUSTER_ACTION, else refused."""
    answers_error = any(f.name == "error_code" for f in APIS[api_key].response)

    def check(auth: StandardAuthorizer, ctx: RequestContext, req: Body, inner: Handler) -> Any:
        if can_cluster(auth, ctx, AclOperation.CLUSTER_ACTION):
            return inner(ctx, req)
        if answers_error:
            return whole(
                ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                error_message="Cluster authorization failed.",
            )
        raise CloseConnection(f"api key {api_key} refused: cluster authorization failed")

    return check


if TYPE_CHECKING:
    from samsa.security.authorizer.standard import StandardAuthorizer
    from samsa.server.connections.router import Router


def guard_all(router: Router, authorizer: StandardAuthorizer, broker: Any) -> list[int]:
    """Wrap the handlers ``router`` has with their authorization checks
    (``broker`` gives the metadata image, to name topics given by id); return
    the API keys no module checks, left to CLUSTER_ACTION."""
    unchecked = {key: router.handler(key) for key in router.api_keys() if key not in OPEN_APIS}
    for module in (topics, groups, transactions, admin, metadata, inter_node, share_groups):
        module.guard(router, authorizer, broker)
    fallback = [key for key, handler in unchecked.items() if router.handler(key) is handler]
    for key in fallback:
        log.debug("api key %d has no ACL check of its own: CLUSTER_ACTION only", key)
        guard(router, key, authorizer, cluster_action_only(key))
    return fallback
