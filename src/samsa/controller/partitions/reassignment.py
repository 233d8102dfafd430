"""Partition reassignment: AlterPartitionReassignments and ListPartitionReassignments.

Kafka's flow (KIP-455).  A reassignment to target replicas T of a partition with
replicas R writes ``replicas = T + (R - T)``, ``adding = T - R``,
``removing = R - T``.  The new replicas then fetch from the leader, and as the
leader's AlterPartition requests bring them into the ISR the partition change
builder completes the move once every target replica is in sync: the removed
replicas leave the replicas and the ISR, the lists empty, and if the leader was
removed the first in-sync target replica takes over (the reassigned-leader
selector).  A null replica list cancels: the adding replicas are dropped and
the original assignment comes back (unclean only if the topic allows it).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from samsa.controller.config_control import ConfigControl
from samsa.controller.controller_result import ControllerResult
from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.image.registrations import PartitionRegistration
from samsa.controller.partitions.partition_change import Election, build_partition_change
from samsa.controller.partitions.topic_validation import validate_manual_assignment
from samsa.controller.pending import PendingChanges
from samsa.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)


def reassignment_targets(
    current: tuple[int, ...], target: list[int]
) -> tuple[list[int], list[int], list[int]]:
    """(replicas, adding, removing) for moving ``current`` to ``target`` (Kafka's
    ``PartitionReassignmentReplicas``)."""
    removing = sorted(set(current) - set(target))
    adding = sorted(set(target) - set(current))
    return [*target, *removing], adding, removing


def revert_targets(registration: PartitionRegistration) -> tuple[list[int], list[int], bool]:
    """(replicas, ISR, unclean) after cancelling the registration's reassignment."""
    adding = set(registration.adding_replicas)
    replicas = [r for r in registration.replicas if r not in adding]
    isr = [r for r in registration.isr if r not in adding]
    if not isr:
        return replicas, list(replicas), True
    return replicas, isr, False


class ReassignmentControl:
    def __init__(self, image: MetadataImage, configs: ConfigControl) -> None:
        self.image = image
        self.configs = configs

    def alter_partition_reassignments(self, request: Mapping[str, Any]) -> ControllerResult:
        allow_rf_change = request.get("allow_replication_factor_change", True)
        pending = PendingChanges(self.image)
        responses = []
        for topic_entry in request["topics"]:
            name = topic_entry["name"]
            partitions = []
            for entry in topic_entry["partitions"]:
                partition_id = entry["partition_index"]
                result: dict[str, Any] = {
                    "partition_index": partition_id,
                    "error_code": 0,
                    "error_message": None,
                }
                try:
                    self._alter_one(pending, name, partition_id, entry["replicas"], allow_rf_change)
                except KafkaError as exc:
                    result["error_code"] = int(exc.code)
                    result["error_message"] = str(exc)
                partitions.append(result)
            responses.append({"name": name, "partitions": partitions})
        response = {
            "throttle_time_ms": 0,
            "allow_replication_factor_change": allow_rf_change,
            "error_code": 0,
            "error_message": None,
            "responses": responses,
        }
        return ControllerResult(pending.records, response)

    def _alter_one(
        self,
        pending: PendingChanges,
        name: str,
        partition_id: int,
        target: list[int] | None,
        allow_rf_change: bool,
    ) -> None:
        topic = self.image.topics.get(name)
        if topic is None:
            raise KafkaError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"unable to find a topic named {name!r}"
            )
        registration = pending.partition(topic.topic_id, partition_id)
        if registration is None:
            raise KafkaError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                f"unable to find partition {name}-{partition_id}",
            )
        what = f"{name}-{partition_id}"
        unclean = self.configs.unclean_leader_election_enabled(name)
        if target is None:
            if not registration.is_reassigning:
                raise KafkaError(
                    ErrorCode.NO_REASSIGNMENT_IN_PROGRESS,
                    f"no reassignment of {what} is in progress",
                )
            replicas, isr, revert_unclean = revert_targets(registration)
            if revert_unclean and not unclean:
                raise KafkaError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"unable to revert the reassignment of {what}: it would need an unclean "
                    "leader election",
                )
            record = build_partition_change(
                registration,
                topic.topic_id,
                partition_id,
                pending.is_active,
                target_isr=isr,
                target_replicas=replicas,
                target_removing=[],
                target_adding=[],
                election=Election.UNCLEAN if unclean else Election.ONLINE,
                description=what,
            )
            log.info("cancelling the reassignment of %s", what)
        else:
            validate_manual_assignment(target, pending.broker)
            original = [r for r in registration.replicas if r not in registration.adding_replicas]
            if not allow_rf_change and len(target) != len(original):
                raise KafkaError(
                    ErrorCode.INVALID_REPLICATION_FACTOR,
                    f"the replication factor of {what} would change from {len(original)} to "
                    f"{len(target)}",
                )
            replicas, adding, removing = reassignment_targets(registration.replicas, list(target))
            record = build_partition_change(
                registration,
                topic.topic_id,
                partition_id,
                pending.is_active,
                target_replicas=replicas,
                target_adding=adding,
                target_removing=removing,
                description=what,
            )
            log.info("reassigning %s from %s to %s", what, list(registration.replicas), target)
        if record is not None:
            pending.append(record)

    def list_partition_reassignments(self, request: Mapping[str, Any]) -> ControllerResult:
        """Reassignments in progress; null topics lists them all.  Unknown topics and
        partitions without a reassignment are left out, as Kafka does."""
        wanted = request.get("topics")
        by_topic: dict[str, list[dict[str, Any]]] = {}
        if wanted is None:
            keys = sorted(self.image.reassigning)
        else:
            keys = []
            for entry in wanted:
                topic = self.image.topics.get(entry["name"])
                if topic is None:
                    continue
                keys.extend((topic.topic_id, p) for p in entry["partition_indexes"])
        for topic_id, partition_id in keys:
            registration = self.image.partition(topic_id, partition_id)
            if registration is None or not registration.is_reassigning:
                continue
            name = self.image.topics_by_id[topic_id].name
            by_topic.setdefault(name, []).append(
                {
                    "partition_index": partition_id,
                    "replicas": list(registration.replicas),
                    "adding_replicas": list(registration.adding_replicas),
                    "removing_replicas": list(registration.removing_replicas),
                }
            )
        response = {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "topics": [{"name": n, "partitions": parts} for n, parts in by_topic.items()],
        }
        return ControllerResult([], response)
