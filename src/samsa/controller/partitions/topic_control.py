"""Topic lifecycle on the controller: CreateTopics, DeleteTopics, CreatePartitions.

The checks and messages are the single-node broker's (``server/topic_manager``:
topic name rules, INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR,
TOPIC_ALREADY_EXISTS, INVALID_CONFIG), extended the way Kafka's
``ReplicationControlManager`` does for a cluster:

* replicas are placed by the striped rack-aware placer over active brokers; a
  replication factor larger than the active broker count is
  INVALID_REPLICATION_FACTOR;
* manual assignments are honoured and checked: no empty list, every broker
  registered, no broker twice, one replication factor for all partitions, and
  partition indexes 0..n-1 (INVALID_REPLICA_ASSIGNMENT);
* a new partition's ISR is its active replicas, its leader the first of them.

Records per topic: ConfigRecords for the overrides, the TopicRecord, one
PartitionRecord per partition; all topics of a request go in one batch.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping
from typing import Any

from samsa.controller.config_control import ConfigControl
from samsa.controller.controller_config import ControllerConfig
from samsa.controller.controller_result import ControllerResult
from samsa.controller.image.metadata_image import RESOURCE_TOPIC, MetadataImage
from samsa.controller.partitions.partition_states import (
    PartitionState,
    check_partition_transition,
    partition_state,
)
from samsa.controller.partitions.placement import UsableBroker, place_replicas
from samsa.controller.partitions.topic_validation import (
    ZERO_UUID,
    new_topic_id,
    validate_manual_assignment,
    validate_topic_name,
)
from samsa.controller.pending import PendingChanges
from samsa.controller.steps import PARTITIONS_PER_STEP, Steps, run_through
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.metadata_records import MetadataRecord, make_record

log = logging.getLogger(__name__)


class TopicControl:
    """Topic creation and deletion over the committed image."""

    def __init__(
        self,
        image: MetadataImage,
        config: ControllerConfig,
        configs: ConfigControl,
        rng: random.Random,
    ) -> None:
        self.image = image
        self.config = config
        self.configs = configs
        self.rng = rng

    def _usable_brokers(self, pending: PendingChanges) -> list[UsableBroker]:
        brokers = []
        for broker_id in sorted(self.image.brokers):
            registration = pending.broker(broker_id)
            if registration is not None and registration.is_active:
                brokers.append(UsableBroker(broker_id, registration.rack))
        return brokers

    def _partition_records_in_steps(
        self, pending: PendingChanges, topic_id: bytes, first: int, placements: list[list[int]]
    ) -> Steps[list[MetadataRecord]]:
        records = []
        for offset, replicas in enumerate(placements):
            if offset and offset % PARTITIONS_PER_STEP == 0:
                yield
            isr = [r for r in replicas if pending.is_active(r)]
            partition_id = first + offset
            if not isr:
                raise KafkaError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"all brokers in the manual assignment of partition {partition_id} are "
                    "fenced or in controlled shutdown",
                )
            check_partition_transition(
                f"partition {partition_id}", PartitionState.NON_EXISTENT, PartitionState.NEW
            )
            records.append(
                make_record(
                    "PartitionRecord",
                    partition_id=partition_id,
                    topic_id=topic_id,
                    replicas=list(replicas),
                    isr=isr,
                    leader=isr[0],
                    leader_epoch=0,
                    partition_epoch=0,
                )
            )
        return records

    # ------------------------------------------------------------------ CreateTopics
    def create_topics(self, request: Mapping[str, Any]) -> ControllerResult:
        return run_through(self.create_topics_in_steps(request))

    def create_topics_in_steps(self, request: Mapping[str, Any]) -> Steps[ControllerResult]:
        """``create_topics`` a slice of partitions per step (see controller.steps):
        a thousand partitions' placement and records took the loop 20 ms quiet,
        50-60 ms on a loaded machine, in one piece."""
        pending = PendingChanges(self.image)
        results = []
        seen: set[str] = set()
        for entry in request["topics"]:
            name = entry["name"]
            if name in seen:
                results.append(
                    _topic_error(
                        name,
                        KafkaError(
                            ErrorCode.INVALID_REQUEST,
                            f"topic {name!r} appears more than once in the request",
                        ),
                    )
                )
                continue
            seen.add(name)
            try:
                results.append((yield from self._create_topic(pending, entry)))
            except KafkaError as exc:
                results.append(_topic_error(name, exc))
        records = [] if request.get("validate_only", False) else pending.records
        return ControllerResult(records, {"throttle_time_ms": 0, "topics": results})

    def _create_topic(
        self, pending: PendingChanges, entry: Mapping[str, Any]
    ) -> Steps[dict[str, Any]]:
        name = entry["name"]
        validate_topic_name(name)
        if pending.topic_id(name) is not None:
            raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {name!r} already exists")
        colliding = pending.colliding_topic(name)
        if colliding is not None:
            raise KafkaError(
                ErrorCode.INVALID_TOPIC_EXCEPTION,
                f"Topic '{name}' collides with existing topic: {colliding}",
            )
        assignments = entry.get("assignments") or []
        partitions = entry["num_partitions"]
        replication_factor = entry["replication_factor"]
        null_configs = [c["name"] for c in entry["configs"] if c["value"] is None]
        if null_configs:
            raise KafkaError(
                ErrorCode.INVALID_CONFIG,
                f"Null value not supported for topic configs: {','.join(null_configs)}",
            )
        if assignments and (partitions != -1 or replication_factor != -1):
            raise KafkaError(
                ErrorCode.INVALID_REQUEST,
                "Both numPartitions or replicationFactor and replicasAssignments were set. "
                "Both cannot be used at the same time.",
            )
        if assignments:
            placements = self._manual_placements(pending, entry)
        else:
            if partitions == -1:
                partitions = self.config.default_num_partitions
            if partitions <= 0:
                raise KafkaError(
                    ErrorCode.INVALID_PARTITIONS,
                    f"number of partitions must be > 0, got {partitions}",
                )
            if replication_factor == -1:
                replication_factor = self.config.default_replication_factor
            placements = place_replicas(
                self._usable_brokers(pending), partitions, replication_factor, self.rng
            )
        configs = {c["name"]: c["value"] for c in entry["configs"]}
        self.configs.validate_topic_configs(configs)
        topic_id = new_topic_id(self.rng, lambda t: t in self.image.topics_by_id)
        records = [
            make_record(
                "ConfigRecord",
                resource_type=RESOURCE_TOPIC,
                resource_name=name,
                name=key,
                value=value,
            )
            for key, value in sorted(configs.items())
        ]
        records.append(make_record("TopicRecord", name=name, topic_id=topic_id))
        records.extend(
            (yield from self._partition_records_in_steps(pending, topic_id, 0, placements))
        )
        yield from _extend_in_steps(pending, records)
        log.info(
            "creating topic %s with %d partition(s), replication factor %d",
            name,
            len(placements),
            len(placements[0]),
        )
        return {
            "name": name,
            "topic_id": topic_id,
            "error_code": 0,
            "error_message": None,
            "topic_config_error_code": 0,
            "num_partitions": len(placements),
            "replication_factor": len(placements[0]),
            "configs": self.configs.topic_config_entries(configs),
        }

    def _manual_placements(
        self, pending: PendingChanges, entry: Mapping[str, Any]
    ) -> list[list[int]]:
        if entry["num_partitions"] != -1:
            raise KafkaError(
                ErrorCode.INVALID_REQUEST, "both num_partitions and assignments were given"
            )
        if entry["replication_factor"] != -1:
            raise KafkaError(
                ErrorCode.INVALID_REQUEST, "both replication_factor and assignments were given"
            )
        by_index: dict[int, list[int]] = {}
        replication_factor: int | None = None
        for assignment in entry["assignments"]:
            index = assignment["partition_index"]
            if index in by_index:
                raise KafkaError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"found multiple manual partition assignments for partition {index}",
                )
            replicas = list(assignment["broker_ids"])
            validate_manual_assignment(replicas, pending.broker, replication_factor)
            replication_factor = len(replicas)
            by_index[index] = replicas
        if sorted(by_index) != list(range(len(by_index))):
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                "partitions should be a consecutive 0-based integer sequence",
            )
        return [by_index[i] for i in range(len(by_index))]

    # ------------------------------------------------------------------ DeleteTopics
    def delete_topics(self, request: Mapping[str, Any]) -> ControllerResult:
        """DeleteTopics by name (v0-5 ``topic_names``) or by name or id (v6+ ``topics``)."""
        if request.get("topics"):
            targets = [(t.get("name"), t.get("topic_id")) for t in request["topics"]]
        else:
            targets = [(name, None) for name in request.get("topic_names") or ()]
        pending = PendingChanges(self.image)
        responses = []
        seen: set[bytes] = set()
        for name, topic_id in targets:
            entry: dict[str, Any] = {
                "name": name,
                "topic_id": topic_id or ZERO_UUID,
                "error_code": 0,
                "error_message": None,
            }
            try:
                topic_id = self._delete_topic(pending, name, topic_id, seen)
                topic = self.image.topics_by_id[topic_id]
                entry["name"], entry["topic_id"] = topic.name, topic_id
            except KafkaError as exc:
                entry["error_code"] = int(exc.code)
                entry["error_message"] = str(exc)
            responses.append(entry)
        return ControllerResult(pending.records, {"throttle_time_ms": 0, "responses": responses})

    def _delete_topic(
        self, pending: PendingChanges, name: str | None, topic_id: bytes | None, seen: set[bytes]
    ) -> bytes:
        if not self.config.delete_topic_enable:
            raise KafkaError(ErrorCode.TOPIC_DELETION_DISABLED, "delete.topic.enable is false")
        if name is None and topic_id not in (None, ZERO_UUID):
            assert topic_id is not None
            topic = self.image.topics_by_id.get(topic_id)
            if topic is None:
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_ID, f"no topic with id {topic_id.hex()}")
        else:
            topic = self.image.topics.get(name or "")
            if topic is None:
                raise KafkaError(
                    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist"
                )
        if topic.topic_id in seen:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"topic {topic.name!r} is listed twice")
        seen.add(topic.topic_id)
        for partition_id, registration in topic.partitions.items():
            # Kafka's deletion path: a partition goes offline, then away.
            state = partition_state(registration)
            check_partition_transition(
                f"{topic.name}-{partition_id}", state, PartitionState.OFFLINE
            )
            check_partition_transition(
                f"{topic.name}-{partition_id}", PartitionState.OFFLINE, PartitionState.NON_EXISTENT
            )
        pending.append(make_record("RemoveTopicRecord", topic_id=topic.topic_id))
        log.info("deleting topic %s", topic.name)
        return topic.topic_id

    # ------------------------------------------------------------------ CreatePartitions
    def create_partitions(self, request: Mapping[str, Any]) -> ControllerResult:
        return run_through(self.create_partitions_in_steps(request))

    def create_partitions_in_steps(self, request: Mapping[str, Any]) -> Steps[ControllerResult]:
        """``create_partitions`` a slice of new partitions per step, as
        ``create_topics_in_steps``."""
        pending = PendingChanges(self.image)
        results = []
        seen: set[str] = set()
        for entry in request["topics"]:
            name = entry["name"]
            result: dict[str, Any] = {"name": name, "error_code": 0, "error_message": None}
            try:
                if name in seen:
                    raise KafkaError(
                        ErrorCode.INVALID_REQUEST,
                        f"topic {name!r} appears more than once in the request",
                    )
                seen.add(name)
                yield from self._create_partitions(pending, entry)
            except KafkaError as exc:
                result["error_code"] = int(exc.code)
                result["error_message"] = str(exc)
            results.append(result)
        records = [] if request.get("validate_only", False) else pending.records
        return ControllerResult(records, {"throttle_time_ms": 0, "results": results})

    def _create_partitions(self, pending: PendingChanges, entry: Mapping[str, Any]) -> Steps[None]:
        name, count = entry["name"], entry["count"]
        topic = self.image.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist")
        current = len(topic.partitions)
        if count <= current:
            raise KafkaError(
                ErrorCode.INVALID_PARTITIONS,
                f"topic {name!r} has {current} partitions; the new count {count} must be larger",
            )
        additional = count - current
        first = topic.partitions.get(0) or next(iter(topic.partitions.values()), None)
        replication_factor = len(first.replicas) if first is not None else 1
        assignments = entry.get("assignments")
        if assignments is not None:
            if len(assignments) != additional:
                raise KafkaError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"attempted to add {additional} additional partition(s), but only "
                    f"{len(assignments)} assignment(s) were specified",
                )
            placements = []
            for assignment in assignments:
                replicas = list(assignment["broker_ids"])
                validate_manual_assignment(replicas, pending.broker, replication_factor)
                placements.append(replicas)
        else:
            placements = place_replicas(
                self._usable_brokers(pending), additional, replication_factor, self.rng
            )
        records = yield from self._partition_records_in_steps(
            pending, topic.topic_id, current, placements
        )
        yield from _extend_in_steps(pending, records)
        log.info("adding %d partition(s) to topic %s", additional, name)


def _extend_in_steps(pending: PendingChanges, records: list[MetadataRecord]) -> Steps[None]:
    for start in range(0, len(records), PARTITIONS_PER_STEP):
        if start:
            yield
        pending.extend(records[start : start + PARTITIONS_PER_STEP])


def _topic_error(name: str, exc: KafkaError) -> dict[str, Any]:
    return {
        "name": name,
        "topic_id": ZERO_UUID,
        "error_code": int(exc.code),
        "error_message": str(exc),
        "topic_config_error_code": 0,
        "num_partitions": -1,
        "replication_factor": -1,
        "configs": None,
    }


__all__ = ["TopicControl"]
