"""The node's authorizer: built from its settings, kept in step with the image.

``authorizer.class.name`` set to Kafka's StandardAuthorizer turns it on; with
nothing set, ``build_authorizer`` gives None and no handler is wrapped with a
check (``samsa.server.access``), so the single-node default pays nothing.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from samsa.errors import ConfigError
from samsa.security.authorizer.standard import (
    AUTHORIZER_CLASS,
    StandardAuthorizer,
    parse_super_users,
)

if TYPE_CHECKING:
    from samsa.config.broker_config import BrokerConfig
    from samsa.controller.image.metadata_delta import MetadataDelta
    from samsa.controller.image.metadata_image import MetadataImage
    from samsa.net.channel import ChannelSecurity

log = logging.getLogger("samsa.server")

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


def warn_unless_super_user(
    authorizer: StandardAuthorizer | None, security: ChannelSecurity | None, listener: str
) -> None:
    """Nodes call each other's CLUSTER_ACTION APIs (Raft, registration,
    heartbeats, follower fetches): as in Kafka, the principal they log in as
    must be a super user, or the cluster cannot form.  A TLS principal is the
    certificate's subject, known only once connected, so it is not checked."""
    if authorizer is None:
        return
    if security is None:
        principal = "User:ANONYMOUS"
    elif security.username:
        principal = f"User:{security.username}"
    else:
        return
    if principal not in authorizer.super_users:
        log.warning(
            "authorizer: nodes reach listener %s as %s, which is not in super.users; "
            "their requests to each other will be refused",
            listener,
            principal,
        )
