"""The schema registry as the console sees it (``samsa.console.schemas.registry_port.ConsoleRegistry``).

Answered from this broker's copy of the registry's state (``schema_ids``: the
registry's own on a node serving it, else a mirror of ``_schemas`` started by
the first question), as the console's caller: the authorizer's answers for
that user and host feed the registry's ACL mapping.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from samsa.protocol.acl import AclOperation, ResourceType
from samsa.security.caller import Caller

if TYPE_CHECKING:
    from samsa.registry.node.access import Allowed
    from samsa.registry.node.reads import RegistryReads
    from samsa.security.authorizer.standard import StandardAuthorizer
    from samsa.server.schema_ids import NodeSchemaIds

STARTING = (
    503,
    {"error_code": 50302, "message": "this broker is still reading the schema registry"},
)


class ConsoleRegistryPort:
    def __init__(self, schema_ids: NodeSchemaIds, authorizer: StandardAuthorizer | None) -> None:
        self._schema_ids = schema_ids
        self._authorizer = authorizer
        self._reads: RegistryReads | None = None

    def get(
        self, caller: Caller, path: str, query: Mapping[str, str] | None = None
    ) -> tuple[int, Any]:
        reads = self._ready()
        if reads is None:
            return STARTING
        return reads.get(path, query, self._allowed(caller))

    def decode(self, caller: Caller, data: bytes | None) -> dict[str, Any] | None:
        reads = self._ready()
        if reads is None or data is None:
            return None
        return reads.decode(data, self._allowed(caller))

    def _ready(self) -> RegistryReads | None:
        mirror = self._schema_ids.mirror()  # started by the first question
        if not mirror.ready:
            return None
        if self._reads is None or self._reads.state is not mirror.state:
            from samsa.registry.node.reads import RegistryReads

            self._reads = RegistryReads(mirror.state)
        return self._reads

    def _allowed(self, caller: Caller) -> Allowed | None:
        authorizer = self._authorizer
        if authorizer is None:
            return None
        name, host = caller.principal_name, caller.host

        def allowed(operation: AclOperation, resource_type: ResourceType, resource: str) -> bool:
            return authorizer.authorize(name, host, operation, resource_type, resource)

        return allowed
