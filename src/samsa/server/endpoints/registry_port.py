"""The broker as the schema registry sees it (``samsa.registry.node.broker_port.RegistryBroker``),
and the registry bound on ``registry.listen``.

The registry's Kafka client (reading and writing ``_schemas``, its election
group) reaches the cluster the way this node reaches the other brokers: its
inter-broker listener's advertised address, TLS settings and JAAS login
(``sasl.mechanism.inter.broker.protocol``).  With an authorizer that
principal must be a super user, as Kafka needs for replication anyway, or be
granted what the registry uses (the warning at start-up lists it).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from samsa.config.values import parse_host_port
from samsa.protocol.acl import AclOperation, ResourceType
from samsa.server.connections.bind_failure import explain_bind_failure
from samsa.server.endpoints.assembly import endpoint_security

if TYPE_CHECKING:
    from samsa.config.node_settings import NodeSettings
    from samsa.registry.node.server import RegistryServer
    from samsa.server.broker_api import BrokerApi

log = logging.getLogger("samsa.server")

CLIENT_SSL_KEYS = (
    "ssl.truststore.location",
    "ssl.truststore.certificates",
    "ssl.keystore.location",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.key.password",
    "ssl.enabled.protocols",
    "ssl.endpoint.identification.algorithm",
)


class RegistryPort:
    def __init__(self, broker: BrokerApi, settings: NodeSettings) -> None:
        self._broker = broker
        self._settings = settings

    @property
    def node_id(self) -> int:
        return self._broker.node_id

    @property
    def authorizer_on(self) -> bool:
        return self._broker.authorizer is not None

    def setting(self, key: str) -> Any:
        return self._broker.config[key]

    def advertised_host(self) -> str:
        return self._broker.advertised_endpoint()[0]

    def kafka_client_config(self) -> dict[str, Any]:
        config, settings = self._broker.config, self._settings
        listener = settings.inter_broker_listener_name
        host, port = self._broker.advertised_endpoint(listener)
        protocol = settings.protocol_of(listener)
        client: dict[str, Any] = {
            "bootstrap.servers": f"{host}:{port}",
            "security.protocol": protocol.name,
        }
        if protocol.uses_tls:
            for key in CLIENT_SSL_KEYS:
                value = config.for_listener(listener, key)
                if value:
                    client[key] = value
        if protocol.uses_sasl:
            mechanism = str(config["sasl.mechanism.inter.broker.protocol"]).strip().upper()
            client["sasl.mechanism"] = mechanism
            client["sasl.jaas.config"] = config.jaas_for(listener, mechanism)[0]
        return client

    def principal(self) -> str:
        """Whom the registry's client logs in as (for the start-up warning)."""
        client = self.kafka_client_config()
        jaas = client.get("sasl.jaas.config")
        if jaas:
            from samsa.config.jaas import parse_jaas

            return f"User:{parse_jaas(jaas).username}"
        return "User:ANONYMOUS" if "ssl.keystore.location" not in client else ""

    def topic_partitions(self, topic: str) -> int | None:
        found = self._broker.image.topics.get(topic)
        return None if found is None else len(found.partitions)

    def has_leader(self, topic: str, partition: int) -> bool:
        found = self._broker.image.topics.get(topic)
        registration = None if found is None else found.partitions.get(partition)
        return registration is not None and registration.leader >= 0

    def expects_peers(self) -> bool:
        return not self._settings.standalone

    def live_brokers(self) -> int:
        return len(self._broker.image.active_brokers())

    async def create_topic(
        self, name: str, partitions: int, replication_factor: int, configs: dict[str, str]
    ) -> None:
        await self._broker.create_internal_topic(name, partitions, replication_factor, configs)

    def authorizes(
        self,
        principal: str,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
    ) -> bool:
        authorizer = self._broker.authorizer
        if authorizer is None:
            return True
        return authorizer.authorize(principal, host, operation, resource_type, name)


async def bind_registry(broker: BrokerApi, settings: NodeSettings) -> RegistryServer | None:
    """The registry on ``registry.listen`` (None when unset), bound; it answers once
    ``begin`` (after the broker is ready) has replayed ``_schemas``."""
    address = str(broker.config["registry.listen"])
    if not address:
        return None
    from samsa.registry.node.server import RegistryServer

    port = RegistryPort(broker, settings)
    server = RegistryServer(port, endpoint_security(broker, settings, "registry", address))
    host, bind_port = parse_host_port(address)
    with explain_bind_failure("the schema registry (registry.listen)", host, bind_port):
        await server.bind(host, bind_port)
    _warn_unless_privileged(broker, port)
    return server


def _warn_unless_privileged(broker: BrokerApi, port: RegistryPort) -> None:
    authorizer = broker.authorizer
    principal = port.principal()
    if authorizer is None or not principal or principal in authorizer.super_users:
        return
    group = str(broker.config["registry.group.id"])
    log.warning(
        "schema registry: it reads and writes %s as %s (the inter-broker listener's login), "
        "which is not in super.users: grant it READ, WRITE and DESCRIBE on TOPIC %s, WRITE on "
        "TRANSACTIONAL_ID %s-primary and READ on GROUP %s, or make it a super user",
        broker.config["registry.topic"],
        principal,
        broker.config["registry.topic"],
        group,
        group,
    )
