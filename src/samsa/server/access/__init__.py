"""Every API checks what Kafka's KafkaApis checks, before its handler runs.

Each handler is wrapped, once, when the listener's router is built and only
when an authorizer is configured: with authorization off no wrapper exists and
the hot paths are exactly as before.  A wrapper asks the authorizer about the
resources the request names; denied parts are answered with Kafka's error
(TOPIC_/GROUP_/CLUSTER_/TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and only the
allowed rest reaches the handler, whose answer gets the denied parts merged
back in.  One module per family of APIs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samsa.server.access import admin, groups, inter_node, metadata, topics, transactions

if TYPE_CHECKING:
    from samsa.security.authorizer.standard import StandardAuthorizer
    from samsa.server.router import Router


def guard_all(router: Router, authorizer: StandardAuthorizer, broker: Any) -> None:
    """Wrap the handlers ``router`` has with their authorization checks
    (``broker`` gives the metadata image, to name topics given by id)."""
    for module in (topics, groups, transactions, admin, metadata, inter_node):
        module.guard(router, authorizer, broker)
