"""All the registry sees of the broker it runs in: one narrow Protocol.

``samsa.registry`` never imports the server package.  The broker hands the
registry an object with exactly these facts and services
(``server/endpoints/registry_port.py`` builds it): its settings, how a Kafka
client reaches the cluster as this node (the inter-broker listener and the
node's own login: the registry reads and writes ``_schemas`` and joins its
election group with Samsa's client on threads, so a ``_schemas`` partition led
by another node is reached like any other), the metadata image's answer about
a topic, creating an internal topic through the controller, and the ACL
authorizer's answer for a principal.
"""

from __future__ import annotations

from typing import Any, Protocol

from samsa.protocol.acl import AclOperation, ResourceType


class RegistryBroker(Protocol):
    @property
    def node_id(self) -> int: ...

    @property
    def authorizer_on(self) -> bool:
        """ACLs are enforced (``authorizer.class.name``)."""
        ...

    def setting(self, key: str) -> Any:
        """A broker setting (``samsa.config``'s keys, ``registry.*`` among them)."""
        ...

    def advertised_host(self) -> str:
        """The host clients are told for this broker (its first client listener)."""
        ...

    def kafka_client_config(self) -> dict[str, Any]:
        """``samsa.client`` settings that reach the cluster as this node: its
        inter-broker listener's advertised address, protocol, TLS and login."""
        ...

    def topic_partitions(self, topic: str) -> int | None:
        """How many partitions ``topic`` has in the metadata image (None: no such topic)."""
        ...

    def has_leader(self, topic: str, partition: int) -> bool:
        """The partition exists and has a leader in the metadata image."""
        ...

    def expects_peers(self) -> bool:
        """This node is one of several (not a single node that is its own quorum)."""
        ...

    def live_brokers(self) -> int:
        """Brokers registered and unfenced in the metadata image."""
        ...

    async def create_topic(
        self, name: str, partitions: int, replication_factor: int, configs: dict[str, str]
    ) -> None:
        """Create an internal topic through the controller (an existing one is fine)."""
        ...

    def authorizes(
        self,
        principal: str,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
    ) -> bool:
        """What the ACL authorizer answers (True when authorization is off)."""
        ...
