"""One Samsa process: its listeners, its place in the metadata quorum, its roles.

Start-up order matters for safety:

1. ``meta.properties``: the data dir's node id and cluster id must match the
   configuration, or the node refuses to start (a misplaced data dir must not
   join the wrong cluster or speak for another node).
2. The listeners are bound (their real ports are needed to tell the quorum
   where this node listens); a request that arrives before the node can
   answer it waits for that, bounded (``listener_routing``).
3. The metadata log (``__cluster_metadata-0``) is recovered and the Raft
   machine starts from its stored election state; the metadata loader builds
   the image only from committed records.
4. The controller (when ``process.roles`` has it) and the broker (when it has
   that) attach to the loader; the broker registers with the active controller,
   catches up with the metadata and is unfenced, and only then is the node
   ready (its client listeners have been answering Metadata from a complete
   image since).

The single-node default is ``process.roles=broker,controller`` with neither
voters nor bootstrap servers: a quorum of one whose voter set is this node,
served on the one listener; Raft then elects itself at once and commits each
write as soon as it is flushed, with no network traffic at all.

The ``Node`` is assembled from one part per concern, each in its own module:

* node_listeners: binding the listeners, and where each is reached;
* node_quorum: Raft, the metadata loader, the controller, and the links to
  the active controller;
* this module: the start-up order above, each listener's router, and stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator

from samsa.config.broker_config import BrokerConfig
from samsa.config.listeners import Listener
from samsa.config.node_settings import NodeSettings
from samsa.controller.controller_config import delegation_token_secret
from samsa.controller.image.metadata_image import MetadataImage
from samsa.errors import ConfigError, ErrorCode, KafkaError
from samsa.net import ChannelPool
from samsa.protocol.envelope import ENVELOPE_KEY
from samsa.server.access import guard_all
from samsa.server.access.authorizer_setup import build_authorizer, warn_unless_super_user
from samsa.server.connections.listener_routing import ListenerRouting
from samsa.server.connections.listener_security import channel_security, secure_router
from samsa.server.connections.router import Router
from samsa.server.controller_server import CONTROLLER_APIS
from samsa.server.endpoints.security_checks import check_http_settings
from samsa.server.handlers import quorum as quorum_handlers
from samsa.server.metadata import meta_properties
from samsa.server.metadata.controller_link import ControllerLink
from samsa.server.metadata.delegation_tokens import NodeTokens
from samsa.server.metadata.heap import collector_paused
from samsa.server.metadata.meta_properties import directory_uuid
from samsa.server.node_quorum import NodeQuorum
from samsa.storage.log_dir_failure import LogDirFailureChannel

log = logging.getLogger("samsa.server")

START_WITHOUT_COLLECTOR_S = 60.0
"""The longest a start runs without the cyclic collector (see heap): loading
10,000 partitions takes seconds; waiting for a quorum may take hours."""


class Node(NodeQuorum):
    """One Samsa process (see the module doc for its start-up order and parts)."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.settings = NodeSettings.from_config(config)
        self.node_id = self.settings.node_id
        self.cluster_id = ""
        self.directory_id = None
        self._servers = {}
        self.routing = ListenerRouting()
        self.bound = {}
        self.raft = None
        self.raft_log = None
        self.loader = None
        self.tls_listeners = {}
        self.controller = None
        self.broker = None
        self.link: ControllerLink | None = None
        self.heartbeat_link: ControllerLink | None = None
        """The broker lifecycle's own way to the controller (see ``_heartbeat_channels``)."""
        self.authorizer = build_authorizer(config)
        """The ACL decisions (None: authorization off), shared by the broker's
        and the controller's listeners and fed by the metadata image."""
        self.tokens = NodeTokens(delegation_token_secret(dict(config.items())), self._tokens)
        """Delegation tokens: SCRAM logins by token on every SASL listener."""
        if self.settings.is_broker:
            check_http_settings(config, self.settings, self.authorizer is not None)
        controller_listener = self.controller_listener_name
        to_controllers = channel_security(
            config,
            controller_listener,
            self.settings.protocol_of(controller_listener),
            "sasl.mechanism.controller.protocol",
            standalone=self.settings.standalone,
        )
        if not self.settings.standalone:
            warn_unless_super_user(self.authorizer, to_controllers, controller_listener)
        self._controller_channels = ChannelPool(
            client_id=f"samsa-node-{self.node_id}", security=to_controllers
        )
        self._heartbeat_channels = ChannelPool(
            client_id=f"samsa-heartbeat-{self.node_id}", security=to_controllers
        )
        """Registrations and heartbeats on connections of their own, as Kafka's
        BrokerLifecycleManager has its own channel: a controller answers one
        request per connection at a time, and a heartbeat sent behind an
        AlterPartition of thousands of partitions (seconds behind a commit)
        was not even read before the session expired."""
        self._raft_channels = ChannelPool(
            client_id=f"samsa-raft-{self.node_id}", security=to_controllers
        )
        self._migrated_from = None
        self._migration: asyncio.Task[None] | None = None
        self.log_dir_failures = LogDirFailureChannel()
        """Failed log dirs of this node: its partitions' and the metadata log's."""
        self.log_dir_failures.add_listener(self._on_log_dir_offline)
        self._loop: asyncio.AbstractEventLoop | None = None
        self.stop_requested = asyncio.Event()
        """Set when the node itself must stop (every log dir failed); the CLI then
        stops it as on SIGTERM and exits with ``exit_code``."""
        self.exit_code = 0

    @property
    def image(self) -> MetadataImage:
        """The committed metadata (what the authorization checks name topics by)."""
        assert self.loader is not None
        return self.loader.image

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        # Without collector passes over the partitions being built (see heap);
        # the broker's wait_ready collects once before serving.
        with collector_paused(asyncio.get_running_loop(), START_WITHOUT_COLLECTOR_S):
            await self._start()

    async def _start(self) -> None:
        self._loop = asyncio.get_running_loop()
        config = self.config
        data_dir = config.metadata_log_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        if (
            not self.settings.standalone
            and not config["cluster.id"]
            and not (data_dir / meta_properties.FILE_NAME).exists()
        ):
            raise ConfigError(
                "a new node of a multi-node cluster needs cluster.id (the same on every "
                "node; `samsa cluster status` shows an existing cluster's id)"
            )
        meta = meta_properties.load_or_create(data_dir, self.node_id, config["cluster.id"])
        self.cluster_id = meta.cluster_id
        self.directory_id = directory_uuid(meta.directory_id)

        await self._bind_listeners()

        self._start_quorum(data_dir)
        assert self.raft is not None and self.loader is not None and self.raft_log is not None
        raft = self.raft
        self.link = self._controller_link(raft, self._controller_channels)
        self.heartbeat_link = self._controller_link(raft, self._heartbeat_channels)
        if self.settings.is_broker:
            from samsa.server.broker import Broker

            self.broker = Broker(self, meta)

        # The quorum is served at once (peers need it to elect and replicate);
        # client APIs only once the broker has caught up and is unfenced, as
        # Kafka's brokers do, so no client sees a half-loaded image (a client's
        # requests wait for that, see listener_routing).
        for listener in self.settings.listeners:
            self.routing.install(
                listener.name,
                self._build_router(listener, with_clients=False),
                complete=not self.settings.serves_clients(listener),
            )
        # Raft runs before the broker opens its logs, as Kafka's broker catches
        # up with the metadata while its LogManager loads: the snapshot, the
        # tail and the registration's round trips to the controller overlap
        # with opening 10,000 logs rather than following it.
        raft.start()
        if self._migrated_from is not None:
            self._migration = asyncio.ensure_future(self._migrate_legacy_metadata())
        if self.broker is not None:
            await self.broker.start()
            await self.broker.wait_ready()
            for listener in self.settings.listeners:
                if self.settings.serves_clients(listener):
                    router = self._build_router(listener, with_clients=True)
                    self.routing.install(listener.name, router, complete=True)

    # ------------------------------------------------------------------ requests
    def _build_router(self, listener: Listener, *, with_clients: bool) -> Router:
        settings = self.settings
        router = secure_router(Router())
        raft = self.raft
        assert raft is not None
        serves_clients = settings.serves_clients(listener)
        router.client_facing = serves_clients
        router.identity = (self.cluster_id, self.node_id)
        if settings.serves_controller(listener) and settings.is_controller:
            quorum_handlers.register(router, raft, self, fetch=not serves_clients)
            controller = self.controller
            assert controller is not None
            for api_key in sorted(CONTROLLER_APIS):
                router.register(
                    api_key,
                    lambda ctx, req, key=api_key: controller.handle(key, ctx.version, req),  # type: ignore[misc]
                )
            router.register(ENVELOPE_KEY, lambda ctx, req: controller.handle_envelope(req))
        elif settings.serves_controller(listener):
            # A broker-only node on a shared listener still lets peers fetch.
            quorum_handlers.register(router, raft, self, fetch=not serves_clients)
        if serves_clients and with_clients and self.broker is not None:
            self.broker.register_handlers(router, listener)
        elif serves_clients and settings.serves_controller(listener):
            name = listener.name
            quorum_handlers.register_starting_fetch(
                router, raft, lambda: self.routing.wait_complete(name)
            )
        if self.authorizer is not None:
            guard_all(router, self.authorizer, self)
        return router

    def _on_log_dir_offline(self, log_dir: str, reason: str) -> None:
        """Any thread.  A failed metadata log dir stops the node, whatever its
        roles, as Kafka's does: nothing here works without the metadata log.
        A broker's other dirs are its own business (log_dir_failure_handler)."""
        if log_dir != str(self.config.metadata_log_dir):
            return
        if self.raft_log is not None:
            self.raft_log.mark_offline(reason)
        if self._loop is not None:
            why = f"the metadata log dir {log_dir} failed: {reason}"
            self._loop.call_soon_threadsafe(self.request_stop, why, 1)

    def request_stop(self, reason: str, exit_code: int) -> None:
        log.error("node %d must stop: %s", self.node_id, reason)
        self.exit_code = exit_code
        self.stop_requested.set()

    async def stop(self) -> None:
        """Controlled shutdown first (leaderships move away while the quorum is
        up), then listeners, controller, Raft (a leader hands over), the broker's
        logs; each step logged, so a slow stop shows where it waits."""
        log.info("node %d stopping", self.node_id)
        if self.broker is not None:
            with contextlib.suppress(Exception):
                await self.broker.controlled_shutdown()
        log.debug("node %d: closing listeners", self.node_id)
        for server in self._servers.values():
            await server.stop()
        if self.controller is not None:
            log.debug("node %d: stopping the controller", self.node_id)
            await self.controller.stop()
        if self.raft is not None:
            log.debug("node %d: stopping Raft", self.node_id)
            with self._failed_dir_tolerated("stopping Raft"):
                await self.raft.stop()
            if self.loader is not None:
                self.loader.stop_stepping()
            if self.loader is not None and not self.log_dir_failures.offline_dirs():
                with self._failed_dir_tolerated("writing a metadata snapshot"):
                    self.loader.snapshot_at_stop()
        if self.broker is not None:
            log.debug("node %d: stopping the broker", self.node_id)
            await self.broker.stop()
        await self._controller_channels.close()
        await self._heartbeat_channels.close()
        await self._raft_channels.close()
        if self.raft_log is not None:
            self.raft_log.close()
        if self.log_dir_failures.offline_dirs():
            log.info("node %d stopped; its failed log dir recovers at the next start", self.node_id)
        else:
            log.info("node %d stopped cleanly", self.node_id)

    @contextlib.contextmanager
    def _failed_dir_tolerated(self, what: str) -> Iterator[None]:
        """A step of the stop that writes (Raft resigning appends a record) fails
        on a failed dir: expected then, and the stop goes on."""
        try:
            yield
        except KafkaError as exc:
            if (
                exc.code != ErrorCode.KAFKA_STORAGE_ERROR
                or not self.log_dir_failures.offline_dirs()
            ):
                raise
            log.warning("node %d: %s failed on the failed log dir: %s", self.node_id, what, exc)

    def check_ready_config(self) -> None:
        if not self.settings.listeners:
            raise ConfigError("no listeners")
