"""The broker as the web console sees it (``samsa.console.broker_port.ConsoleBroker``).

The console's Kafka requests run through a router of its own with the
handlers of the listener its users log in on (or the first client listener),
wrapped by the same authorization checks as every listener's when an
authorizer is on; each is made as the console's caller, so the checks judge
the logged-in user from the browser's address, never the node itself.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from samsa.protocol.acl import AclOperation, ResourceType
from samsa.replication.tiering.stats import PartitionTiers, partition_tiers
from samsa.security.caller import Caller
from samsa.server.access import guard_all
from samsa.server.connections.router import Router
from samsa.server.endpoints.console_registry import ConsoleRegistryPort
from samsa.server.handlers import register_all
from samsa.server.handlers.fetch import read_partitions

if TYPE_CHECKING:
    from samsa.controller.image.metadata_image import MetadataImage
    from samsa.replication.partition import Partition
    from samsa.server.broker_api import BrokerApi
    from samsa.server.metadata.broker_view import BrokerView
    from samsa.server.observability.metrics import BrokerMetrics

CLIENT_ID = "samsa-console"
Body = dict[str, Any]


class ConsolePort:
    def __init__(
        self,
        broker: BrokerApi,
        view: BrokerView,
        metrics: BrokerMetrics,
        listener_name: str,
    ) -> None:
        """``listener_name``: whose handlers serve the console's requests."""
        self._broker = broker
        self.state = view
        self.counters = metrics
        self._router = Router()
        register_all(self._router, broker, listener_name)
        self._authorizer = broker.authorizer
        if self._authorizer is not None:
            guard_all(self._router, self._authorizer, broker)
        self._registry: ConsoleRegistryPort | None = None

    @property
    def node_id(self) -> int:
        return self._broker.node_id

    @property
    def cluster_id(self) -> str:
        return self._broker.cluster_id

    @property
    def image(self) -> MetadataImage:
        return self._broker.image

    @property
    def authorizer_on(self) -> bool:
        return self._authorizer is not None

    def setting(self, key: str) -> Any:
        return self._broker.config[key]

    def quorum_leader(self) -> int | None:
        return self._broker.quorum_leader()

    def replica(self, topic: str, partition: int) -> Partition | None:
        return self._broker.replicas.get(topic, partition)

    def tiers(self, topic: str, partition: int) -> PartitionTiers | None:
        tiering = self._broker.replicas.tiering
        return None if tiering is None else partition_tiers(tiering, topic, partition)

    def read_records(self, fetch: Body) -> list[Body]:
        responses, _ = read_partitions(self._broker, fetch, update_fetch_state=False)
        return responses

    def call(
        self, api_key: int, version: int, body: Body, caller: Caller
    ) -> Body | Awaitable[Body | None] | None:
        return self._router.call(api_key, version, body, CLIENT_ID, caller=caller)

    def authorizes(
        self, caller: Caller, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> bool:
        authorizer = self._authorizer
        if authorizer is None:
            return True
        return authorizer.authorize(
            caller.principal_name, caller.host, operation, resource_type, name
        )

    def schema_registry(self) -> ConsoleRegistryPort | None:
        schema_ids = self._broker.schema_ids
        if not schema_ids.exists():
            return None
        if self._registry is None:
            self._registry = ConsoleRegistryPort(schema_ids, self._authorizer)
        return self._registry
