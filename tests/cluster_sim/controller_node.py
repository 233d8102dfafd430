"""One controller process in the simulator: Raft + the metadata loader + the QuorumController.

Wired as ``samsa.server.node`` and ``samsa.server.controller_server`` wire the
real node, minus asyncio:

* the real ``MetadataLoader`` (samsa.server.metadata.loader) replays committed
  entries into the node's ``MetadataImage`` on every ``HighWatermarkAdvanced``,
  loads snapshots on ``LoadSnapshot`` and writes them (``create_snapshot`` then
  ``delete_before_snapshot``, as ``RaftDriver.create_snapshot`` does);
* the real ``QuorumController`` computes every write; this class is the
  ``ControllerServer`` contract re-stated synchronously: a node is active when it
  leads the quorum and has applied the entry that opened its epoch
  (``activate(now)`` then); writes are serialised (one in flight: appended, then
  answered once the loader applied its last offset, or NOT_CONTROLLER if the
  leadership moved meanwhile); ``poll(now)`` runs every ``controller_poll_ms``
  as a write of its own; a non-active node answers with the real
  ``not_controller_response``.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from samsa.controller.controller_config import ControllerConfig
from samsa.controller.controller_result import ControllerResult
from samsa.controller.image.metadata_delta import MetadataDelta
from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.quorum_controller import QuorumController
from samsa.protocol.metadata_records import encode_metadata_record
from samsa.raft import NotLeaderError
from samsa.server.controller_server import (
    ALTER_PARTITION,
    BROKER_HEARTBEAT,
    BROKER_REGISTRATION,
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    INCREMENTAL_ALTER_CONFIGS,
    not_controller_response,
)
from samsa.server.metadata.loader import MetadataLoader

if TYPE_CHECKING:
    from tests.cluster_sim.sim import ClusterSimulation
    from tests.raft.sim import SimNode

Body = dict[str, Any]
Respond = Callable[[Body], None]
POLL = -1
"""The pseudo api key of the controller's timed work (a write like the others)."""


@dataclass
class _Write:
    api_key: int
    body: Body
    respond: Respond | None


@dataclass
class _InFlight:
    last_offset: int
    epoch: int
    write: _Write
    response: Body | None


