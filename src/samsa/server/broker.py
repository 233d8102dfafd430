"""The broker process: wires storage, metadata, coordinator and the socket server.

Start-up order matters for crash safety: meta.properties, then the metadata log
(the truth about which topics exist), then log recovery, then reconciling the
two, and only then the listener -- so no client sees a half-recovered broker.
Shutdown reverses it and fsyncs everything, so a clean stop needs no recovery.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from functools import partial
from typing import Any

from samsa.config import BrokerConfig, parse_host_port
from samsa.controller.image import MetadataImage
from samsa.controller.metadata_log import MetadataLog
from samsa.errors import ErrorCode
from samsa.failure_log import FailureLog
from samsa.replication.replica_manager import ReplicaManager
from samsa.server import meta_properties
from samsa.server.cleaner_task import CleanerTask
from samsa.server.handlers import register_all
from samsa.server.http_endpoint import HttpEndpoint
from samsa.server.metrics import BrokerMetrics
from samsa.server.network import SocketServer
from samsa.server.router import Router
from samsa.server.topic_manager import TopicManager
from samsa.storage.log_config import LogConfig
from samsa.storage.log_manager import LogManager

log = logging.getLogger("samsa.server")


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


class Broker:
    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.node_id: int = config["node.id"]
        self.cluster_id = ""
        self.advertised_host = ""
        self.advertised_port = 0
        self.image = MetadataImage()
        self._tasks: list[asyncio.Task[Any]] = []
        self.groups: Any = None
        self._groups_ready = False
        self._groups_loading: asyncio.Task[Any] | None = None
        self.cleaner_task: CleanerTask | None = None
        self.metrics: BrokerMetrics | None = None
        self._http_endpoints: list[HttpEndpoint] = []

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> tuple[str, int]:
        config = self.config
        data_dir = config.data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        meta = meta_properties.load_or_create(data_dir, self.node_id, config["cluster.id"])
        self.cluster_id = meta.cluster_id

        self.metadata_log = MetadataLog(data_dir)
        for record in self.metadata_log.records():
            self.image.replay(record)

        defaults = LogConfig.from_dict(config.topic_defaults())
        topic_configs = {
            name: LogConfig.from_dict(topic.configs, base=defaults)
            for name, topic in self.image.topics.items()
        }
        self.log_manager = LogManager(
            data_dir, defaults, topic_configs=topic_configs, clock=wall_ms
        )
        self.replicas = ReplicaManager(self.log_manager, wall_ms)
        self.replicas.load_existing()
        self.topics = TopicManager(
            self.metadata_log,
            self.image,
            self.replicas,
            config.topic_defaults,
            config["num.partitions"],
        )
        self.topics.reconcile()

        self.router = Router()
        register_all(self.router, self)
        if self.config["metrics.listen"] or self.config["console.listen"]:
            # Counting starts before the first client can connect.
            self.metrics = BrokerMetrics()
            self.router.observer = self.metrics
        self.server = SocketServer(
            self.router.dispatch,
            max_request_size=config["socket.request.max.bytes"],
            idle_timeout_ms=config["connections.max.idle.ms"],
        )
        host, port = parse_host_port(config["listeners"])
        bound_host, bound_port = await self.server.start(host, port)
        if config["advertised.listeners"]:
            self.advertised_host, self.advertised_port = parse_host_port(
                config["advertised.listeners"]
            )
        else:
            self.advertised_host = (
                bound_host if bound_host not in ("0.0.0.0", "::") else "127.0.0.1"
            )
            self.advertised_port = bound_port
        await self._start_http_endpoints()
        self._tasks.append(asyncio.ensure_future(self._periodic_retention()))
        self._tasks.append(asyncio.ensure_future(self._periodic_checkpoint()))
        self._tasks.append(asyncio.ensure_future(self._periodic_offset_expiry()))
        if config["log.cleaner.enable"]:
            self.cleaner_task = CleanerTask(
                self.log_manager, backoff_ms=config["log.cleaner.backoff.ms"]
            )
            self.cleaner_task.start()
        if self.image.topics.get("__consumer_offsets") is not None:
            self.ensure_group_coordinator()
        return bound_host, bound_port

    async def _start_http_endpoints(self) -> None:
        """Metrics and console: off unless their listen address is set."""
        if self.metrics is None:
            return
        from samsa.server.broker_view import BrokerView
        from samsa.server.observability import console_endpoint, metrics_endpoint

        metrics_at, console_at = self.config["metrics.listen"], self.config["console.listen"]
        view = BrokerView(self)
        for address, build in ((metrics_at, metrics_endpoint), (console_at, console_endpoint)):
            if address:
                endpoint = build(view, self.metrics)
                await endpoint.start(*parse_host_port(address))
                self._http_endpoints.append(endpoint)

    async def stop(self) -> None:
        for endpoint in self._http_endpoints:
            await endpoint.stop()
        if self.cleaner_task is not None:
            await self.cleaner_task.stop()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.server.stop()
        if self.groups is not None:
            with contextlib.suppress(Exception):
                await self.groups.shutdown()
        self.replicas.snapshot_producer_state()
        self.log_manager.close()
        self.metadata_log.close()
        log.info("broker %d stopped cleanly", self.node_id)

    # ------------------------------------------------------------------ background work
    async def _periodic_retention(self) -> None:
        interval = self.config["log.retention.check.interval.ms"] / 1000
        expiration = self.config["producer.id.expiration.ms"]
        producer_id_failures = FailureLog(log, "producer id expiry")
        while True:
            await asyncio.sleep(interval)
            now = wall_ms()
            # Both run each partition on its own: one partition's failure is
            # logged once and never stops the others (failure_log); the outer
            # guard only keeps the loop alive.
            try:
                self.log_manager.run_retention(now)
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
                self.log_manager.flush_dirty(wall_ms())  # isolates each log's failure
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
            from samsa.server.group_wiring import start_group_coordinator

            self._groups_loading = asyncio.ensure_future(start_group_coordinator(self))
            self._groups_loading.add_done_callback(self._groups_loaded)
        return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS

    def _groups_loaded(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled() or task.exception() is not None:
            log.error(
                "group coordinator failed to load: %r",
                None if task.cancelled() else task.exception(),
            )
            self._groups_loading = None
            return
        self._groups_ready = True
