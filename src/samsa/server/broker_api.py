"""What request handlers and the broker's helpers may use of the broker.

Handlers, the group wiring, the producer-id blocks and the read-only view for
metrics and the console all need a few facts and services of the broker role
(the metadata image, the partitions, forwarding to the controller, the group
coordinator).  They depend on this Protocol, not on ``broker.py``, so imports
run one way (the broker wires them in; they never import it) and each of them
shows in its signature how little of the broker it needs.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from samsa.config.broker_config import BrokerConfig
    from samsa.config.listeners import Listener
    from samsa.config.node_settings import NodeSettings
    from samsa.config.security_protocols import SecurityProtocol
    from samsa.controller.image.metadata_image import MetadataImage
    from samsa.errors import ErrorCode
    from samsa.net import ChannelPool
    from samsa.protocol.envelope import RequestOrigin
    from samsa.raft.driver import RaftDriver
    from samsa.replication.replica_manager import ReplicaManager
    from samsa.security.authorizer.standard import StandardAuthorizer
    from samsa.security.quotas import ClientQuotaManager
    from samsa.server.cleaner_task import CleanerTask
    from samsa.server.coordinators.producer_id_blocks import ProducerIdBlocks
    from samsa.server.fetch_sessions.cache import FetchSessionCache
    from samsa.server.metadata.broker_lifecycle import BrokerLifecycle
    from samsa.server.metadata.controller_link import ControllerLink
    from samsa.server.metadata.delegation_tokens import NodeTokens
    from samsa.server.metadata.dynamic_broker_config import DynamicBrokerConfig
    from samsa.server.metadata.loader import MetadataLoader
    from samsa.server.metadata.log_dir_failure_handler import LogDirFailureHandler
    from samsa.server.observability.metrics import BrokerMetrics
    from samsa.server.schema_ids import NodeSchemaIds
    from samsa.storage.log_dir_failure import LogDirFailureChannel


class BrokerApi(Protocol):
    node_id: int
    cluster_id: str
    config: BrokerConfig
    dynamic_config: DynamicBrokerConfig
    replicas: ReplicaManager
    metrics: BrokerMetrics | None
    groups: Any
    transactions: Any
    txn_channels: ChannelPool
    loader: MetadataLoader
    producer_ids: ProducerIdBlocks
    lifecycle: BrokerLifecycle | None
    cleaner_task: CleanerTask | None
    fetch_sessions: FetchSessionCache
    log_dir_failures: LogDirFailureHandler
    share_partitions: Any
    authorizer: StandardAuthorizer | None
    client_quotas: ClientQuotaManager
    schema_ids: NodeSchemaIds
    tokens: NodeTokens

    @property
    def image(self) -> MetadataImage: ...

    def security_protocol(self, listener_name: str) -> SecurityProtocol: ...

    def leads(self, topic: str, partition: int) -> bool: ...

    def topic_config(self, topic: str) -> dict[str, str]: ...

    def advertised_endpoint(self, listener_name: str | None = None) -> tuple[str, int]: ...

    def raft_on(self, listener_name: str) -> RaftDriver | None:
        """The Raft driver when ``listener_name`` also serves the quorum."""
        ...

    def quorum_leader(self) -> int | None: ...

    async def forward(
        self,
        api_key: int,
        version: int,
        body: dict[str, Any],
        *,
        origin: RequestOrigin | None = None,
    ) -> dict[str, Any]:
        """To the active controller; ``origin``: the client it judges the request as."""
        ...

    async def create_internal_topic(
        self, name: str, partitions: int, replication_factor: int, configs: dict[str, str]
    ) -> None: ...

    def ensure_group_coordinator(self) -> ErrorCode | None: ...

    def groups_coordinator_node(self, group_id: str) -> int | None: ...

    def ensure_transaction_coordinator(self) -> ErrorCode | None: ...

    def transaction_coordinator_node(self, transactional_id: str) -> int | None: ...

    @property
    def inter_broker_listener(self) -> str: ...

    def track(self, task: asyncio.Task[Any]) -> None: ...


class NodeApi(Protocol):
    """What the broker role uses of the node it runs in (the node builds it)."""

    node_id: int
    config: BrokerConfig
    settings: NodeSettings
    directory_id: uuid.UUID | None
    raft: RaftDriver | None
    loader: MetadataLoader | None
    link: ControllerLink | None
    heartbeat_link: ControllerLink | None
    log_dir_failures: LogDirFailureChannel
    authorizer: StandardAuthorizer | None
    tokens: NodeTokens

    def advertised(self, listener: Listener) -> tuple[str, int]: ...

    def request_stop(self, reason: str, exit_code: int) -> None: ...

    def client_listeners(self) -> list[Listener]: ...

    def serves_controller_on(self, listener_name: str) -> bool: ...

    def reload_tls(self, dynamic_configs: dict[str, str]) -> None: ...
