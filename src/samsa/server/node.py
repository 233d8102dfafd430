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
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import random
import time
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

from samsa.config import BrokerConfig
from samsa.config.listeners import Listener
from samsa.config.node_settings import NodeSettings
from samsa.config.synonyms import listener_ssl_setting
from samsa.controller.controller_config import ControllerConfig, delegation_token_secret
from samsa.controller.image.delegation_token_image import DelegationTokenImage
from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.legacy_migration import (
    legacy_metadata_exists,
    legacy_records,
    retire_legacy_metadata,
)
from samsa.errors import ConfigError, ErrorCode, KafkaError
from samsa.net import ChannelPool
from samsa.protocol.envelope import ENVELOPE_KEY
from samsa.protocol.metadata_records import encode_metadata_record
from samsa.protocol.sasl.scram import ScramCredential
from samsa.raft.config import QuorumConfig
from samsa.raft.driver import RaftDriver
from samsa.raft.machine import RaftMachine
from samsa.raft.persistence.disk_log import METADATA_LOG_CONFIG, DiskRaftLog
from samsa.raft.persistence.quorum_state_file import read_election_state
from samsa.raft.records import Endpoint
from samsa.raft.voters import VoterNode, VoterSet
from samsa.security.scram_spec import parse_scram_specs
from samsa.server.access import guard_all
from samsa.server.access.authorizer_setup import (
    AclPublisher,
    build_authorizer,
    warn_unless_super_user,
)
from samsa.server.connections.bind_failure import explain_bind_failure
from samsa.server.connections.connection_quotas import ConnectionQuotas
from samsa.server.connections.listener_routing import ListenerRouting
from samsa.server.connections.listener_security import (
    channel_security,
    secure_router,
    socket_server,
)
from samsa.server.connections.router import Router
from samsa.server.connections.socket_server import SocketServer
from samsa.server.connections.tls_connection import ListenerTls
from samsa.server.controller_server import CONTROLLER_APIS, ControllerServer
from samsa.server.endpoints.security_checks import check_http_settings
from samsa.server.handlers import quorum as quorum_handlers
from samsa.server.metadata import meta_properties
from samsa.server.metadata.controller_link import ControllerLink
from samsa.server.metadata.delegation_tokens import NodeTokens
from samsa.server.metadata.heap import collector_paused
from samsa.server.metadata.loader import MetadataLoader
from samsa.server.metadata.meta_properties import directory_uuid
from samsa.storage.log_dir_failure import LogDirFailureChannel

log = logging.getLogger("samsa.server")

START_WITHOUT_COLLECTOR_S = 60.0
"""The longest a start runs without the cyclic collector (see heap): loading
10,000 partitions takes seconds; waiting for a quorum may take hours."""


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


