"""The node's authorizer: built from its settings, kept in step with the image.

``authorizer.class.name`` set to Kafka's StandardAuthorizer turns it on; with
nothing set, ``build_authorizer`` gives None and no handler is wrapped with a
check (``samsa.server.access``), so the single-node default pays nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from samsa.errors import ConfigError
from samsa.security.authorizer.standard import (
    AUTHORIZER_CLASS,
    StandardAuthorizer,
    parse_super_users,
)

if TYPE_CHECKING:
    from samsa.config import BrokerConfig
    from samsa.controller.metadata_delta import MetadataDelta
    from samsa.controller.metadata_image import MetadataImage

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