class ControllerProcess:
    """One incarnation of a controller node (see the module doc)."""

    def __init__(self, sim: ClusterSimulation, node: SimNode) -> None:
        self.sim = sim
        self.node = node
        self.node_id = node.node_id
        self.incarnation = node.incarnation
        scenario = sim.cluster
        self.loader = MetadataLoader(
            node.log, snapshot_bytes=scenario.snapshot_bytes, snapshot_interval_ms=0
        )
        self.loader._create_snapshot = self._create_snapshot
        config = ControllerConfig(
            broker_session_timeout_ms=scenario.session_timeout_ms,
            default_replication_factor=3,
        )
        self.controller = QuorumController(
            self.loader.image,
            config,
            random.Random(scenario.seed * 31 + self.node_id * 7 + self.incarnation),
        )
        self.loader.add_publisher(self)
        self.epoch_start: int | None = None
        self.pending_epoch: int | None = None
        self.active = False
        self.queue: deque[_Write] = deque()
        self.inflight: _InFlight | None = None
        self.poll_scheduled = False
        self.pumping = False

    @property
    def image(self) -> MetadataImage:
        return self.loader.image

    def _create_snapshot(self, end_offset: int, data: bytes) -> None:
        self.node.machine.create_snapshot(end_offset, data)
        self.node.machine.delete_before_snapshot()

    # -- publisher (the loader calls these) -------------------------------------------

    def on_delta(self, delta: MetadataDelta) -> None:
        pass

    def on_image(self, image: MetadataImage) -> None:
        pass

    def on_leader_change(self, leader_id: int | None, epoch: int) -> None:
        if leader_id == self.node_id:
            self.epoch_start = self.node.log.end_offset - 1
            self.pending_epoch = epoch
        else:
            self._deactivate()

    # -- activation ---------------------------------------------------------------------

    def is_active(self) -> bool:
        return self.active and self.node.machine.leader_id == self.node_id

    def _deactivate(self) -> None:
        self.active = False
        self.epoch_start = None
        self.pending_epoch = None
        inflight, self.inflight = self.inflight, None
        if inflight is not None:
            self._answer(inflight.write, None)
        self._pump()

    def after_step(self) -> None:
        """Called after every Raft step of this node: activation, finished writes."""
        machine = self.node.machine
        if self.active and machine.leader_id != self.node_id:
            self._deactivate()
        inflight = self.inflight
        if inflight is not None:
            if machine.leader_id != self.node_id or machine.epoch != inflight.epoch:
                self.inflight = None
                self._answer(inflight.write, None)
            elif self.loader.applied_offset > inflight.last_offset:
                self.inflight = None
                self._answer(inflight.write, inflight.response)
        start = self.epoch_start
        if (
            start is not None
            and not self.active
            and self.loader.applied_offset > start
            and machine.leader_id == self.node_id
            and machine.epoch == self.pending_epoch
        ):
            self.controller.activate(self.sim.now)
            self.active = True
            self.sim.meta.on_activate(self.node_id, machine.epoch)
            if not self.poll_scheduled:
                self.poll_scheduled = True
                self.sim.proc_at(
                    self.node, self.sim.now + self.sim.cluster.controller_poll_ms, self._poll_tick
                )
        self._pump()

    # -- requests -----------------------------------------------------------------------

    def handle(self, api_key: int, body: Body, respond: Respond) -> None:
        """A controller request arrived (from a broker or an admin client)."""
        if not self.is_active():
            respond(not_controller_response(api_key, body))
            return
        self.queue.append(_Write(api_key, body, respond))
        self._pump()

    def _poll_tick(self) -> None:
        self.sim.proc_at(
            self.node, self.sim.now + self.sim.cluster.controller_poll_ms, self._poll_tick
        )
        if self.is_active() and not any(w.api_key == POLL for w in self.queue):
            self.queue.append(_Write(POLL, {}, None))
            self._pump()

    def _answer(self, write: _Write, response: Body | None) -> None:
        if write.respond is None:
            return
        if response is None:
            response = not_controller_response(write.api_key, write.body)
        else:
            self.sim.meta.on_answer(self, write.api_key, write.body, response)
        write.respond(response)

    def _pump(self) -> None:
        """Run queued writes one at a time (ControllerServer's write lock).  Not
        re-entered: an append runs Raft actions, which call ``after_step``."""
        if self.pumping:
            return
        self.pumping = True
        try:
            while self.inflight is None and self.queue:
                write = self.queue.popleft()
                if not self.is_active():
                    self._answer(write, None)
                    continue
                result = self._compute(write)
                if not result.records:
                    self._answer(write, result.response or {})
                    continue
                self._append(write, result)
                if self.sim.processes.get(self.node_id) is not self:
                    return
        finally:
            self.pumping = False

    def _compute(self, write: _Write) -> ControllerResult:
        controller, now, body = self.controller, self.sim.now, write.body
        api_key = write.api_key
        if api_key == POLL:
            return controller.poll(now)
        if api_key == CREATE_TOPICS:
            return controller.create_topics(body)
        if api_key == DELETE_TOPICS:
            result = controller.delete_topics(body)
            self.sim.meta.on_delete_intent(result.records)
            return result
        if api_key == CREATE_PARTITIONS:
            return controller.create_partitions(body)
        if api_key == INCREMENTAL_ALTER_CONFIGS:
            return controller.incremental_alter_configs(body)
        if api_key == BROKER_REGISTRATION:
            return controller.register_broker(body, self.node.log.end_offset, now)
        if api_key == BROKER_HEARTBEAT:
            return controller.broker_heartbeat(body, now)
        if api_key == ALTER_PARTITION:
            return controller.alter_partition(body)
        raise ValueError(f"api key {api_key} is not simulated")

    def _append(self, write: _Write, result: ControllerResult) -> None:
        payloads = [encode_metadata_record(record) for record in result.records]
        appended: list[int] = []
        machine_epoch = self.node.machine.epoch

        def append(node: SimNode) -> list[Any]:
            try:
                last, actions = node.machine.append(self.sim.now, payloads)
            except NotLeaderError:
                return []
            appended.append(last)
            self.sim.meta.on_append(node.machine.epoch, last - len(payloads) + 1, payloads)
            return actions

        self.sim.call_machine(self.node, append, f"controller append {len(payloads)}")
        if self.sim.processes.get(self.node_id) is not self:
            return  # crashed while executing the append's actions
        if not appended:
            self._deactivate()
            self._answer(write, None)
            return
        self.inflight = _InFlight(appended[0], machine_epoch, write, result.response or {})
