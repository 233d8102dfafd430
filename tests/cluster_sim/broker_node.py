"""One broker process in the simulator: metadata follower, replicas, fetchers, lifecycle.

Real code driven (unchanged):

* ``MetadataLoader`` replays the committed metadata log the broker's Raft
  observer fetches; ``MetadataDelta.local_changes`` and
  ``local_changes_from_image`` say what this broker must do;
* ``Partition`` (produce path, ``make_leader``/``make_follower``, leader-side
  reads with the divergence check, the high watermark and ISR rules of
  ``LeaderState``/``IsrState``/``ReplicaState``, follower appends and
  truncations, ``check_enough_replicas``, ``handle_alter_partition_result``) on a
  ``MemoryLog``;
* ``fetch_partition_response`` / ``epoch_end_offset_response`` answer followers
  and consumers, ``FetcherState`` decides every follower fetch, ``LocalFollowers``
  executes its actions;
* ``AlterPartitionManager`` builds the batched AlterPartition requests and hands
  each partition's answer to its callback (only its asyncio scheduling is
  replaced).

Modelled glue (re-stated from the asyncio code, kept line for line where it
decides anything): ``ReplicaManager.apply_local_changes`` (deletes, leaders,
followers, fetcher (re)starts), the fetcher round of ``ReplicaFetcher`` (one
fetcher per leader), ``BrokerLifecycle`` (register, heartbeat, re-register on a
stale epoch, client APIs open once first unfenced with the whole image applied,
as ``Broker.wait_ready``), the produce handler's ``acks=all`` wait
(``DelayedProduceQueue`` with callbacks instead of futures), the ISR expiry loop
and the high-watermark checkpoint.  A leader answers an empty follower fetch at
once (no long poll): the follower waits a few milliseconds before the next one.
"""

from __future__ import annotations

import heapq
import itertools
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.cluster_sim.memory_log import MemoryLog

from samsa.controller.image.metadata_delta import LocalReplicaChanges, MetadataDelta
from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.image.registrations import NO_LEADER
from samsa.errors import ErrorCode, KafkaError
from samsa.replication.config import ReplicationConfig
from samsa.replication.fetcher.local_followers import LocalFollowers
from samsa.replication.fetcher.replica_fetcher import carry_out
from samsa.replication.fetcher.state import FetcherState
from samsa.replication.fetcher.types import (
    FetcherAction,
    FetchStatus,
    InitialFetchState,
    TruncateFullyAndStartAt,
    TruncateTo,
)
from samsa.replication.image_changes import local_changes_from_image
from samsa.replication.leader.alter_partition_manager import AlterPartitionManager, _Change
from samsa.replication.leader.fetch_responses import (
    epoch_end_offset_response,
    fetch_error,
    fetch_partition_response,
)
from samsa.replication.leader.isr_state import LeaderAndIsr, PendingIsrChange
from samsa.replication.partition import Partition, PartitionRole
from samsa.replication.partition_base import PartitionBase
from samsa.server.controller_server import ALTER_PARTITION, BROKER_HEARTBEAT, BROKER_REGISTRATION
from samsa.server.metadata.loader import MetadataLoader
from samsa.storage.producers.producer_state import ProducerStateManager
from samsa.storage.topic_config.log_config import LogConfig

if TYPE_CHECKING:
    from tests.cluster_sim.sim import ClusterSimulation
    from tests.raft.sim import SimNode

Body = dict[str, Any]
TopicPartition = tuple[str, int]
NO_STATE_DIR = Path("/nonexistent/samsa-cluster-sim")
"""Producer state snapshots are never written (no idempotent producers): no directory."""
EMPTY_FETCH_WAIT_MS = (3, 15)
REGISTER_BACKOFF_MS = 20


@dataclass
class BrokerDisk:
    """What survives a broker crash: partition logs and the high-watermark checkpoint."""

    logs: dict[TopicPartition, MemoryLog] = field(default_factory=dict)
    hw_checkpoint: dict[TopicPartition, int] = field(default_factory=dict)


