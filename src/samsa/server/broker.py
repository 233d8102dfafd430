"""The broker role of a node: partitions, groups and client requests.

What the broker hosts follows the metadata image, never the other way round:
the logs of a partition are created when a committed record makes this node
one of its replicas, and deleted when the topic is deleted or the replica
moved away.  Logs on disk that the image does not know (a topic deleted while
this node was down) are removed once the broker has caught up with the
metadata (at its first unfencing); before that, an incomplete image must not
delete anything.

Changes to metadata (topics, partitions, configs, producer-id blocks) are not
made here: they are forwarded to the active controller (``ControllerLink``),
whose committed records then come back through the loader like any other.

Shutdown: a controlled shutdown first (the controller moves this broker's
leaderships away, as Kafka's does on SIGTERM), then the listeners close,
data and producer state are flushed, and a clean-shutdown marker is written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from samsa.config.listeners import Listener
from samsa.controller.image.metadata_delta import LocalReplicaChanges, MetadataDelta
from samsa.controller.image.metadata_image import MetadataImage
from samsa.errors import ErrorCode, KafkaError
from samsa.eventloop.cancellation import cancel_and_wait
from samsa.eventloop.failure_log import FailureLog
from samsa.eventloop.switch_interval import switch_interval
from samsa.net import ChannelPool
from samsa.replication.config import ReplicationConfig
from samsa.replication.replica_manager import ReplicaManager
from samsa.security.authorizer.standard import StandardAuthorizer
from samsa.security.quotas import ClientQuotaManager, WindowConfig
from samsa.server.cleaner_task import CleanerTask
from samsa.server.connections.client_throttling import ClientThrottling
from samsa.server.connections.listener_security import channel_security
from samsa.server.connections.router import Router
from samsa.server.coordinators.coordinator_start import CoordinatorStarter
from samsa.server.coordinators.producer_id_blocks import ProducerIdBlocks
from samsa.server.fetch_sessions.cache import FetchSessionCache
from samsa.server.handlers import register_all
from samsa.server.metadata import meta_properties
from samsa.server.metadata.applier import SerialMetadataApplier
from samsa.server.metadata.broker_lifecycle import BrokerLifecycle, Registration
from samsa.server.metadata.directory_assigner import DirectoryAssigner
from samsa.server.metadata.dynamic_broker_config import DynamicBrokerConfig
from samsa.server.metadata.features import api_versions_features
from samsa.server.metadata.heap import freeze_start_up
from samsa.server.metadata.log_dir_failure_handler import LogDirFailureHandler
from samsa.server.metadata.meta_properties import MetaProperties, directory_uuid
from samsa.server.observability.metrics import BrokerMetrics
from samsa.storage.log_dirs import LogDirs
from samsa.storage.topic_config.log_config import LogConfig

if TYPE_CHECKING:
    from samsa.http.endpoint import HttpEndpoint
    from samsa.raft.driver import RaftDriver
    from samsa.server.broker_api import NodeApi
    from samsa.server.metadata.controller_link import ControllerLink
    from samsa.server.metadata.loader import MetadataLoader

log = logging.getLogger("samsa.server")

TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4
CREATE_TOPICS = 19
ALTER_PARTITION = 56
ALLOCATE_PRODUCER_IDS = 67
# Forwarded requests resent when an attempt runs long: a second producer-id block
# is just skipped.  Not ISR changes, though harmless twice: one of thousands of
# partitions waits seconds behind a commit, and its resend doubled the work of a
# controller already behind (Kafka's AlterPartitionManager waits 30 s).
RESENDABLE_FORWARDS = frozenset({ALLOCATE_PRODUCER_IDS})
ISR_CHANGE_TIMEOUT_MS = 30_000
"""How long an ISR change waits for the controller's answer (Kafka's
controller.socket.timeout.ms): one of 9,000 partitions took the controller
over the 10 s other forwards get while a cluster of 11,000 settled, and each
retry sent all of them again."""
CONTROLLED_SHUTDOWN_TIMEOUT_S = 30.0
LOADING_SWITCH_INTERVAL_S = 0.0002
NEW_PARTITIONS_OFF_LOOP = 20
"""A committed batch bringing this many new partitions here creates their logs in
a worker thread first (see metadata_applier); fewer are created inline."""


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


class Broker:
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
        self.authorizer: StandardAuthorizer | None = node.authorizer
        self._tasks: list[asyncio.Task[Any]] = []
        self.groups: Any = None
        self._groups_ready = False
        self._groups_loading: asyncio.Task[Any] | None = None
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
        self._http_endpoints: list[HttpEndpoint] = []
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

    def groups_coordinator_node(self, group_id: str) -> int | None:
        """The broker leading the group's ``__consumer_offsets`` partition."""
        from samsa.coordinator.partitioning import partition_for

        topic = self.image.topics.get("__consumer_offsets")
        if topic is None or not topic.partitions:
            return None
        registration = topic.partitions.get(partition_for(group_id, len(topic.partitions)))
        if registration is None or registration.leader < 0:
            return None
        return registration.leader

    def transaction_coordinator_node(self, transactional_id: str) -> int | None:
        """The broker leading the id's ``__transaction_state`` partition."""
        from samsa.coordinator.partitioning import partition_for
        from samsa.server.coordinators.txn_wiring import TRANSACTION_TOPIC

        topic = self.image.topics.get(TRANSACTION_TOPIC)
        if topic is None or not topic.partitions:
            return None
        registration = topic.partitions.get(partition_for(transactional_id, len(topic.partitions)))
        if registration is None or registration.leader < 0:
            return None
        return registration.leader

    @property
    def inter_broker_listener(self) -> str:
        return self.node.settings.inter_broker_listener_name

    def track(self, task: asyncio.Task[Any]) -> None:
        """Keep a background task until it ends (and cancel it on stop)."""
        self._tasks.append(task)
        task.add_done_callback(lambda t: self._tasks.remove(t) if t in self._tasks else None)

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        config = self.config
        defaults = LogConfig.from_dict(self.dynamic_config.topic_defaults())
        failures = self.node.log_dir_failures
        self.directory_ids = self._log_dir_ids(config.log_dirs)
        # The logs load off the loop while the HTTP endpoints bind (importing
        # their libraries) and the broker registers, kept fenced: the
        # controller's round trips and the metadata catch-up overlap with
        # opening 10,000 logs instead of following it.
        self._loading = asyncio.ensure_future(
            asyncio.to_thread(
                LogDirs.open, config.log_dirs, defaults, clock=wall_ms, failure_channel=failures
            )
        )
        try:
            await self._bind_http_endpoints()
        except BaseException:
            await self._close_loaded_logs()
            raise
        self._start_lifecycle()
        # The loading thread gives the GIL up at each of its ~2 syscalls per
        # partition and, while the loop runs Python, waited a whole switch
        # interval (5 ms) to get it back: opening 11,000 logs took 1.4 s beside
        # the loop instead of 0.85 s alone.  A shorter interval while they load.
        with switch_interval(LOADING_SWITCH_INTERVAL_S):
            # Shielded: a stop while the logs load still gets them, to close (``stop``).
            self.log_manager = await asyncio.shield(self._loading)
        self.log_dir_failures = LogDirFailureHandler(
            failures,
            self.directory_ids,
            lambda: self.lifecycle,
            self.node.request_stop,
        )
        node_settings = self.node.settings
        self.replicas = ReplicaManager(
            self.log_manager,
            wall_ms,
            node_id=self.node_id,
            config=ReplicationConfig.from_lookup(config.__getitem__),
            channels=ChannelPool(
                client_id=f"samsa-replica-fetcher-{self.node_id}",
                security=channel_security(
                    config,
                    node_settings.inter_broker_listener_name,
                    node_settings.protocol_of(node_settings.inter_broker_listener_name),
                    "sasl.mechanism.inter.broker.protocol",
                    standalone=node_settings.standalone,
                ),
            ),
            alter_partition=self._alter_partition,
            inter_broker_listener=node_settings.inter_broker_listener_name,
        )
        self.fetch_sessions.states = self.replicas.session_partitions
        self.replicas.load_existing()
        self.directory_assigner = DirectoryAssigner(
            self.node_id,
            self.directory_ids,
            lambda: self.log_dir_failures.offline_dirs(),
            lambda: self.image,
            self.replicas.partitions,
            self.forward,
            lambda: -1 if self.lifecycle is None else self.lifecycle.broker_epoch,
        )
        self.loader.add_publisher(self)
        self.client_quotas.update(self.image.client_quotas)
        self._opened = True
        assert self.lifecycle is not None
        self.lifecycle.set_ready_to_unfence()
        for endpoint in self._http_endpoints:
            await endpoint.serve()
        self._tasks.append(asyncio.ensure_future(self._periodic_retention()))
        self._tasks.append(asyncio.ensure_future(self._periodic_checkpoint()))
        self._tasks.append(asyncio.ensure_future(self._periodic_offset_expiry()))
        self._tasks.append(asyncio.ensure_future(self._periodic_transaction_timeouts()))
        if config["log.cleaner.enable"]:
            self.cleaner_task = CleanerTask(
                self.log_manager,
                backoff_ms=self.dynamic_config["log.cleaner.backoff.ms"],
                first_unstable_offset=self.replicas.first_open_transaction_offset,
            )
            self.cleaner_task.start()

    async def _close_loaded_logs(self) -> None:
        """A start cut short while the logs loaded (a busy port, a stop): what
        was opened closes cleanly, so the next start has nothing to recover."""
        if self._loading is not None:
            with contextlib.suppress(Exception):
                (await self._loading).close()

    def _start_lifecycle(self) -> None:
        """Register with the controller, asking to stay fenced until ``start``
        has opened the logs (Kafka's broker registers before its LogManager
        loads, too)."""
        node_settings = self.node.settings
        registration = Registration(
            broker_id=self.node_id,
            cluster_id=self.cluster_id,
            listeners=[
                (
                    listener.name,
                    *self.node.advertised(listener),
                    int(node_settings.protocol_of(listener.name)),
                )
                for listener in self.node.client_listeners()
            ],
            rack=self.config["broker.rack"] or None,
            directory_id=_directory_bytes(self.node.directory_id),
            other_directory_ids=tuple(
                d
                for d in self.directory_ids.values()
                if d != _directory_bytes(self.node.directory_id)
            ),
        )
        assert self.node.heartbeat_link is not None
        self.lifecycle = BrokerLifecycle(
            registration,
            self.node.heartbeat_link.request,
            # Kafka's CurrentMetadataOffset: the last offset applied, not the next.
            lambda: self.loader.applied_offset - 1,
            heartbeat_interval_ms=self.config["broker.heartbeat.interval.ms"],
            retry_backoff_ms=20,
            ready_to_unfence=False,
        )
        self.lifecycle.start()

    def _log_dir_ids(self, dirs: list[Path]) -> dict[str, bytes]:
        """Each log dir's ``directory.id``: the metadata log's dir was read at the
        node's start; every other dir gets a meta.properties of its own (Kafka
        3.7+ JBOD)."""
        ids = {}
        for log_dir in dirs:
            if log_dir == self.config.metadata_log_dir:
                ids[str(log_dir)] = _directory_bytes(self.node.directory_id)
                continue
            meta = meta_properties.load_or_create(log_dir, self.node_id, self.cluster_id)
            ids[str(log_dir)] = _directory_bytes(directory_uuid(meta.directory_id))
        return ids

    async def wait_ready(self) -> None:
        """Registered, caught up with the metadata and unfenced."""
        assert self.lifecycle is not None
        await self.lifecycle.unfenced.wait()
        self._note_own_registration()
        try:
            # The heartbeat says unfenced once the controller committed it; the
            # record reaches this node's image a moment later (bounded wait).
            await asyncio.wait_for(self._listed_unfenced.wait(), 5.0)
        except TimeoutError:
            log.warning("broker %d: unfenced, but not yet so in its metadata", self.node_id)
        self._reconciled = True
        self.replicas.apply_image(self.image, wall_ms())
        self._assign_replicas_to_dirs()
        self._apply_dynamic_broker_configs()
        if "__consumer_offsets" in self.image.topics:
            self.ensure_group_coordinator()
        if "__transaction_state" in self.image.topics:
            self.ensure_transaction_coordinator()
        freeze_start_up()  # what start-up built lives on: keep the collector off it

    def register_handlers(self, router: Router, listener: Listener) -> None:
        register_all(router, self, listener.name)
        router.features = lambda: api_versions_features(
            self.image.features, self.loader.applied_offset - 1
        )
        if self.metrics is not None:
            router.observer = self.metrics
        router.throttling = self.throttling

    async def _bind_http_endpoints(self) -> None:
        """Metrics and console: off unless their listen address is set."""
        if self.metrics is None:
            return
        from samsa.server.endpoints.assembly import bind_http_endpoints

        self._http_endpoints = await bind_http_endpoints(self, self.metrics)

    async def controlled_shutdown(self) -> None:
        """Ask the controller to move this broker's leaderships away, and wait."""
        lifecycle = self.lifecycle
        if lifecycle is None or not self.config["controlled.shutdown.enable"]:
            return
        log.info("broker %d: controlled shutdown (moving its leaderships away)", self.node_id)
        lifecycle.begin_controlled_shutdown()
        # Wait while the controller keeps answering heartbeats (moving 1,000
        # leaderships can outlast a 2 s session), up to a cap; with the quorum gone
        # (a whole-cluster stop) no grant can come, so stop once it has been silent
        # for a session timeout.
        session_s = self.config["broker.session.timeout.ms"] / 1000
        started = time.monotonic()
        deadline = started + CONTROLLED_SHUTDOWN_TIMEOUT_S
        while not lifecycle.shutdown_granted.is_set():
            now = time.monotonic()
            silent_s = now - max(lifecycle.last_heartbeat_answer, started)
            if silent_s >= session_s or now >= deadline:
                why = (
                    "the controller stopped answering"
                    if silent_s >= session_s
                    else "waited too long"
                )
                log.warning("controlled shutdown not granted (%s); stopping anyway", why)
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    lifecycle.shutdown_granted.wait(), min(session_s - silent_s, deadline - now)
                )

    async def stop(self) -> None:
        for endpoint in self._http_endpoints:
            await endpoint.stop()
        if self.lifecycle is not None:
            await self.lifecycle.stop()
        if not self._opened:
            await self._close_loaded_logs()
            return
        if self.cleaner_task is not None:
            await self.cleaner_task.stop()
        await cancel_and_wait(self._tasks)
        await self.metadata_applier.close()
        if self.groups is not None:
            with contextlib.suppress(Exception):
                await self.groups.shutdown()
        if self.transactions is not None:
            with contextlib.suppress(Exception):
                await self.transactions.shutdown()
        await self.txn_channels.close()
        if self.directory_assigner is not None:
            await self.directory_assigner.stop()
        await self.replicas.stop()
        self.replicas.snapshot_producer_state()
        self.log_manager.close()
        if not self.log_manager.offline:
            log.info("broker %d stopped cleanly", self.node_id)

    # ------------------------------------------------------------------ metadata publisher
    def _note_own_registration(self) -> None:
        registration = self.image.brokers.get(self.node_id)
        if registration is not None and not registration.fenced:
            self._listed_unfenced.set()

    def on_delta(self, delta: MetadataDelta) -> None:
        """Apply one committed batch: replicas made leaders or followers (or deleted),
        topic configs, tombstones for a deleted topic's committed offsets, and the
        group coordinator following the ``__consumer_offsets`` leaderships.
        Before the first unfencing the image is still catching up: the whole
        image is applied once then (``wait_ready``)."""
        if delta.client_quotas_changed:
            self.client_quotas.update(self.image.client_quotas)
        if not self._reconciled:
            self._note_own_registration()
            if self.lifecycle is not None:
                self.lifecycle.note_metadata_applied(self.loader.applied_offset - 1)
            return
        image = self.image
        changes = delta.local_changes(self.node_id)
        prepare = None
        if len(self.replicas.missing(changes)) >= NEW_PARTITIONS_OFF_LOOP:
            prepare = partial(self.replicas.build_missing, changes, image)
        self.metadata_applier.submit(partial(self._apply_delta, delta, image, changes), prepare)

    def _apply_delta(
        self,
        delta: MetadataDelta,
        image: MetadataImage,
        changes: LocalReplicaChanges,
        built: object,
    ) -> Iterator[None]:
        """``on_delta``'s work on the loop, after the new logs were made (if many),
        a slice of partitions at a time (see metadata_applier)."""
        yield from self.replicas.apply_delta_in_steps(
            delta,
            image,
            wall_ms(),
            built=built if isinstance(built, dict) else None,
            changes=changes,
        )
        self._assign_replicas_to_dirs()
        metrics = self.metrics
        if metrics is not None:
            for change in delta.partition_changes():
                old, new = change.old, change.new
                if old is not None and new.leader == self.node_id and old.leader == self.node_id:
                    metrics.on_isr_change(len(old.isr), len(new.isr))
        changed_configs = delta.changed_configs
        if changed_configs & {(BROKER_RESOURCE, ""), (BROKER_RESOURCE, str(self.node_id))}:
            self._apply_dynamic_broker_configs()
        else:
            self._apply_topic_configs(
                name
                for resource_type, name in changed_configs
                if resource_type == TOPIC_RESOURCE and name in self.image.topics
            )
        for topic in delta.deleted_topics.values():
            self.topic_deleted(topic.name, len(topic.partitions))
        if self.groups is not None:
            from samsa.server.coordinators.group_wiring import follow_leadership

            follow_leadership(self)
        elif "__consumer_offsets" in image.topics:
            # Created through another broker: load the partitions led here now, as
            # Kafka's coordinator does on election, not at this broker's first group
            # request (which members then met with LOAD_IN_PROGRESS, one backing off
            # while another formed the group alone: an extra rebalance).
            self.ensure_group_coordinator()
        if self.transactions is not None:
            from samsa.server.coordinators import txn_wiring

            txn_wiring.follow_leadership(self)
        elif "__transaction_state" in image.topics:
            self.ensure_transaction_coordinator()

    def on_image(self, image: MetadataImage) -> None:
        self.client_quotas.update(image.client_quotas)
        if self._reconciled:
            self.metadata_applier.submit(lambda _: self._apply_image(image))

    def _apply_image(self, image: MetadataImage) -> None:
        self.replicas.apply_image(image, wall_ms())
        self._assign_replicas_to_dirs()
        self._apply_dynamic_broker_configs()

    def _assign_replicas_to_dirs(self) -> None:
        if self.directory_assigner is not None:
            self.directory_assigner.maybe_assign()

    def _apply_dynamic_broker_configs(self) -> None:
        """Kafka's DynamicLogConfig and LogCleaner reconfiguration: new topic
        defaults for every log (and the logs still to come), the cleaner's pace."""
        self.log_manager.default_config = LogConfig.from_dict(self.dynamic_config.topic_defaults())
        self._apply_topic_configs(self.image.topics)
        if self.cleaner_task is not None:
            self.cleaner_task.backoff_ms = self.dynamic_config["log.cleaner.backoff.ms"]
        self.node.reload_tls(
            {**self.image.broker_configs(""), **self.image.broker_configs(str(self.node_id))}
        )

    def _apply_topic_configs(self, topics: Iterable[str]) -> None:
        for name in topics:
            self.log_manager.update_config(name, LogConfig.from_dict(self.topic_config(name)))

    async def _alter_partition(self, body: dict[str, Any]) -> dict[str, Any]:
        """ISR changes this broker asks for as a leader go to the controller."""
        return await self.forward(ALTER_PARTITION, 3, body)

    # ------------------------------------------------------------------ forwarding
    async def forward(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        """Send a request to the active controller; KafkaError if none answers.

        Only producer-id blocks may be resent after a slow attempt:
        a client's CreateTopics applied twice answers TOPIC_ALREADY_EXISTS."""
        from samsa.server.metadata.controller_link import ControllerUnavailable

        # A request that says how long its client waits (CreateTopics and the
        # like) gets that long: creating thousands of partitions can take the
        # controller longer than the default 10 s on a busy cluster.
        default_ms = int(self.config["controller.quorum.request.timeout.ms"]) * 5
        if api_key == ALTER_PARTITION:
            default_ms = ISR_CHANGE_TIMEOUT_MS
        asked_ms = body.get("timeout_ms")
        timeout_ms = max(default_ms, asked_ms) if isinstance(asked_ms, int) else default_ms
        try:
            return await self.controller.request(
                api_key,
                version,
                body,
                timeout_ms=timeout_ms,
                resend_when_slow=api_key in RESENDABLE_FORWARDS,
            )
        except ControllerUnavailable as exc:
            raise KafkaError(ErrorCode.REQUEST_TIMED_OUT, str(exc)) from None

    async def create_internal_topic(
        self, name: str, partitions: int, replication_factor: int, configs: dict[str, str]
    ) -> None:
        live = max(1, len(self.image.active_brokers()))
        if replication_factor > live:
            log.warning(
                "creating %s with replication factor %d: only %d brokers are alive (asked for %d)",
                name,
                live,
                live,
                replication_factor,
            )
            replication_factor = live
        body = {
            "topics": [
                {
                    "name": name,
                    "num_partitions": partitions,
                    "replication_factor": replication_factor,
                    "assignments": [],
                    "configs": [{"name": k, "value": v} for k, v in configs.items()],
                }
            ],
            "timeout_ms": 30000,
            "validate_only": False,
        }
        response = await self.forward(CREATE_TOPICS, 7, body)
        code = response["topics"][0]["error_code"]
        if code not in (0, ErrorCode.TOPIC_ALREADY_EXISTS):
            raise KafkaError(ErrorCode(code), response["topics"][0].get("error_message") or name)

    # ------------------------------------------------------------------ background work
    async def _periodic_retention(self) -> None:
        interval = self.config["log.retention.check.interval.ms"] / 1000
        producer_id_failures = FailureLog(log, "producer id expiry")
        while True:
            await asyncio.sleep(interval)
            now = wall_ms()
            expiration = self.dynamic_config["producer.id.expiration.ms"]
            # Both run each partition on its own: one partition's failure is
            # logged once and never stops the others (failure_log); the outer
            # guard only keeps the loop alive.
            try:
                self.log_manager.run_retention(now, self.replicas.high_watermark_of)
                for partition in self.replicas.partitions():
                    producer_id_failures.run(
                        partition.log.name,
                        partial(partition.producer_state.remove_expired, now, expiration),
                    )
            except Exception:
                log.exception("retention pass failed")

    async def _periodic_checkpoint(self) -> None:
        interval = self.config["log.flush.offset.checkpoint.interval.ms"] / 1000
        while True:
            await asyncio.sleep(interval)
            try:
                # Off the loop: fsyncs and a walk over every log (thread-safe,
                # each log under its lock); isolates each log's failure.
                await asyncio.to_thread(self.log_manager.flush_dirty, wall_ms())
            except Exception:
                log.exception("checkpoint failed")

    async def _periodic_offset_expiry(self) -> None:
        interval = self.config["offsets.retention.check.interval.ms"] / 1000
        while True:
            await asyncio.sleep(interval)
            if self.groups is None:
                continue
            try:
                await self.groups.expire_offsets()  # isolates each group's failure
            except Exception:
                log.exception("offset expiry failed")

    async def _periodic_transaction_timeouts(self) -> None:
        interval = self.config["transaction.abort.timed.out.transaction.cleanup.interval.ms"] / 1000
        while True:
            await asyncio.sleep(interval)
            if self.transactions is None:
                continue
            try:
                await self.transactions.abort_timed_out()
                await self.transactions.expire_transactional_ids()
            except Exception:
                log.exception("aborting timed-out transactions failed")

    def topic_deleted(self, name: str, partitions: int) -> None:
        """Committed offsets of a deleted topic are tombstoned, as Kafka does."""
        if self.groups is not None:
            gone = {(name, index) for index in range(partitions)}
            task = asyncio.ensure_future(self.groups.on_partitions_deleted(gone))
            self._tasks.append(task)

    # ------------------------------------------------------------------ group coordinator
    def ensure_group_coordinator(self) -> ErrorCode | None:
        """Create ``__consumer_offsets`` on first use and load the coordinator.

        Returns COORDINATOR_LOAD_IN_PROGRESS while loading, None when ready.
        """
        if self._groups_ready:
            return None
        if self._groups_loading is None:
            from samsa.server.coordinators.group_wiring import start_group_coordinator

            self._groups_loading = asyncio.ensure_future(start_group_coordinator(self))
            self._groups_loading.add_done_callback(self._groups_loaded)
        return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS

    def ensure_transaction_coordinator(self) -> ErrorCode | None:
        """Create ``__transaction_state`` on first use and load the coordinator;
        COORDINATOR_LOAD_IN_PROGRESS meanwhile, None when ready."""
        return self._transactions_start.ensure()

    async def _start_transactions(self) -> None:
        from samsa.server.coordinators.txn_wiring import start_transaction_coordinator

        await start_transaction_coordinator(self)

    def _groups_loaded(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled() or task.exception() is not None:
            log.error(
                "group coordinator failed to load: %r",
                None if task.cancelled() else task.exception(),
            )
            self._groups_loading = None
            return
        self._groups_ready = True


def _directory_bytes(directory: Any) -> bytes:
    return directory.bytes if directory is not None else b"\x00" * 16
