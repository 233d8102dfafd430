"""The broker role of a node: partitions, groups and client requests.

What the broker hosts follows the metadata image, never the other way round
(``broker_metadata``).  Changes to metadata (topics, partitions, configs,
producer-id blocks) are not made here: they are forwarded to the active
controller (``metadata/forwarding.py``), whose committed records then come
back through the loader like any other.

The ``Broker`` is assembled from one part per concern, each in its own module:

* broker_base: its parts, and the views and services handlers see (``BrokerApi``);
* broker_metadata: following the committed metadata, and catching up with it
  before the broker is first unfenced (``wait_ready``);
* broker_background: the periodic work (retention, checkpoints, expiry);
* this module: start-up, registration and stop.

Start-up: the logs load in a thread while the HTTP endpoints bind and the
broker registers, kept fenced, with the controller; once they are open the
replicas are built and the broker may be unfenced.

Shutdown: a controlled shutdown first (the controller moves this broker's
leaderships away, as Kafka's does on SIGTERM), then the listeners close,
data and producer state are flushed, and a clean-shutdown marker is written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from pathlib import Path
from typing import Any

from samsa.config.listeners import Listener
from samsa.eventloop.cancellation import cancel_and_wait
from samsa.eventloop.switch_interval import switch_interval
from samsa.net import ChannelPool
from samsa.replication.config import ReplicationConfig
from samsa.replication.replica_manager import ReplicaManager
from samsa.server.broker_background import start_periodic_tasks
from samsa.server.broker_base import wall_ms
from samsa.server.broker_metadata import BrokerMetadataPublisher
from samsa.server.cleaner_task import CleanerTask, kill_self
from samsa.server.connections.listener_security import channel_security
from samsa.server.connections.router import Router
from samsa.server.handlers import register_all
from samsa.server.metadata import meta_properties
from samsa.server.metadata.broker_lifecycle import BrokerLifecycle, Registration
from samsa.server.metadata.directory_assigner import DirectoryAssigner
from samsa.server.metadata.features import api_versions_features
from samsa.server.metadata.log_dir_failure_handler import LogDirFailureHandler
from samsa.server.metadata.meta_properties import directory_uuid
from samsa.server.tiered_storage import start_tiered_storage
from samsa.storage.log_dirs import LogDirs
from samsa.storage.topic_config.log_config import LogConfig

__all__ = ["Broker"]

log = logging.getLogger("samsa.server")

CONTROLLED_SHUTDOWN_TIMEOUT_S = 30.0
DIR_MOVE_CRASH_ENV = "SAMSA_DIR_MOVE_CRASH_AT"
LOADING_SWITCH_INTERVAL_S = 0.0002


class Broker(BrokerMetadataPublisher):
    """The broker role of a node (see the module doc for its parts)."""

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
            alter_partition=self.forwarding.alter_partition,
            inter_broker_listener=node_settings.inter_broker_listener_name,
        )
        self.fetch_sessions.states = self.replicas.session_partitions
        self.replicas.load_existing()
        self.tiering = await start_tiered_storage(self)
        moves = self.replicas.dir_moves
        self.directory_assigner = DirectoryAssigner(
            self.node_id,
            self.directory_ids,
            lambda: self.log_dir_failures.offline_dirs(),
            lambda: self.image,
            lambda: (
                p for p in self.replicas.partitions() if not moves.is_moving(p.topic, p.index)
            ),
            self.forward,
            lambda: -1 if self.lifecycle is None else self.lifecycle.broker_epoch,
        )
        if self.directory_assigner.enabled:
            moves.runner.assign = self.directory_assigner.assign_dir
        moves.runner.on_change = self._assign_replicas_to_dirs
        crash_at = os.environ.get(DIR_MOVE_CRASH_ENV)
        if crash_at:  # tests: SIGKILL inside a swap (storage/moves/swap.CRASH_POINTS)
            moves.runner.crash = lambda p: kill_self(p, "log dir move") if p == crash_at else None
        moves.throttle(self.dynamic_config["replica.alter.log.dirs.io.max.bytes.per.second"])
        moves.resume()  # the moves a restart cut short go on
        self.loader.add_publisher(self)
        self.client_quotas.update(self.image.client_quotas)
        self._opened = True
        assert self.lifecycle is not None
        self.lifecycle.set_ready_to_unfence()
        for endpoint in self._http_endpoints:
            await endpoint.serve()
        self._tasks.extend(start_periodic_tasks(self))
        if config["log.cleaner.enable"]:
            self.cleaner_task = CleanerTask(
                self.log_manager,
                backoff_ms=self.dynamic_config["log.cleaner.backoff.ms"],
                first_unstable_offset=self.replicas.first_open_transaction_offset,
                paused=moves.moving,
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

    def register_handlers(self, router: Router, listener: Listener) -> None:
        register_all(router, self, listener.name)
        router.features = lambda: api_versions_features(
            self.image.features, self.loader.applied_offset - 1
        )
        if self.metrics is not None:
            router.observer = self.metrics
        router.throttling = self.throttling

    async def _bind_http_endpoints(self) -> None:
        """Metrics, console and schema registry: off unless their listen address is set."""
        from samsa.server.endpoints.registry_port import bind_registry

        self.registry = await bind_registry(self, self.node.settings)
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
        await self.schema_ids.stop()
        if self.registry is not None:
            await self.registry.stop()
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
        if self.tiering is not None:
            await self.tiering.stop()
        await self.replicas.stop()
        self.replicas.snapshot_producer_state()
        self.log_manager.close()
        if not self.log_manager.offline:
            log.info("broker %d stopped cleanly", self.node_id)


def _directory_bytes(directory: Any) -> bytes:
    return directory.bytes if directory is not None else b"\x00" * 16