class SimDelayedProduce:
    """``DelayedProduceQueue`` with callbacks in place of futures (same completion order)."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Callable[[ErrorCode], None]]] = []
        self._order = itertools.count()

    def __len__(self) -> int:
        return len(self._heap)

    def add(self, required_offset: int, callback: Callable[[ErrorCode], None]) -> None:
        heapq.heappush(self._heap, (required_offset, next(self._order), callback))

    def complete_up_to(self, high_watermark: int, code: ErrorCode) -> int:
        completed = 0
        while self._heap and self._heap[0][0] <= high_watermark:
            heapq.heappop(self._heap)[2](code)
            completed += 1
        return completed

    def fail_all(self, code: ErrorCode) -> int:
        heap, self._heap = self._heap, []
        for _, _, callback in heap:
            callback(code)
        return len(heap)

    def discard_done(self) -> None:
        pass


class SimAlterPartitionManager(AlterPartitionManager):
    """The real manager (batching, request body, distribution of answers, retries)
    with its asyncio task replaced by simulator events."""

    def __init__(self, broker: BrokerProcess) -> None:
        super().__init__(
            broker.node_id,
            broker.broker_epoch_now,
            _never_called,
            retry_backoff_ms=broker.sim.cluster.replica_fetch_backoff_ms,
        )
        self.broker = broker
        self.inflight = False

    def _maybe_send(self) -> None:
        if self.inflight or not self._unsent or self._closed:
            return
        batch, self._unsent = self._unsent, {}
        self.inflight = True
        request = self._request(batch)
        broker = self.broker

        def done(response: Body | None) -> None:
            self.inflight = False
            if response is None or response.get("error_code", 0) != ErrorCode.NONE:
                broker.sim.proc_at(
                    broker.node, broker.sim.now + self.retry_backoff_ms, self._requeue, batch
                )
            else:
                self._distribute(batch, response)
            self._maybe_send()

        broker.controller_call(ALTER_PARTITION, request, done)

    def _requeue(self, batch: dict[tuple[bytes, int], _Change]) -> None:
        for key, change in batch.items():
            self._unsent.setdefault(key, change)
        self._maybe_send()

    def _retry_later(self, change: _Change) -> None:
        broker = self.broker

        def again() -> None:
            self.submit(change.topic_id, change.partition_index, change.sent, change.callback)

        broker.sim.proc_at(broker.node, broker.sim.now + self.retry_backoff_ms, again)


async def _never_called(body: dict[str, Any]) -> dict[str, Any]:
    raise AssertionError("the simulator sends AlterPartition itself")


class SimFetcher:
    """One replica fetcher (one per leader broker): ``ReplicaFetcher``'s round."""

    def __init__(self, broker: BrokerProcess, leader_id: int) -> None:
        self.broker = broker
        self.leader_id = leader_id
        self.state = FetcherState(broker.node_id, leader_id, broker.replication_config)
        self.inflight = False
        self.wake_at: int | None = None

    def wake(self, at_ms: int) -> None:
        if self.inflight or (self.wake_at is not None and self.wake_at <= at_ms):
            return
        self.wake_at = at_ms
        self.broker.sim.proc_at(self.broker.node, at_ms, self._wake, at_ms)

    def _wake(self, at_ms: int) -> None:
        if self.wake_at != at_ms:
            return
        self.wake_at = None
        self.round()

    def _alive(self) -> bool:
        return self.broker.fetchers.get(self.leader_id) is self and self.broker.is_current()

    def round(self) -> None:
        if self.inflight or not self._alive():
            return
        broker = self.broker
        logs = broker.followers
        broker.execute(self.state, self.state.truncate_without_epochs(logs))
        now = broker.sim.now
        epoch_plan = self.state.build_epoch_request(now, logs)
        if epoch_plan is not None:
            self.inflight = True

            def on_epochs(body: Body | None) -> None:
                self.inflight = False
                if not self._alive():
                    return
                if body is None:
                    self.state.handle_request_failure(broker.sim.now)
                else:
                    broker.execute(
                        self.state,
                        self.state.handle_epoch_response(epoch_plan, body, broker.sim.now, logs),
                    )
                self._fetch(sent_any=True)

            broker.sim.broker_call(
                broker.node_id, self.leader_id, "epochs", epoch_plan.body, on_epochs
            )
            return
        self._fetch(sent_any=False)

    def _fetch(self, *, sent_any: bool) -> None:
        broker = self.broker
        logs = broker.followers
        plan = self.state.build_fetch(broker.sim.now, logs)
        if plan is None:
            self._idle(sent_any)
            return
        self.inflight = True

        def on_fetch(body: Body | None) -> None:
            self.inflight = False
            if not self._alive():
                return
            now = broker.sim.now
            if body is None:
                self.state.handle_request_failure(now)
                self._idle(True)
                return
            broker.execute(self.state, self.state.handle_fetch_response(plan, body, now, logs))
            got = any(
                len(p.get("records") or b"")
                for t in body.get("responses") or ()
                for p in t.get("partitions") or ()
            )
            if got:
                self.wake(now)
            else:
                self.wake(now + broker.sim.rng.randint(*EMPTY_FETCH_WAIT_MS))

        broker.sim.broker_call(broker.node_id, self.leader_id, "fetch", plan.body, on_fetch)

    def _idle(self, sent_any: bool) -> None:
        now = self.broker.sim.now
        wake_at = self.state.next_wakeup_ms(now)
        self.wake(now + 100 if wake_at is None else max(wake_at, now + 1))


