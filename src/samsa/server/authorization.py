"""The broker's side of authorization: the authorizer kept in step with the
metadata image, and the one question handlers ask of it.

``authorizer.class.name`` set to Kafka's StandardAuthorizer turns it on; with
nothing set, ``build_authorizer`` gives None and every check below is one
attribute read, so the single-node default pays nothing.  A request the node
makes of itself (the web console's, with no connection) is trusted, as
Kafka trusts its own in-process calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from samsa.errors import ConfigError
from samsa.security.authorizer.acl import AclOperation, ResourceType
from samsa.security.authorizer.standard import (
    AUTHORIZER_CLASS,
    StandardAuthorizer,
    parse_super_users,
)

if TYPE_CHECKING:
    from samsa.config import BrokerConfig
    from samsa.controller.metadata_delta import MetadataDelta
    from samsa.controller.metadata_image import MetadataImage
    from samsa.server.router import RequestContext

CLUSTER = ResourceType.CLUSTER
TOPIC = ResourceType.TOPIC
GROUP = ResourceType.GROUP
TRANSACTIONAL_ID = ResourceType.TRANSACTIONAL_ID
CLUSTER_NAME = "kafka-cluster"
_LEGACY_CLASS = "kafka.security.authorizer.AclAuthorizer"


def build_authorizer(config: BrokerConfig) -> StandardAuthorizer | None:
    name = str(config["authorizer.class.name"]).strip()
    if not name:
        return None
    if name not in (AUTHORIZER_CLASS, _LEGACY_CLASS):
        raise ConfigError(
            f"authorizer.class.name: {name!r} is not supported (use {AUTHORIZER_CLASS})"
        )
    return StandardAuthorizer(
        parse_super_users(str(config["super.users"])),
        allow_if_no_acl_found=bool(config["allow.everyone.if.no.acl.found"]),
    )


class AclPublisher:
    """Feeds the ACLs of each committed metadata batch to the authorizer."""

    def __init__(self, authorizer: StandardAuthorizer, image: MetadataImage) -> None:
        self.authorizer = authorizer
        authorizer.replace_all(image.acls)

    def on_delta(self, delta: MetadataDelta) -> None:
        for acl_id, acl in delta.changed_acls.items():
            if acl is None:
                self.authorizer.remove(acl_id)
            else:
                self.authorizer.add(acl_id, acl)

    def on_image(self, image: MetadataImage) -> None:
        self.authorizer.replace_all(image.acls)


def allowed(
    authorizer: StandardAuthorizer | None,
    ctx: RequestContext,
    operation: AclOperation,
    resource_type: ResourceType,
    name: str,
) -> bool:
    """May the caller of ``ctx`` perform ``operation`` on the resource?"""
    if authorizer is None:
        return True
    conn = ctx.connection
    if conn is None:
        return True
    return authorizer.authorize(str(conn.principal), conn.host, operation, resource_type, name)


def cluster_allowed(
    authorizer: StandardAuthorizer | None, ctx: RequestContext, operation: AclOperation
) -> bool:
    return allowed(authorizer, ctx, operation, CLUSTER, CLUSTER_NAME)
