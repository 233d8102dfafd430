"""A deterministic simulation of a whole Samsa cluster, checked at every step.

The metadata quorum is the Raft simulator of tests/raft/sim.py, reused whole:
its event queue, network (loss, duplication, delay, reordering, partitions),
faults (crash-restart with or without losing unflushed writes, crashes in the
middle of an action list, pauses) and its Raft safety checks.  Controllers are
its voters, brokers its observers.  Above it runs the cluster:

* each controller: the real ``MetadataLoader`` and ``QuorumController`` wired as
  the real node wires them (controller_node.py);
* each broker: the real loader, ``Partition``s on in-memory logs, fetchers,
  AlterPartition, registration and heartbeats (broker_node.py);
* clients: admin (CreateTopics, DeleteTopics, CreatePartitions,
  IncrementalAlterConfigs through the controller, retried on NOT_CONTROLLER),
  producers writing ``acks=all`` to the ``data`` topic (RF 3,
  min.insync.replicas 2) through whoever leads in some broker's metadata, and
  consumers reading below the high watermark.

Faults stop at ``fault_ms``; then the cluster must converge (one active
controller, every image equal, every broker unfenced, every data partition
fully in sync) within a bound, and the final checks run.  The checks of every
step are in checks.py and the Raft simulator.

Replay one seed: ``.venv/bin/python -m tests.cluster_sim.sim --seed N [--trace]``.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.cluster_sim.broker_node import BrokerDisk, BrokerProcess
from tests.cluster_sim.checks import DATA_TOPIC, DataChecker, MetadataChecker
from tests.cluster_sim.controller_node import ControllerProcess
from tests.cluster_sim.scenario import ClusterScenario
from tests.cluster_sim.transactions import TransactionWorkload
from tests.raft.sim import SimNode, Simulation, SimulationFailure

from samsa.controller.image.metadata_image import MetadataImage
from samsa.errors import ErrorCode
from samsa.protocol.batches.record_batch import iter_batches
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.raft import (
    Action,
    LeaderChanged,
    LoadSnapshot,
)
from samsa.replication.partition import Partition, PartitionRole
from samsa.server.controller_server import (
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    INCREMENTAL_ALTER_CONFIGS,
)

__all__ = ["ClusterSimulation", "SimulationFailure", "run_seed"]

CLIENT = 0
"""The node id of every client (always up, on the majority side of a partition)."""
ADMIN_TOPICS = ("a0", "a1", "a2", "a3")
CONTROLLER_ATTEMPTS = 5
CONTROLLER_BACKOFF_MS = 20
WARMUP_MS = 600

Body = dict[str, Any]
Process = ControllerProcess | BrokerProcess


@dataclass
class _Consumer:
    position: int = 0
    epoch: int = -1
    inflight: bool = False


@dataclass
class _Call:
    done: bool = False


@dataclass
class Stats:
    produced: int = 0
    acked: int = 0
    produce_errors: dict[str, int] = field(default_factory=dict)
    consumed_batches: int = 0
    admin_ok: int = 0
    admin_failed: int = 0

    def error(self, name: str) -> None:
        self.produce_errors[name] = self.produce_errors.get(name, 0) + 1


def _not_controller(response: Body) -> bool:
    """Whether an answer (in any controller API's shape) says NOT_CONTROLLER."""
    code = ErrorCode.NOT_CONTROLLER
    if response.get("error_code") == code:
        return True
    for key in ("topics", "responses", "results"):
        for item in response.get(key) or ():
            if isinstance(item, dict) and item.get("error_code") == code:
                return True
    return False


class ClusterSimulation(Simulation):
    """Runs one ``ClusterScenario``; ``run()`` raises ``SimulationFailure`` on any violation."""

    def __init__(self, cluster: ClusterScenario, *, trace: bool = False) -> None:
        self.cluster = cluster
        self.processes: dict[int, Process] = {}
        super().__init__(cluster.raft, trace=trace)
        self.controller_ids = list(range(1, cluster.controllers + 1))
        self.broker_ids = [cluster.controllers + i for i in range(1, cluster.brokers + 1)]
        self.disks = {b: BrokerDisk() for b in self.broker_ids}
        self.meta = MetadataChecker(self)
        self.data = DataChecker(self)
        self.stats = Stats()
        self.next_batch_id = 1
        self.data_topic_created = False
        self.consumers: dict[tuple[str, int], _Consumer] = {}
        self.txn = TransactionWorkload(self) if cluster.transactions else None
        for node in self.nodes.values():
            self._new_process(node)

    # -- failure and trace -------------------------------------------------------------

    def fail(self, message: str) -> None:
        raise SimulationFailure(
            f"seed {self.cluster.seed} at {self.now} ms: {message}\n"
            f"replay: .venv/bin/python -m tests.cluster_sim.sim --seed {self.cluster.seed} --trace"
        )

    # -- processes ------------------------------------------------------------------------

    def _new_process(self, node: SimNode) -> Process:
        process: Process
        if node.node_id in self.disks:
            process = BrokerProcess(self, node, self.disks[node.node_id])
        else:
            process = ControllerProcess(self, node)
        self.processes[node.node_id] = process
        return process

    def _current(self, node: SimNode) -> Process | None:
        process = self.processes.get(node.node_id)
        if process is None or not node.alive or process.incarnation != node.incarnation:
            return None
        return process

    def _after(self, node: SimNode) -> None:
        """After anything ran on ``node``: the controller's bookkeeping, the data checks."""
        process = self._current(node)
        if isinstance(process, ControllerProcess):
            process.after_step()
        elif isinstance(process, BrokerProcess):
            self.data.observe_all(process)

    def proc_at(
        self, node: SimNode, time_ms: int, handler: Callable[..., None], *args: Any
    ) -> None:
        """Run ``handler`` at ``time_ms`` in the node's current incarnation (deferred
        while it is paused, dropped if it crashed)."""
        self.at(time_ms, self._proc_event, node, node.incarnation, handler, args)

    def _proc_event(
        self, node: SimNode, incarnation: int, handler: Callable[..., None], args: tuple[Any, ...]
    ) -> None:
        if not node.alive or node.incarnation != incarnation:
            return
        if node.paused_until > self.now:
            self.at(node.paused_until, self._proc_event, node, incarnation, handler, args)
            return
        handler(*args)
        self._after(node)

    def call_machine(self, node: SimNode, call: Callable[[SimNode], list[Any]], what: str) -> None:
        self._call(node, call, what)

    # -- Raft hooks (the quorum simulator's state machine, replaced) -----------------------

    def _call(
        self,
        node: SimNode,
        call: Callable[[SimNode], list[Action]],
        what: str,
        incarnation: int | None = None,
    ) -> None:
        super()._call(node, call, what, incarnation)
        self._after(node)

    def _crash_mid_actions(self) -> bool:
        """No crash mid-actions before the warm-up is over."""
        return self.now >= WARMUP_MS and super()._crash_mid_actions()

    def _leader_changed(self, node: SimNode, action: LeaderChanged) -> None:
        """The quorum simulator's check, then the loader publishes the change."""
        super()._leader_changed(node, action)
        process = self._current(node)
        if process is not None:
            process.loader.handle_leader_change(action.leader_id, action.epoch)

    def _apply(self, node: SimNode) -> None:
        process = self._current(node)
        if process is None:
            return
        process.loader.handle_commit(node.reported_hw)
        node.applied = process.loader.applied_offset
        self.meta.check_image(node.node_id, process.image, node.applied)

    def _load_snapshot(self, node: SimNode, action: LoadSnapshot) -> None:
        process = self._current(node)
        snapshot = node.log.load_snapshot(action.snapshot_id)
        if snapshot is None:
            self.fail(f"node {node.node_id} told to load missing snapshot {action.snapshot_id}")
            return
        if process is None:
            return
        process.loader.handle_load_snapshot(snapshot)
        node.applied = node.last_snapshot = action.snapshot_id.offset
        self.meta.check_image(node.node_id, process.image, node.applied)

    def _chaos(self) -> None:
        """The quorum simulator's faults, from ``WARMUP_MS`` on: the data topic gets
        created and the brokers unfenced first, so every seed moves data."""
        if self.now < WARMUP_MS:
            self.at(self.now + self.scenario.chaos_every_ms, self._chaos)
            return
        super()._chaos()

    def _crash(self, node: SimNode) -> None:
        super()._crash(node)
        self.processes.pop(node.node_id, None)

    def _start_restarted(self, node: SimNode) -> None:
        """A new process of the node's role first, so the machine's start-up
        actions reach its loader; a broker then registers again."""
        process = self._new_process(node)
        super()._start_restarted(node)
        if isinstance(process, BrokerProcess) and self._current(node) is process:
            process.start()

    # -- the network for everything above Raft ------------------------------------------

    def _post(
        self, source: int, destination: int, handler: Callable[..., None], *args: Any
    ) -> None:
        """One message: lost, duplicated and delayed like Raft's."""
        if self._lost():
            return
        copies = 2 if self.faults_active and self.rng.random() < self.scenario.duplicate else 1
        for _ in range(copies):
            self.at(self.now + self._delay(), self._deliver, source, destination, handler, args)

    def _deliver(
        self, source: int, destination: int, handler: Callable[..., None], args: tuple[Any, ...]
    ) -> None:
        if not self._connected(source, destination):
            return
        if destination == CLIENT:
            handler(*args)
            return
        node = self.nodes[destination]
        if not node.alive:
            return
        if node.paused_until > self.now:
            self.at(node.paused_until, self._deliver, source, destination, handler, args)
            return
        handler(*args)
        self._after(node)

    def _request(
        self,
        source: int,
        destination: int,
        serve: Callable[[Callable[[Body | None], None]], None],
        on_done: Callable[[Body | None], None],
        timeout_ms: int,
    ) -> None:
        """A request and its answer; ``on_done(None)`` once if none comes in time
        (or the destination refused it), and never for a crashed sender."""
        call = _Call()
        sender = self.processes.get(source) if source != CLIENT else None

        def finish(response: Body | None) -> None:
            if call.done:
                return
            if source != CLIENT and self.processes.get(source) is not sender:
                return
            call.done = True
            on_done(response)

        def serve_here() -> None:
            serve(lambda response: self._post(destination, source, finish, response))

        if source == CLIENT:
            self.at(self.now + timeout_ms, finish, None)
        else:
            self.proc_at(self.nodes[source], self.now + timeout_ms, finish, None)
        self._post(source, destination, serve_here)

    def broker_call(
        self,
        source: int,
        destination: int,
        kind: str,
        body: Body,
        on_done: Callable[[Body | None], None],
        timeout_ms: int | None = None,
    ) -> None:
        def serve(respond: Callable[[Body | None], None]) -> None:
            process = self.processes.get(destination)
            if isinstance(process, BrokerProcess):
                process.serve(kind, body, respond)

        timeout = self.cluster.request_timeout_ms if timeout_ms is None else timeout_ms
        self._request(source, destination, serve, on_done, timeout)

    def controller_call(
        self,
        source: int,
        api_key: int,
        body: Body,
        on_done: Callable[[Body | None], None],
        leader_hint: int | None = None,
    ) -> None:
        """ControllerLink: try the known Raft leader (else any controller), retry on
        NOT_CONTROLLER or silence a few times, then give up with ``on_done(None)``."""

        def target(hint: int | None) -> int:
            if hint in self.controller_ids:
                assert hint is not None
                return hint
            return self.rng.choice(self.controller_ids)

        def attempt(number: int, destination: int) -> None:
            def serve(respond: Callable[[Body | None], None]) -> None:
                process = self.processes.get(destination)
                if isinstance(process, ControllerProcess):
                    process.handle(api_key, body, respond)

            def done(response: Body | None) -> None:
                if response is None or _not_controller(response):
                    if number + 1 >= CONTROLLER_ATTEMPTS:
                        on_done(None)
                        return
                    process = self.processes.get(source) if source != CLIENT else None
                    if process is None:
                        process = self._some_broker()
                    hint = None if process is None else process.node.machine.leader_id
                    retry_at = self.now + CONTROLLER_BACKOFF_MS
                    if source == CLIENT:
                        self.at(retry_at, attempt, number + 1, target(hint))
                    else:
                        self.proc_at(
                            self.nodes[source], retry_at, attempt, number + 1, target(hint)
                        )
                    return
                on_done(response)

            self._request(source, destination, serve, done, self.cluster.request_timeout_ms)

        attempt(0, target(leader_hint))

    # -- clients ------------------------------------------------------------------------------

    def _some_broker(self) -> BrokerProcess | None:
        brokers = [b for b in self.broker_ids if isinstance(self.processes.get(b), BrokerProcess)]
        if not brokers:
            return None
        process = self.processes[self.rng.choice(brokers)]
        assert isinstance(process, BrokerProcess)
        return process

    def _metadata_view(self) -> MetadataImage | None:
        """Some broker's image (what a Metadata request to it would say)."""
        process = self._some_broker()
        return None if process is None else process.image

    def _client_controller_call(
        self, api_key: int, body: Body, on_done: Callable[[Body | None], None]
    ) -> None:
        """An admin request, sent where some broker believes the controller is (the
        broker would forward it there)."""
        process = self._some_broker()
        hint = None if process is None else process.node.machine.leader_id
        self.controller_call(CLIENT, api_key, body, on_done, hint)

    def _create_data_topic(self) -> None:
        if self.data_topic_created:
            return
        configs = [{"name": "min.insync.replicas", "value": "2"}]
        if self.cluster.unclean_leader_election:
            configs.append({"name": "unclean.leader.election.enable", "value": "true"})
        body = {
            "topics": [
                {
                    "name": DATA_TOPIC,
                    "num_partitions": self.cluster.data_partitions,
                    "replication_factor": 3,
                    "assignments": [],
                    "configs": configs,
                }
            ],
            "timeout_ms": 1000,
            "validate_only": False,
        }

        def done(response: Body | None) -> None:
            if response is not None and response["topics"][0]["error_code"] in (
                ErrorCode.NONE,
                ErrorCode.TOPIC_ALREADY_EXISTS,
            ):
                self.data_topic_created = True
            else:
                self.at(self.now + 50, self._create_data_topic)

        self._client_controller_call(CREATE_TOPICS, body, done)

    def _admin(self) -> None:
        if not self.faults_active:
            return
        self.at(self.now + self.cluster.admin_every_ms, self._admin)
        rng = self.rng
        name = rng.choice(ADMIN_TOPICS)
        op = rng.choice(("create", "create", "delete", "partitions", "configs"))
        body: Body
        if op == "create":
            api = CREATE_TOPICS
            body = {
                "topics": [
                    {
                        "name": name,
                        "num_partitions": rng.randint(1, 3),
                        "replication_factor": rng.randint(1, 3),
                        "assignments": [],
                        "configs": [],
                    }
                ],
                "timeout_ms": 1000,
                "validate_only": False,
            }
        elif op == "delete":
            api = DELETE_TOPICS
            body = {"topic_names": [name], "timeout_ms": 1000}
        elif op == "partitions":
            api = CREATE_PARTITIONS
            body = {
                "topics": [{"name": name, "count": rng.randint(2, 5), "assignments": None}],
                "timeout_ms": 1000,
                "validate_only": False,
            }
        else:
            api = INCREMENTAL_ALTER_CONFIGS
            delete = rng.random() < 0.3
            body = {
                "resources": [
                    {
                        "resource_type": 2,
                        "resource_name": name,
                        "configs": [
                            {
                                "name": "retention.ms",
                                "config_operation": 1 if delete else 0,
                                "value": None if delete else str(rng.randint(1000, 9999)),
                            }
                        ],
                    }
                ],
                "validate_only": False,
            }

        def done(response: Body | None) -> None:
            if response is None:
                self.stats.admin_failed += 1
            else:
                self.stats.admin_ok += 1

        self._client_controller_call(api, body, done)

    def _produce(self) -> None:
        if not self.faults_active:
            return
        self.at(self.now + self.cluster.produce_every_ms, self._produce)
        image = self._metadata_view()
        topic = None if image is None else image.topics.get(DATA_TOPIC)
        if topic is None:
            return
        if not topic.partitions:
            return  # a topic whose partitions are not applied yet
        index = self.rng.choice(sorted(topic.partitions))
        registration = topic.partitions[index]
        if registration.leader < 0:
            return
        batch_id = self.next_batch_id
        self.next_batch_id += 1
        builder = RecordBatchBuilder()
        for _ in range(self.cluster.records_per_batch):
            builder.append(batch_id, None, b"v")
        body = {"topic": DATA_TOPIC, "partition": index, "records": bytes(builder.build())}
        self.stats.produced += 1
        tp = (DATA_TOPIC, index)

        def done(response: Body | None) -> None:
            if response is None:
                self.stats.error("NO_ANSWER")
            elif response["error_code"] != ErrorCode.NONE:
                self.stats.error(ErrorCode(response["error_code"]).name)
            else:
                self.stats.acked += 1
                self.data.on_ack(tp, response["base_offset"], response["end"], batch_id)

        self.broker_call(
            CLIENT,
            registration.leader,
            "produce",
            body,
            done,
            self.cluster.produce_timeout_ms + 100,
        )

    def _consume(self) -> None:
        if not self.faults_active:
            return
        self.at(self.now + self.cluster.consume_every_ms, self._consume)
        image = self._metadata_view()
        topic = None if image is None else image.topics.get(DATA_TOPIC)
        if topic is None:
            return
        if not topic.partitions:
            return
        index = self.rng.choice(sorted(topic.partitions))
        registration = topic.partitions.get(index)
        tp = (DATA_TOPIC, index)
        consumer = self.consumers.setdefault(tp, _Consumer())
        if registration is None or registration.leader < 0 or consumer.inflight:
            return
        if registration.leader_epoch < consumer.epoch:
            return  # older metadata than the consumer has seen: ignored (KIP-320)
        consumer.epoch = registration.leader_epoch
        consumer.inflight = True
        body = {
            "topic": DATA_TOPIC,
            "partition": index,
            "fetch_offset": consumer.position,
            "current_leader_epoch": consumer.epoch,
        }

        def done(response: Body | None) -> None:
            consumer.inflight = False
            if response is None or response["entry"]["error_code"] != ErrorCode.NONE:
                return
            entry = response["entry"]
            batches = [
                (h.base_offset, h.next_offset, h.base_timestamp)
                for _, h in iter_batches(entry["records"])
                if h.next_offset > consumer.position
            ]
            self.data.on_consume(tp, batches, entry["high_watermark"], response["leader_epoch"])
            self.stats.consumed_batches += len(batches)
            if batches:
                consumer.position = batches[-1][1]

        self.broker_call(CLIENT, registration.leader, "consume", body, done)

    # -- the run ---------------------------------------------------------------------------------

    def run(self) -> ClusterSimulation:
        cluster = self.cluster
        for broker_id in self.broker_ids:
            process = self.processes[broker_id]
            assert isinstance(process, BrokerProcess)
            self.at(0, process.start)
        self.at(1, self._create_data_topic)
        self.at(cluster.admin_every_ms, self._admin)
        self.at(cluster.produce_every_ms, self._produce)
        self.at(cluster.consume_every_ms, self._consume)
        if self.txn is not None:
            self.txn.start()
        super().run()
        return self

    def _converged(self) -> bool:
        leaders = self._leaders()
        if len(leaders) != 1:
            return False
        end = leaders[0].log.end_offset
        for node in self.nodes.values():
            if not node.alive or node.machine.high_watermark != end or node.applied != end:
                return False
        active = [
            p for p in self.processes.values() if isinstance(p, ControllerProcess) and p.is_active()
        ]
        if len(active) != 1 or active[0].inflight is not None or active[0].queue:
            return False
        if self.txn is not None and not self.txn.settled():
            return False
        image = active[0].image
        brokers: dict[int, BrokerProcess] = {}
        for broker_id in self.broker_ids:
            process = self.processes.get(broker_id)
            registration = image.brokers.get(broker_id)
            if (
                not isinstance(process, BrokerProcess)
                or not process.reconciled
                or process.state != "RUNNING"
                or registration is None
                or not registration.is_active
            ):
                return False
            brokers[broker_id] = process
        topic = image.topics.get(DATA_TOPIC)
        if topic is None:
            return False
        replicas: dict[tuple[str, int], list[Partition]] = {}
        leaders: dict[int, Partition] = {}
        for index, registration in sorted(topic.partitions.items()):
            tp = (DATA_TOPIC, index)
            if registration.leader < 0 or set(registration.isr) != set(registration.replicas):
                return False
            leader = brokers[registration.leader].partitions.get(tp)
            if leader is None or leader.role is not PartitionRole.LEADER:
                return False
            leaders[index] = leader
            end_offset = leader.log_end_offset
            partitions = []
            for replica in registration.replicas:
                partition = brokers[replica].partitions.get(tp)
                if (
                    partition is None
                    or partition.log_end_offset != end_offset
                    or partition.high_watermark != end_offset
                ):
                    return False
                partitions.append(partition)
            replicas[tp] = partitions
        self.meta.check_converged(
            {node_id: process.image for node_id, process in sorted(self.processes.items())}, end
        )
        self.data.check_converged(replicas)
        if self.txn is not None:
            self.txn.check_converged(leaders)
        return True

    def _describe(self) -> str:
        parts = [super()._describe()]
        for node_id, process in sorted(self.processes.items()):
            if isinstance(process, ControllerProcess):
                parts.append(f"c{node_id}[active={process.is_active()}]")
            else:
                roles = ",".join(
                    f"{tp[1]}:{p.role.value[0]}e{p.leader_epoch}hw{p.high_watermark}"
                    f"leo{p.log_end_offset}"
                    for tp, p in sorted(process.partitions.items())
                    if tp[0] == DATA_TOPIC
                )
                registration = process.image.brokers.get(node_id)
                fenced = registration is None or registration.fenced
                parts.append(
                    f"b{node_id}[{process.state} fenced={fenced} reconciled={process.reconciled} "
                    f"{roles}]"
                )
        data = self._data_summary()
        return " ".join(parts) + f" | {data}"

    def _data_summary(self) -> str:
        image = self._metadata_view()
        topic = None if image is None else image.topics.get(DATA_TOPIC)
        if topic is None:
            return "no data topic"
        return " ".join(f"{i}:{r!r}" for i, r in sorted(topic.partitions.items()))

    def summary(self) -> str:
        s = self.stats
        return (
            f"{self.steps} steps, {len(self.checker.committed)} metadata entries, "
            f"{self.meta.activations} activations, {s.acked}/{s.produced} acked, "
            f"{s.consumed_batches} batches consumed, {self.data.elections} data elections, "
            f"{self.data.truncations} truncations, {self.data.hw_steps_back} consumer hw steps back, "
            f"admin {s.admin_ok} ok {s.admin_failed} failed, produce errors {s.produce_errors}, "
            f"partial writes {self.meta.partial_writes()}, "
            f"images applied inside a write {self.meta.split_applies}"
            + ("" if self.txn is None else f", {self.txn.summary()}")
        )


def run_seed(seed: int, *, trace: bool = False, fault_ms: int = 3000) -> ClusterSimulation:
    """Run one seed; raises ``SimulationFailure`` if any check fails."""
    return ClusterSimulation(ClusterScenario.from_seed(seed, fault_ms=fault_ms), trace=trace).run()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Replay cluster simulator seeds.")
    parser.add_argument("--seed", type=int, required=True, help="first seed")
    parser.add_argument("--count", type=int, default=1, help="how many seeds from --seed")
    parser.add_argument("--fault-ms", type=int, default=3000, help="simulated ms with faults")
    parser.add_argument("--trace", action="store_true", help="print the event trace")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    failures = 0
    for seed in range(args.seed, args.seed + args.count):
        scenario = ClusterScenario.from_seed(seed, fault_ms=args.fault_ms)
        simulation = ClusterSimulation(scenario, trace=args.trace)
        try:
            simulation.run()
            status = f"ok ({simulation.summary()})"
        except SimulationFailure as failure:
            failures += 1
            status = f"FAILED: {failure}\n  {simulation.summary()}"
        if args.trace and simulation.trace is not None:
            print("\n".join(simulation.trace))
        print(f"seed {seed}: {scenario}\n  {status}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