class Node:
    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.settings = NodeSettings.from_config(config)
        self.node_id = self.settings.node_id
        self.cluster_id = ""
        self.directory_id: uuid.UUID | None = None
        self._servers: dict[str, SocketServer] = {}
        self.routing = ListenerRouting()
        self.bound: dict[str, tuple[str, int]] = {}
        self.raft: RaftDriver | None = None
        self.raft_log: DiskRaftLog | None = None
        self.loader: MetadataLoader | None = None
        self.tls_listeners: dict[str, ListenerTls] = {}
        self.controller: ControllerServer | None = None
        self.broker: Any = None
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
        self._migrated_from: Path | None = None
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

    # ------------------------------------------------------------------ addresses
    def _current_setting(self, name: str) -> Any:
        """A setting as it is now: the broker's dynamic view once it runs."""
        if self.broker is not None:
            return self.broker.dynamic_config[name]
        return self.config[name]

    def advertised(self, listener: Listener) -> tuple[str, int]:
        for adv in self.settings.advertised:
            if adv.name == listener.name:
                return adv.host, adv.port
        host, port = self.bound[listener.name]
        if host in ("0.0.0.0", "::", ""):
            host = "127.0.0.1"
        return host, port

    def controller_listeners(self) -> list[Listener]:
        return [
            listener
            for listener in self.settings.listeners
            if self.settings.serves_controller(listener)
        ]

    def client_listeners(self) -> list[Listener]:
        return [
            listener
            for listener in self.settings.listeners
            if self.settings.serves_clients(listener)
        ]

    def serves_controller_on(self, listener_name: str) -> bool:
        """The quorum's RPCs (the metadata Fetch among them) are served here."""
        return any(
            listener.name == listener_name and self.settings.serves_controller(listener)
            for listener in self.settings.listeners
        )

    def controller_endpoints(self) -> tuple[Endpoint, ...]:
        return tuple(
            Endpoint(listener.name, *self.advertised(listener))
            for listener in self.controller_listeners()
        )

    @property
    def controller_listener_name(self) -> str:
        names = self.settings.controller_listener_names
        if names:
            return names[0]
        return self.settings.listeners[0].name

    def voter_nodes(self) -> list[dict[str, Any]]:
        """DescribeQuorum v2's ``nodes``: each voter's controller listeners."""
        assert self.raft is not None
        machine = self.raft.machine
        out = []
        for voter in machine.voter_set:
            endpoints = machine.endpoints(voter.node_id)
            out.append(
                {
                    "node_id": voter.node_id,
                    "listeners": [
                        {"name": e.listener, "host": e.host, "port": e.port} for e in endpoints
                    ],
                }
            )
        return out

    def reload_tls(self, dynamic_configs: dict[str, str]) -> None:
        """Give each TLS listener the keystore its dynamic ``listener.name.<l>.ssl.*``
        settings name; a keystore that does not load is logged and the old one kept."""
        overrides: dict[str, dict[str, str]] = {name: {} for name in self.tls_listeners}
        for name, value in dynamic_configs.items():
            setting = listener_ssl_setting(name)
            if setting is not None and setting[0] in overrides:
                overrides[setting[0]][setting[1]] = value
        for listener, tls in self.tls_listeners.items():
            try:
                if tls.reload(overrides[listener]):
                    log.info("listener %s: reloaded its SSL keystore", listener)
            except ConfigError as exc:
                log.error("listener %s: keeping the old SSL keystore: %s", listener, exc)

    def _tokens(self) -> DelegationTokenImage:
        """The delegation tokens this node has replayed (none before its log is open)."""
        return (
            DelegationTokenImage() if self.loader is None else self.loader.image.delegation_tokens
        )

    def _stored_scram_credential(self, user: str, mechanism: str) -> ScramCredential | None:
        """A SCRAM credential of the metadata log, as this node has replayed it."""
        return None if self.loader is None else self.loader.image.scram.get(user, mechanism)

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

        quotas = ConnectionQuotas(
            self._current_setting,
            {
                listener.name: int(config.for_listener(listener.name, "max.connections"))
                for listener in self.settings.listeners
                if config.is_explicit(f"listener.name.{listener.name.lower()}.max.connections")
            },
        )
        quotas.protected_listener = self.settings.inter_broker_listener_name
        servers = {
            listener.name: socket_server(
                config,
                listener,
                self.settings.protocol_of(listener.name),
                self.routing.dispatcher(listener.name),
                quotas=quotas,
                scram_credentials=self._stored_scram_credential,
                tls_listeners=self.tls_listeners,
                tokens=self.tokens.login,
            )
            for listener in self.settings.listeners
        }
        for listener in self.settings.listeners:
            server = servers[listener.name]
            where = (listener.host, listener.port)
            with explain_bind_failure(f"listener {listener.name}", *where):
                self.bound[listener.name] = await server.start(*where)
            log.info(
                "listener %s (%s) bound to %s:%d",
                listener.name,
                self.settings.protocol_of(listener.name).name,
                *self.bound[listener.name],
            )
            self._servers[listener.name] = server

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

    def _start_quorum(self, data_dir: Path) -> None:
        config = self.config
        settings = self.settings
        # A damaged snapshot is refetched from the other voters; a node alone
        # refuses to start instead of losing its metadata.
        others = len(settings.static_voters) > 1 or bool(settings.bootstrap_servers)
        raft_log = DiskRaftLog.open(
            data_dir,
            config=dataclasses.replace(
                METADATA_LOG_CONFIG, segment_bytes=config["metadata.log.segment.bytes"]
            ),
            refetch_lost_prefix=others,
        )
        raft_log.report_io_errors_to(
            partial(self.log_dir_failures.maybe_add_offline, str(data_dir))
        )
        self.raft_log = raft_log
        listener_name = self.controller_listener_name
        static = None
        if settings.static_voters:
            static = VoterSet(
                tuple(
                    VoterNode(v.node_id, None, (Endpoint(listener_name, v.host, v.port),))
                    for v in settings.static_voters
                )
            )
        quorum_config = QuorumConfig(
            election_timeout_ms=config["controller.quorum.election.timeout.ms"],
            fetch_timeout_ms=config["controller.quorum.fetch.timeout.ms"],
            election_backoff_max_ms=config["controller.quorum.election.backoff.max.ms"],
            request_timeout_ms=config["controller.quorum.request.timeout.ms"],
            retry_backoff_ms=config["controller.quorum.retry.backoff.ms"],
            static_voters=static,
            bootstrap_servers=tuple(f"{h}:{p}" for h, p in settings.bootstrap_servers),
        )
        endpoints = self.controller_endpoints() if settings.is_controller else ()
        bootstrap = None
        if settings.standalone:
            bootstrap = VoterSet((VoterNode(self.node_id, self.directory_id, endpoints),))
        election = read_election_state(raft_log.directory)
        machine = RaftMachine(
            node_id=self.node_id,
            config=quorum_config,
            log=raft_log,
            random_source=random.Random(),
            election_state=election,
            directory_id=self.directory_id,
            listeners=endpoints,
            bootstrap_voters=bootstrap,
        )
        loader = MetadataLoader(
            raft_log,
            snapshot_bytes=config["metadata.log.max.record.bytes.between.snapshots"],
            snapshot_interval_ms=config["metadata.log.max.snapshot.interval.ms"],
        )
        self.loader = loader
        if self.authorizer is not None:
            loader.add_publisher(AclPublisher(self.authorizer, loader.image))
        self.raft = RaftDriver(
            machine,
            raft_log,
            raft_log.directory,
            self._raft_transport,
            loader,
            cluster_id=self.cluster_id,
            listener_name=listener_name,
            bootstrap_servers=settings.bootstrap_servers,
        )
        raft = self.raft
        loader._create_snapshot = raft.create_snapshot
        if settings.is_controller:
            controller_config = ControllerConfig.from_properties(
                dict(config.items()),
                topic_defaults=config.topic_defaults(),
                static_broker_props=config.explicit_values(),
                cluster_id=self.cluster_id,
                scram_seeds=tuple(
                    (spec.name, spec.mechanism, spec.password, spec.iterations)
                    for spec in parse_scram_specs(
                        str(config["scram.bootstrap.credentials"]), "scram.bootstrap.credentials"
                    )
                ),
            )
            self.controller = ControllerServer(
                self.node_id,
                raft,
                loader,
                controller_config,
                voter_nodes=self.voter_nodes,
                authorizer=self.authorizer,
            )
            loader.add_publisher(self.controller)
        if (
            settings.standalone
            and legacy_metadata_exists(config.data_dir)
            and raft_log.end_offset == 0
        ):
            self._migrated_from = config.data_dir

    def _controller_link(self, raft: RaftDriver, channels: ChannelPool) -> ControllerLink:
        return ControllerLink(
            self.node_id,
            lambda: raft.leader_id,
            raft.wait_leader_change,
            channels,
            self._controller_address,
            self.controller,
            attempt_timeout_ms=int(self.config["controller.quorum.request.timeout.ms"]),
        )

    def _controller_address(self, node_id: int) -> tuple[str, int] | None:
        """Where ``node_id`` serves the controller APIs (its controller listener)."""
        assert self.raft is not None
        endpoints = self.raft.machine.endpoints(node_id)
        for endpoint in endpoints:
            if endpoint.listener == self.controller_listener_name:
                return endpoint.host, endpoint.port
        return (endpoints[0].host, endpoints[0].port) if endpoints else None

    async def _raft_transport(
        self,
        host: str,
        port: int,
        api_key: int,
        version: int,
        body: dict[str, Any],
        timeout_ms: int,
    ) -> dict[str, Any]:
        channel = self._raft_channels.to_address(host, port)
        return await channel.request(api_key, version, body, timeout_ms=timeout_ms)

    async def _migrate_legacy_metadata(self) -> None:
        """Append the old single-node metadata as this node's first data records."""
        assert self.raft is not None and self.loader is not None
        data_dir = self._migrated_from
        assert data_dir is not None
        records = legacy_records(data_dir, self.node_id)
        while not self.raft.machine.is_leader:
            await self.raft.wait_leader_change()
        if records:
            last = self.raft.append([encode_metadata_record(r) for r in records])
            await self.loader.wait_applied(last)
        retire_legacy_metadata(data_dir)

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