class BrokerProcess:
    """One incarnation of a broker node (see the module doc)."""

    """Heartbeat with the next offset to apply, as samsa.server.metadata.broker_lifecycle does."""

    def __init__(self, sim: ClusterSimulation, node: SimNode, disk: BrokerDisk) -> None:
        self.sim = sim
        self.node = node
        self.node_id = node.node_id
        self.incarnation = node.incarnation
        self.disk = disk
        scenario = sim.cluster
        self.replication_config = ReplicationConfig(
            replica_lag_time_max_ms=scenario.replica_lag_time_max_ms,
            replica_fetch_max_bytes=scenario.replica_fetch_max_bytes,
            replica_fetch_backoff_ms=scenario.replica_fetch_backoff_ms,
            truncate_on_fetch=scenario.truncate_on_fetch,
            alter_partition_retry_backoff_ms=scenario.replica_fetch_backoff_ms,
        )
        self.loader = MetadataLoader(
            node.log, snapshot_bytes=scenario.snapshot_bytes, snapshot_interval_ms=0
        )
        self.loader._create_snapshot = self._create_snapshot
        self.loader.add_publisher(self)
        self.incarnation_id = uuid.UUID(int=sim.rng.getrandbits(128)).bytes
        self.broker_epoch = -1
        self.state = "STARTING"
        self.reconciled = False
        self.background_started = False
        self.partitions: dict[TopicPartition, Partition] = {}
        self.followers = LocalFollowers(self.partitions)
        self.fetchers: dict[int, SimFetcher] = {}
        self.fetcher_of: dict[TopicPartition, int] = {}
        self.alter_partition = SimAlterPartitionManager(self)
        for (topic, index), log_ in sorted(disk.logs.items()):
            self._add(topic, index, log_)

    # -- plumbing --------------------------------------------------------------------------

    @property
    def image(self) -> MetadataImage:
        return self.loader.image

    def is_current(self) -> bool:
        return self.sim.processes.get(self.node_id) is self

    def broker_epoch_now(self) -> int:
        registration = self.image.brokers.get(self.node_id)
        return -1 if registration is None else registration.epoch

    def _create_snapshot(self, end_offset: int, data: bytes) -> None:
        self.node.machine.create_snapshot(end_offset, data)
        self.node.machine.delete_before_snapshot()

    def controller_call(
        self, api_key: int, body: Body, on_done: Callable[[Body | None], None]
    ) -> None:
        self.sim.controller_call(self.node_id, api_key, body, on_done, self.node.machine.leader_id)

    def start(self) -> None:
        self._register()
        scenario = self.sim.cluster
        self.sim.proc_at(
            self.node, self.sim.now + scenario.replica_lag_time_max_ms // 2, self._isr_expiry
        )

    def _start_background(self) -> None:
        """ReplicaManager.start, called by the first ``apply_local_changes``: the
        checkpoint loop never sees a STANDALONE partition's watermark (its log end)."""
        if not self.background_started:
            self.background_started = True
            self.sim.proc_at(
                self.node, self.sim.now + self.sim.cluster.hw_checkpoint_ms, self._checkpoint
            )

    # -- lifecycle (BrokerLifecycle) ---------------------------------------------------------

    def _register(self) -> None:
        body = {
            "broker_id": self.node_id,
            "cluster_id": "sim",
            "incarnation_id": self.incarnation_id,
            "listeners": [
                {
                    "name": "PLAINTEXT",
                    "host": f"b{self.node_id}",
                    "port": 9092,
                    "security_protocol": 0,
                }
            ],
            "features": [],
            "rack": None,
        }

        def done(response: Body | None) -> None:
            if response is None or response.get("error_code", 0) != ErrorCode.NONE:
                self.sim.proc_at(self.node, self.sim.now + REGISTER_BACKOFF_MS, self._register)
                return
            self.broker_epoch = int(response["broker_epoch"])
            self.state = "RECOVERY"
            self._heartbeat()

        self.controller_call(BROKER_REGISTRATION, body, done)

    def _heartbeat(self) -> None:
        body = {
            "broker_id": self.node_id,
            "broker_epoch": self.broker_epoch,
            "current_metadata_offset": self.metadata_offset(),
            "want_fence": False,
            "want_shut_down": False,
        }
        scenario = self.sim.cluster

        def done(response: Body | None) -> None:
            ok = response is not None and response.get("error_code", 0) == ErrorCode.NONE
            if response is not None and response.get("error_code") in (
                ErrorCode.STALE_BROKER_EPOCH,
                ErrorCode.BROKER_ID_NOT_REGISTERED,
            ):
                self.broker_epoch = -1
                self.state = "STARTING"
                self._register()
                return
            if ok:
                assert response is not None
                fenced = bool(response.get("is_fenced", True))
                if not fenced and self.state == "RECOVERY":
                    self.state = "RUNNING"
                    if not self.reconciled:
                        self.reconciled = True
                        self.apply_image(self.image)
                elif fenced and self.state == "RUNNING":
                    self.state = "RECOVERY"
            delay = scenario.heartbeat_interval_ms if ok else REGISTER_BACKOFF_MS
            if self.state == "RECOVERY" and ok:
                delay = min(delay, 50)
            self.sim.proc_at(self.node, self.sim.now + delay, self._heartbeat)

        self.controller_call(BROKER_HEARTBEAT, body, done)

    def metadata_offset(self) -> int:
        """What a heartbeat reports: the offset of the last record applied, as
        Kafka's brokers and Samsa's BrokerLifecycle send it (the next offset would
        unfence a restarted broker before it applied its own re-registration)."""
        return self.loader.applied_offset - 1

    def _isr_expiry(self) -> None:
        self.sim.proc_at(
            self.node,
            self.sim.now + self.sim.cluster.replica_lag_time_max_ms // 2,
            self._isr_expiry,
        )
        for partition in list(self.partitions.values()):
            partition.maybe_shrink_isr(self.sim.now)

    def _checkpoint(self) -> None:
        self.sim.proc_at(
            self.node, self.sim.now + self.sim.cluster.hw_checkpoint_ms, self._checkpoint
        )
        self.disk.hw_checkpoint = {key: p.high_watermark for key, p in self.partitions.items()}

    # -- metadata (Broker.on_delta / on_image, ReplicaManager) ----------------------------------

    def on_delta(self, delta: MetadataDelta) -> None:
        if self.reconciled:
            self.apply_local_changes(delta.local_changes(self.node_id), self.image)

    def on_image(self, image: MetadataImage) -> None:
        if self.reconciled:
            self.apply_image(image)

    def apply_image(self, image: MetadataImage) -> None:
        changes = local_changes_from_image(image, self.node_id)
        for key, partition in sorted(self.partitions.items()):
            placed = key in changes.leaders or key in changes.followers
            if not placed and partition.role is not PartitionRole.STOPPED:
                self._remove_fetching([key])
                partition.stop()
        self.apply_local_changes(changes, image)

    def apply_local_changes(self, changes: LocalReplicaChanges, image: MetadataImage) -> None:
        now = self.sim.now
        self._start_background()
        for topic, index in sorted(changes.deletes):
            self._delete(topic, index)
        if changes.leaders:
            self._remove_fetching(list(changes.leaders))
        for key, info in changes.leaders.items():
            partition = self._get_or_create(key, image)
            partition.topic_id = info.topic_id
            if partition.make_leader(info.registration, now):
                self.sim.data.on_leader(self, partition)
        to_fetch: dict[TopicPartition, InitialFetchState] = {}
        for key, info in changes.followers.items():
            partition = self._get_or_create(key, image)
            partition.topic_id = info.topic_id
            restart = partition.make_follower(info.registration, now)
            leader = info.registration.leader
            if leader == NO_LEADER or leader not in image.brokers:
                self._remove_fetching([key])
                continue
            if restart or self._needs_fetcher(key):
                to_fetch[key] = InitialFetchState(
                    leader, partition.leader_epoch, partition.high_watermark
                )
        if to_fetch:
            self._add_fetching(to_fetch)

    def _needs_fetcher(self, key: TopicPartition) -> bool:
        leader_id = self.fetcher_of.get(key)
        fetcher = None if leader_id is None else self.fetchers.get(leader_id)
        if fetcher is None:
            return True
        state = fetcher.state.state(key)
        return state is None or state.status is FetchStatus.FAILED

    def _add_fetching(self, initial: Mapping[TopicPartition, InitialFetchState]) -> None:
        """``ReplicaFetcherManager.add_partitions`` with one fetcher per leader."""
        self._remove_fetching(list(initial))
        grouped: dict[int, dict[TopicPartition, InitialFetchState]] = {}
        for tp, start in initial.items():
            grouped.setdefault(start.leader_id, {})[tp] = start
        for leader_id, partitions in sorted(grouped.items()):
            fetcher = self.fetchers.get(leader_id)
            if fetcher is None:
                fetcher = self.fetchers[leader_id] = SimFetcher(self, leader_id)
            fetcher.state.add_partitions(partitions, self.followers)
            for tp in partitions:
                self.fetcher_of[tp] = leader_id
            fetcher.wake(self.sim.now)

    def _remove_fetching(self, tps: list[TopicPartition]) -> None:
        for tp in tps:
            leader_id = self.fetcher_of.pop(tp, None)
            if leader_id is None:
                continue
            fetcher = self.fetchers[leader_id]
            fetcher.state.remove_partitions([tp])
            if len(fetcher.state) == 0:
                del self.fetchers[leader_id]

    def _add(self, topic: str, index: int, log_: MemoryLog) -> Partition:
        state = ProducerStateManager(NO_STATE_DIR)
        for header in log_.iter_batch_headers(log_.log_start_offset):
            state.replay_header(header)
        partition = Partition(
            topic,
            index,
            log_,  # type: ignore[arg-type]
            state,
            lambda: self.sim.now,
            local_broker_id=self.node_id,
            high_watermark=self.disk.hw_checkpoint.get((topic, index), 0),
            replica_lag_time_max_ms=self.replication_config.replica_lag_time_max_ms,
        )
        partition._delayed = SimDelayedProduce()  # type: ignore[assignment]
        partition.alter_partition_sink = self._submit_alter_partition
        partition.is_replica_eligible = self._is_replica_eligible
        self.partitions[(topic, index)] = partition
        return partition

    def _get_or_create(self, key: TopicPartition, image: MetadataImage) -> Partition:
        partition = self.partitions.get(key)
        if partition is not None:
            return partition
        topic, index = key
        config = LogConfig.from_dict(image.topic_configs(topic))
        log_ = self.disk.logs[key] = MemoryLog(topic, index, config)
        return self._add(topic, index, log_)

    def _delete(self, topic: str, index: int) -> None:
        key = (topic, index)
        self._remove_fetching([key])
        partition = self.partitions.pop(key, None)
        if partition is not None:
            partition.stop()
            self.disk.logs.pop(key, None)
            self.disk.hw_checkpoint.pop(key, None)
            self.sim.data.on_deleted(self, key)

    def _is_replica_eligible(self, broker_id: int) -> bool:
        registration = self.image.brokers.get(broker_id)
        return registration is not None and registration.is_active

    def _submit_alter_partition(self, partition: PartitionBase, change: PendingIsrChange) -> None:
        assert isinstance(partition, Partition) and partition.topic_id is not None

        def on_result(result: LeaderAndIsr | ErrorCode) -> bool:
            return partition.handle_alter_partition_result(change, result, self.sim.now)

        self.alter_partition.submit(partition.topic_id, partition.index, change.sent, on_result)

    # -- the fetcher's actions (ReplicaFetcher._execute) -------------------------------------

    def execute(self, state: FetcherState, actions: list[FetcherAction]) -> None:
        replicas = self.followers
        for action in actions:
            try:
                if isinstance(action, TruncateTo | TruncateFullyAndStartAt):
                    self.sim.data.on_truncate(self, action.tp, action.offset)
                carry_out(replicas, action)
            except KafkaError as exc:
                state.action_failed(action, exc.code, self.sim.now)

    # -- requests served (leader side) ----------------------------------------------------------

    def _missing_code(self, topic: str, index: int) -> ErrorCode:
        known = self.image.topics.get(topic)
        if known is not None and index in known.partitions:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    def serve(self, kind: str, body: Body, respond: Callable[[Body | None], None]) -> None:
        """A request from a follower or a client; None answers "connection refused"
        (client APIs are closed until the broker is first unfenced)."""
        if not self.reconciled:
            respond(None)
            return
        if kind == "fetch":
            respond(self._serve_fetch(body))
        elif kind == "epochs":
            respond(self._serve_epochs(body))
        elif kind == "produce":
            self._serve_produce(body, respond)
        elif kind == "consume":
            respond(self._serve_consume(body))
        elif kind == "marker":
            self._serve_marker(body, respond)
        else:
            raise ValueError(kind)

    def _serve_fetch(self, body: Body) -> Body:
        now = self.sim.now
        responses = []
        for topic in body["topics"]:
            name = topic["topic"]
            partitions = []
            for p in topic["partitions"]:
                partition = self.partitions.get((name, p["partition"]))
                if partition is None:
                    partitions.append(
                        fetch_error(p["partition"], self._missing_code(name, p["partition"]))
                    )
                    continue
                partitions.append(
                    fetch_partition_response(
                        partition,
                        p,
                        replica_id=body["replica_id"],
                        max_bytes=p["partition_max_bytes"],
                        min_one=True,
                        now_ms=now,
                    )
                )
            responses.append({"topic": name, "partitions": partitions})
        return {"error_code": 0, "responses": responses}

    def _serve_epochs(self, body: Body) -> Body:
        topics = []
        for topic in body["topics"]:
            name = topic["topic"]
            partitions = [
                epoch_end_offset_response(
                    self.partitions.get((name, p["partition"])),
                    p,
                    self._missing_code(name, p["partition"]),
                )
                for p in topic["partitions"]
            ]
            topics.append({"topic": name, "partitions": partitions})
        return {"throttle_time_ms": 0, "topics": topics}

    def _serve_consume(self, body: Body) -> Body:
        tp = (body["topic"], body["partition"])
        partition = self.partitions.get(tp)
        request = {
            "partition": tp[1],
            "fetch_offset": body["fetch_offset"],
            "current_leader_epoch": body["current_leader_epoch"],
        }
        if partition is None:
            return {"entry": fetch_error(tp[1], self._missing_code(*tp)), "leader_epoch": -1}
        entry = fetch_partition_response(
            partition,
            request,
            replica_id=-1,
            max_bytes=2000,
            min_one=True,
            now_ms=self.sim.now,
            read_committed=body.get("read_committed", False),
        )
        return {"entry": entry, "leader_epoch": partition.leader_epoch}

    def _serve_produce(self, body: Body, respond: Callable[[Body | None], None]) -> None:
        """The produce handler for one partition with acks=all (handlers/produce.py)."""
        tp = (body["topic"], body["partition"])
        partition = self.partitions.get(tp)
        if partition is None:
            respond({"error_code": self._missing_code(*tp)})
            return
        try:
            partition.check_leader_epoch(-1)
            result = partition.append_from_client(
                memoryview(bytearray(body["records"])), required_acks=-1
            )
        except KafkaError as exc:
            respond({"error_code": exc.code})
            return
        self._answer_when_replicated(
            tp, partition, result.base_offset, result.last_offset + 1, respond
        )

    def _serve_marker(self, body: Body, respond: Callable[[Body | None], None]) -> None:
        """WriteTxnMarkers for one partition: the marker appended by the leader,
        answered once replicated (Kafka writes markers with acks=all)."""
        tp = (body["topic"], body["partition"])
        partition = self.partitions.get(tp)
        if partition is None:
            respond({"error_code": self._missing_code(*tp)})
            return
        try:
            offset = partition.append_marker(
                body["producer_id"],
                body["producer_epoch"],
                body["coordinator_epoch"],
                body["commit"],
            )
        except KafkaError as exc:
            respond({"error_code": exc.code})
            return
        self._answer_when_replicated(tp, partition, offset, offset + 1, respond)

    def _answer_when_replicated(
        self,
        tp: TopicPartition,
        partition: Partition,
        base_offset: int,
        end: int,
        respond: Callable[[Body | None], None],
    ) -> None:
        entry = {"error_code": 0, "base_offset": base_offset, "end": end}
        if partition.high_watermark >= end:
            respond(entry)
            return
        outcome = partition.check_enough_replicas(end)
        if outcome is not None:
            respond({**entry, "error_code": outcome})
            return
        answered = [False]

        def complete(code: ErrorCode) -> None:
            if answered[0]:
                return
            answered[0] = True
            if code == ErrorCode.NONE:
                # The watermark just passed the write: the checker sees it first.
                self.sim.data.observe(self, tp, partition)
            respond({**entry, "error_code": code})

        delayed = partition._delayed
        assert isinstance(delayed, SimDelayedProduce)
        delayed.add(end, complete)
        self.sim.proc_at(
            self.node,
            self.sim.now + self.sim.cluster.produce_timeout_ms,
            complete,
            ErrorCode.REQUEST_TIMED_OUT,
        )
