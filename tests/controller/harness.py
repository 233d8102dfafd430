"""A caller for the QuorumController in tests: it commits every result at once.

``Cluster.run(op, ...)`` calls the controller, "appends" the records at the next
log offsets, replays them into the image (through a MetadataDelta, kept as
``last_delta``) and returns the response, which is what the real node does
once Raft commits the batch.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from tests.controller.helpers import incarnation

from samsa.controller.controller_config import ControllerConfig
from samsa.controller.controller_result import ControllerResult
from samsa.controller.image.metadata_delta import MetadataDelta
from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.image.registrations import PartitionRegistration
from samsa.controller.quorum_controller import QuorumController


class Cluster:
    def __init__(self, config: ControllerConfig | None = None, seed: int = 7) -> None:
        self.image = MetadataImage()
        self.controller = QuorumController(
            self.image, config or ControllerConfig(), random.Random(seed)
        )
        self.now_ms = 1_000
        self.controller.activate(self.now_ms)
        self.last_result: ControllerResult | None = None
        self.last_delta: MetadataDelta | None = None

    @property
    def next_offset(self) -> int:
        return self.image.last_offset + 1

    def commit(self, result: ControllerResult) -> dict[str, Any] | None:
        self.last_result = result
        delta = MetadataDelta(self.image)
        for record in result.records:
            delta.replay(record)
        self.last_delta = delta
        return result.response

    def run(self, op: Callable[..., ControllerResult], *args: Any, **kwargs: Any) -> Any:
        return self.commit(op(*args, **kwargs))

    # ------------------------------------------------------------------ brokers
    def register(
        self, broker_id: int, *, rack: str | None = None, generation: int = 0
    ) -> dict[str, Any]:
        request = {
            "broker_id": broker_id,
            "cluster_id": "c",
            "incarnation_id": incarnation(broker_id, generation),
            "listeners": [
                {"name": "PLAINTEXT", "host": f"b{broker_id}", "port": 9092, "security_protocol": 0}
            ],
            "features": [],
            "rack": rack,
        }
        response = self.run(self.controller.register_broker, request, self.next_offset, self.now_ms)
        assert response is not None
        return response

    def heartbeat(
        self,
        broker_id: int,
        *,
        offset: int | None = None,
        want_fence: bool = False,
        want_shut_down: bool = False,
        epoch: int | None = None,
    ) -> dict[str, Any]:
        registration = self.image.brokers.get(broker_id)
        request = {
            "broker_id": broker_id,
            "broker_epoch": registration.epoch if epoch is None and registration else epoch,
            "current_metadata_offset": self.image.last_offset if offset is None else offset,
            "want_fence": want_fence,
            "want_shut_down": want_shut_down,
        }
        response = self.run(self.controller.broker_heartbeat, request, self.now_ms)
        assert response is not None
        return response

    def start_brokers(self, ids: Sequence[int], racks: Sequence[str] | None = None) -> None:
        """Register and unfence brokers."""
        for i, broker_id in enumerate(ids):
            self.register(broker_id, rack=None if racks is None else racks[i % len(racks)])
        for broker_id in ids:
            assert self.heartbeat(broker_id)["is_fenced"] is False

    def heartbeat_all(self) -> None:
        for broker_id, registration in sorted(self.image.brokers.items()):
            if not registration.fenced:
                self.heartbeat(broker_id)

    def advance(self, ms: int) -> None:
        self.now_ms += ms

    def poll(self) -> ControllerResult:
        result = self.controller.poll(self.now_ms)
        self.commit(result)
        return result

    # ------------------------------------------------------------------ topics
    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int = 3,
        configs: dict[str, str] | None = None,
        assignments: list[list[int]] | None = None,
    ) -> dict[str, Any]:
        request = {
            "topics": [
                {
                    "name": name,
                    "num_partitions": -1 if assignments else partitions,
                    "replication_factor": -1 if assignments else replication_factor,
                    "assignments": [
                        {"partition_index": i, "broker_ids": a}
                        for i, a in enumerate(assignments or [])
                    ],
                    "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()],
                }
            ],
            "timeout_ms": 1000,
            "validate_only": False,
        }
        response = self.run(self.controller.create_topics, request)
        return response["topics"][0]

    def partition(self, name: str, partition_id: int = 0) -> PartitionRegistration:
        registration = self.image.topics[name].partitions[partition_id]
        return registration

    def topic_id(self, name: str) -> bytes:
        return self.image.topics[name].topic_id

    def alter_partition(
        self,
        name: str,
        partition_id: int,
        new_isr: Sequence[int],
        *,
        broker_id: int | None = None,
        leader_epoch: int | None = None,
        partition_epoch: int | None = None,
        recovery: int = 0,
        epochs: dict[int, int] | None = None,
    ) -> dict[str, Any]:
        registration = self.partition(name, partition_id)
        leader = registration.leader if broker_id is None else broker_id
        request = {
            "broker_id": leader,
            "broker_epoch": self.image.brokers[leader].epoch,
            "topics": [
                {
                    "topic_id": self.topic_id(name),
                    "partitions": [
                        {
                            "partition_index": partition_id,
                            "leader_epoch": registration.leader_epoch
                            if leader_epoch is None
                            else leader_epoch,
                            "new_isr_with_epochs": [
                                {"broker_id": b, "broker_epoch": (epochs or {}).get(b, -1)}
                                for b in new_isr
                            ],
                            "leader_recovery_state": recovery,
                            "partition_epoch": registration.partition_epoch
                            if partition_epoch is None
                            else partition_epoch,
                        }
                    ],
                }
            ],
        }
        response = self.run(self.controller.alter_partition, request)
        return response
