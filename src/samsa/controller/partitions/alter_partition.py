"""AlterPartition: a partition leader asks to change its ISR.

Part of Kafka's ``ReplicationControlManager``.  The checks are Kafka's, in its
order: the broker epoch (STALE_BROKER_EPOCH for the whole request); per
partition, epochs from the future (NOT_CONTROLLER: this controller is behind),
a sender that is not the leader (INVALID_REQUEST), an old leader epoch
(FENCED_LEADER_EPOCH), an old partition epoch (INVALID_UPDATE_VERSION), an ISR
that is not a set of replicas holding the leader (INVALID_REQUEST), a leader
recovery state that goes backwards or grows the ISR while recovering
(INVALID_REQUEST), and members that are not registered, fenced, shutting down
or of another broker epoch (INELIGIBLE_REPLICA).  A valid change goes through
the partition change builder, which also completes a reassignment once every
target replica is in sync; if that moves the leader away, the old leader is
told NEW_LEADER_ELECTED.  Shrinking below min.insync.replicas is allowed, as in
Kafka (the partition stays writable only with fewer acks), and logged.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from samsa.controller.config_control import ConfigControl
from samsa.controller.controller_result import ControllerResult
from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.image.registrations import (
    NO_LEADER,
    LeaderRecoveryState,
    PartitionRegistration,
)
from samsa.controller.partitions.partition_change import build_partition_change
from samsa.controller.pending import PendingChanges
from samsa.errors import ErrorCode

log = logging.getLogger(__name__)


class AlterPartitionControl:
    def __init__(self, image: MetadataImage, configs: ConfigControl) -> None:
        self.image = image
        self.configs = configs

    def alter_partition(self, request: Mapping[str, Any]) -> ControllerResult:
        """AlterPartition from a partition leader (v2+, topic ids)."""
        broker_id, broker_epoch = request["broker_id"], request["broker_epoch"]
        broker = self.image.brokers.get(broker_id)
        if broker is None or broker.epoch != broker_epoch:
            return ControllerResult(
                [],
                {
                    "throttle_time_ms": 0,
                    "error_code": int(ErrorCode.STALE_BROKER_EPOCH),
                    "topics": [],
                },
            )
        pending = PendingChanges(self.image)
        topics = []
        for topic_data in request["topics"]:
            topic_id = topic_data["topic_id"]
            topic = self.image.topics_by_id.get(topic_id)
            results = []
            for data in topic_data["partitions"]:
                if topic is None:
                    results.append(_partition_error(data, ErrorCode.UNKNOWN_TOPIC_ID))
                    continue
                results.append(self._alter_one(pending, broker_id, topic.name, topic_id, data))
            topics.append({"topic_id": topic_id, "partitions": results})
        response = {"throttle_time_ms": 0, "error_code": 0, "topics": topics}
        return ControllerResult(pending.records, response)

    def _alter_one(
        self,
        pending: PendingChanges,
        broker_id: int,
        topic_name: str,
        topic_id: bytes,
        data: Mapping[str, Any],
    ) -> dict[str, Any]:
        partition_id = data["partition_index"]
        registration = pending.partition(topic_id, partition_id)
        what = f"{topic_name}-{partition_id}"
        if registration is None:
            return _partition_error(data, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if data["leader_epoch"] > registration.leader_epoch or (
            data["partition_epoch"] > registration.partition_epoch
        ):
            # Epochs from the future: this controller is behind, the leader should
            # find the active controller (Kafka answers NOT_CONTROLLER).
            return _partition_error(data, ErrorCode.NOT_CONTROLLER)
        if broker_id != registration.leader:
            log.info("AlterPartition for %s from broker %d, not its leader", what, broker_id)
            return _partition_error(data, ErrorCode.INVALID_REQUEST)
        if data["leader_epoch"] != registration.leader_epoch:
            return _partition_error(data, ErrorCode.FENCED_LEADER_EPOCH)
        if data["partition_epoch"] != registration.partition_epoch:
            return _partition_error(data, ErrorCode.INVALID_UPDATE_VERSION)
        members = _isr_with_epochs(data)
        new_isr = [b for b, _ in members]
        if len(set(new_isr)) != len(new_isr) or not all(
            r in registration.replicas for r in new_isr
        ):
            log.info("AlterPartition for %s: ISR %s is not a set of its replicas", what, new_isr)
            return _partition_error(data, ErrorCode.INVALID_REQUEST)
        if registration.leader not in new_isr:
            return _partition_error(data, ErrorCode.INVALID_REQUEST)
        recovery = data.get("leader_recovery_state", LeaderRecoveryState.RECOVERED)
        if recovery == LeaderRecoveryState.RECOVERING and len(new_isr) > 1:
            log.info("AlterPartition for %s: a recovering leader cannot grow the ISR", what)
            return _partition_error(data, ErrorCode.INVALID_REQUEST)
        if (
            registration.leader_recovery_state == LeaderRecoveryState.RECOVERED
            and recovery == LeaderRecoveryState.RECOVERING
        ):
            log.info("AlterPartition for %s: RECOVERED cannot go back to RECOVERING", what)
            return _partition_error(data, ErrorCode.INVALID_REQUEST)
        for replica, epoch in members:
            reason = self._ineligible(pending, replica, epoch)
            if reason:
                log.info("AlterPartition for %s: replica %d %s", what, replica, reason)
                return _partition_error(data, ErrorCode.INELIGIBLE_REPLICA)
        record = build_partition_change(
            registration,
            topic_id,
            partition_id,
            pending.is_active,
            target_isr=new_isr,
            target_leader_recovery_state=recovery,
            description=what,
        )
        if record is not None:
            pending.append(record)
            changed = pending.partition(topic_id, partition_id)
            assert changed is not None
            if changed.leader != broker_id:
                # The ISR change completed a reassignment that moved the leader away:
                # the old leader must refresh its metadata (Kafka's NEW_LEADER_ELECTED).
                log.info("AlterPartition for %s completed a reassignment: new leader", what)
                return _partition_error(data, ErrorCode.NEW_LEADER_ELECTED)
            registration = changed
            min_isr = self.configs.min_insync_replicas(topic_name)
            if len(registration.isr) < min_isr:
                # Allowed, as in Kafka: the leader stays, acks=all producers get
                # NOT_ENOUGH_REPLICAS until the ISR grows back.
                log.info(
                    "%s is under min.insync.replicas (%d) with ISR %s",
                    what,
                    min_isr,
                    list(registration.isr),
                )
        return _partition_result(partition_id, registration)

    def _ineligible(self, pending: PendingChanges, replica: int, epoch: int) -> str | None:
        broker = pending.broker(replica)
        if broker is None:
            return "is not registered"
        if broker.in_controlled_shutdown:
            return "is shutting down"
        if broker.fenced:
            return "is fenced"
        if epoch != -1 and epoch != broker.epoch:
            return f"has broker epoch {broker.epoch}, not {epoch}"
        return None


def _isr_with_epochs(data: Mapping[str, Any]) -> list[tuple[int, int]]:
    with_epochs = data.get("new_isr_with_epochs")
    if with_epochs:
        return [(m["broker_id"], m.get("broker_epoch", -1)) for m in with_epochs]
    return [(b, -1) for b in data.get("new_isr") or ()]


def _partition_error(data: Mapping[str, Any], code: ErrorCode) -> dict[str, Any]:
    return {
        "partition_index": data["partition_index"],
        "error_code": int(code),
        "leader_id": NO_LEADER,
        "leader_epoch": -1,
        "isr": [],
        "leader_recovery_state": 0,
        "partition_epoch": -1,
    }


def _partition_result(partition_id: int, registration: PartitionRegistration) -> dict[str, Any]:
    return {
        "partition_index": partition_id,
        "error_code": 0,
        "leader_id": registration.leader,
        "leader_epoch": registration.leader_epoch,
        "isr": list(registration.isr),
        "leader_recovery_state": registration.leader_recovery_state,
        "partition_epoch": registration.partition_epoch,
    }
