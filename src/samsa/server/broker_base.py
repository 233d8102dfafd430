"""The state every part of the Broker shares, and what handlers see of it.

Split from ``broker.py`` so each file holds one concern (as the
ReplicaManager is): this base holds the broker's parts and the views and
services of ``BrokerApi`` (the metadata image, who leads what, topic configs,
forwarding to the controller, the coordinators started on first use);
``broker_metadata`` adds following the committed metadata, ``broker_background``
the periodic work, and ``broker.py`` start-up and stop.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode
from samsa.net import ChannelPool
from samsa.security.authorizer.standard import StandardAuthorizer
from samsa.security.quotas import ClientQuotaManager, WindowConfig
from samsa.server.cleaner_task import CleanerTask
from samsa.server.connections.client_throttling import ClientThrottling
from samsa.server.coordinators.coordinator_start import CoordinatorStarter
from samsa.server.coordinators.producer_id_blocks import ProducerIdBlocks
from samsa.server.fetch_sessions.cache import FetchSessionCache
from samsa.server.metadata.applier import SerialMetadataApplier
from samsa.server.metadata.broker_lifecycle import BrokerLifecycle
from samsa.server.metadata.directory_assigner import DirectoryAssigner
from samsa.server.metadata.dynamic_broker_config import DynamicBrokerConfig
from samsa.server.metadata.forwarding import ControllerForwarding
from samsa.server.metadata.meta_properties import MetaProperties
from samsa.server.observability.metrics import BrokerMetrics
from samsa.server.schema_ids import NodeSchemaIds
from samsa.storage.log_dirs import LogDirs

if TYPE_CHECKING:
    from samsa.config.security_protocols import SecurityProtocol
    from samsa.controller.image.metadata_image import MetadataImage
    from samsa.http.endpoint import HttpEndpoint
    from samsa.protocol.envelope import RequestOrigin
    from samsa.raft.driver import RaftDriver
    from samsa.registry.node.server import RegistryServer
    from samsa.replication.replica_manager import ReplicaManager
    from samsa.replication.tiering.remote_log_manager import RemoteLogManager
    from samsa.server.broker_api import NodeApi
    from samsa.server.metadata.controller_link import ControllerLink
    from samsa.server.metadata.loader import MetadataLoader
    from samsa.server.metadata.log_dir_failure_handler import LogDirFailureHandler


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


class BrokerBase:
    """A broker's parts (see the module doc); ``Broker.start`` opens the rest."""

    log_manager: LogDirs
    replicas: ReplicaManager
    log_dir_failures: LogDirFailureHandler
    directory_ids: dict[str, bytes]
    """Each log dir's ``directory.id``; these four are set by ``Broker.start``."""

    def __init__(self, node: NodeApi, meta: MetaProperties) -> None:
        self.node = node
        self.config = node.config
        self.node_id = node.node_id
        # Settings that may change at runtime are read from here, not ``config``.
        self.dynamic_config = DynamicBrokerConfig(self.config, self.node_id, lambda: self.image)
        self.cluster_id = meta.cluster_id
        self.directory_id = meta.directory_id
        assert node.loader is not None and node.link is not None
        self.loader: MetadataLoader = node.loader
        self.controller: ControllerLink = node.link
        self.forwarding = ControllerForwarding(
            node.link, int(self.config["controller.quorum.request.timeout.ms"]), lambda: self.image
        )
        self.authorizer: StandardAuthorizer | None = node.authorizer
        self.tokens = node.tokens
        self._tasks: list[asyncio.Task[Any]] = []
        self.groups: Any = None
        self._groups_start = CoordinatorStarter("group coordinator", self._start_groups)
        self.transactions: Any = None
        # Markers and KIP-890 verifications to other brokers' coordinators/leaders.
        self.txn_channels = ChannelPool(client_id=f"samsa-txn-{self.node_id}")
        self._transactions_start = CoordinatorStarter(
            "transaction coordinator", self._start_transactions
        )
        self.cleaner_task: CleanerTask | None = None
        self.directory_assigner: DirectoryAssigner | None = None
        self.fetch_sessions = FetchSessionCache(
            self.config["max.incremental.fetch.session.cache.slots"]
        )
        self.share_partitions: Any = None
        """The share partitions this broker leads (``samsa.share``), made by the handlers."""
        self.metrics: BrokerMetrics | None = None
        self.tiering: RemoteLogManager | None = None
        """Tiered storage (``server/tiered_storage.py``); None unless
        remote.log.storage.system.enable."""
        self._http_endpoints: list[HttpEndpoint] = []
        self.registry: RegistryServer | None = None
        """The schema registry on ``registry.listen`` (``samsa.registry.node``)."""
        self.schema_ids = NodeSchemaIds(self)
        """The registry's state on this broker, for validation on produce and the console."""
        self._reconciled = False
        self._listed_unfenced = asyncio.Event()
        """Set once this node's image shows its own registration unfenced: a client
        answered before that would get Metadata without this broker in it."""
        self.metadata_applier = SerialMetadataApplier()
        self.lifecycle: BrokerLifecycle | None = None
        self._loading: asyncio.Future[LogDirs] | None = None
        self._opened = False
        """``start`` got as far as the logs and the replicas."""
        self.producer_ids = ProducerIdBlocks(
            self.node_id,
            lambda: self.lifecycle.broker_epoch if self.lifecycle is not None else -1,
            self.forward,
        )
        self.client_quotas = ClientQuotaManager(
            WindowConfig(
                self.config["quota.window.num"], self.config["quota.window.size.seconds"] * 1000
            )
        )
        self.throttling = ClientThrottling(self.client_quotas)
        if self.config["metrics.listen"] or self.config["console.listen"]:
            # Counting starts before the first client can connect.
            self.metrics = BrokerMetrics()

    # ------------------------------------------------------------------ views
    @property
    def image(self) -> MetadataImage:
        return self.loader.image

    def advertised_endpoint(self, listener_name: str | None = None) -> tuple[str, int]:
        """Where clients reach this broker on ``listener_name`` (default: the first)."""
        listeners = self.node.client_listeners()
        for listener in listeners:
            if listener_name is None or listener.name == listener_name:
                return self.node.advertised(listener)
        return self.node.advertised(listeners[0])

    @property
    def advertised_host(self) -> str:
        return self.advertised_endpoint()[0]

    @property
    def advertised_port(self) -> int:
        return self.advertised_endpoint()[1]

    def topic_config(self, topic: str) -> dict[str, str]:
        """Every config of a topic: its overrides over this broker's current defaults."""
        merged = self.dynamic_config.topic_defaults()
        merged.update(self.image.topic_configs(topic))
        return merged

    def raft_on(self, listener_name: str) -> RaftDriver | None:
        return self.node.raft if self.node.serves_controller_on(listener_name) else None

    def quorum_leader(self) -> int | None:
        raft = self.node.raft
        return None if raft is None else raft.leader_id

    def leads(self, topic: str, partition: int) -> bool:
        """This broker is the partition's leader in the metadata image."""
        topic_image = self.image.topics.get(topic)
        if topic_image is None:
            return False
        registration = topic_image.partitions.get(partition)
        return registration is not None and registration.leader == self.node_id

    @property
    def inter_broker_listener(self) -> str:
        return self.node.settings.inter_broker_listener_name

    def track(self, task: asyncio.Task[Any]) -> None:
        """Keep a background task until it ends (and cancel it on stop)."""
        self._tasks.append(task)
        task.add_done_callback(lambda t: self._tasks.remove(t) if t in self._tasks else None)

    # ------------------------------------------------------------------ forwarding
    async def forward(
        self,
        api_key: int,
        version: int,
        body: dict[str, Any],
        *,
        origin: RequestOrigin | None = None,
    ) -> dict[str, Any]:
        """Send a request to the active controller (see metadata/forwarding.py);
        ``origin``: the client the controller judges it as (an Envelope's)."""
        return await self.forwarding.forward(api_key, version, body, origin=origin)

    def security_protocol(self, listener_name: str) -> SecurityProtocol:
        return self.node.settings.protocol_of(listener_name)

    async def create_internal_topic(
        self, name: str, partitions: int, replication_factor: int, configs: dict[str, str]
    ) -> None:
        await self.forwarding.create_internal_topic(name, partitions, replication_factor, configs)

    # ------------------------------------------------------------------ coordinators
    def ensure_group_coordinator(self) -> ErrorCode | None:
        """Create ``__consumer_offsets`` on first use and load the coordinator;
        COORDINATOR_LOAD_IN_PROGRESS meanwhile, None when ready."""
        return self._groups_start.ensure()

    def ensure_transaction_coordinator(self) -> ErrorCode | None:
        """Create ``__transaction_state`` on first use and load the coordinator;
        COORDINATOR_LOAD_IN_PROGRESS meanwhile, None when ready."""
        return self._transactions_start.ensure()

    async def _start_groups(self) -> None:
        from samsa.server.coordinators.group_wiring import start_group_coordinator

        await start_group_coordinator(self)

    async def _start_transactions(self) -> None:
        from samsa.server.coordinators.txn_wiring import start_transaction_coordinator

        await start_transaction_coordinator(self)

    def groups_coordinator_node(self, group_id: str) -> int | None:
        """The broker leading the group's ``__consumer_offsets`` partition."""
        return self._coordinator_node("__consumer_offsets", group_id)

    def transaction_coordinator_node(self, transactional_id: str) -> int | None:
        """The broker leading the id's ``__transaction_state`` partition."""
        from samsa.server.coordinators.txn_wiring import TRANSACTION_TOPIC

        return self._coordinator_node(TRANSACTION_TOPIC, transactional_id)

    def _coordinator_node(self, topic_name: str, key: str) -> int | None:
        """The leader of the partition of ``topic_name`` that ``key`` maps to."""
        from samsa.coordinator.partitioning import partition_for

        topic = self.image.topics.get(topic_name)
        if topic is None or not topic.partitions:
            return None
        registration = topic.partitions.get(partition_for(key, len(topic.partitions)))
        if registration is None or registration.leader < 0:
            return None
        return registration.leader
