"""Which log dir holds each replica, and what a failed dir means (KIP-858).

A broker with several log dirs (JBOD) tells the controller where it placed
each replica (AssignReplicasToDirs); the controller keeps the answer in the
partitions' ``directories`` (PartitionChangeRecord), so it survives a
controller failover.  When the broker's heartbeat then names a failed dir
(``offline_log_dirs``), the controller takes that broker out of the ISR and
the leadership of exactly the partitions in that dir, as Kafka's
ReplicationControlManager.handleDirectoriesOffline does; the broker's other
dirs keep their leaderships.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from samsa.controller.controller_result import ControllerResult
from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.image.registrations import UNASSIGNED_DIRECTORY
from samsa.controller.partitions.replication_control import ReplicationControl
from samsa.controller.pending import PendingChanges
from samsa.errors import ErrorCode
from samsa.protocol.metadata_records import make_record

log = logging.getLogger(__name__)


def assign_replicas_to_dirs(image: MetadataImage, request: Mapping[str, Any]) -> ControllerResult:
    """AssignReplicasToDirs: one PartitionChangeRecord per replica whose dir changed."""
    broker_id = request["broker_id"]
    broker = image.brokers.get(broker_id)
    if broker is None or broker.epoch != request["broker_epoch"]:
        return ControllerResult(
            [],
            {
                "throttle_time_ms": 0,
                "error_code": int(ErrorCode.STALE_BROKER_EPOCH),
                "directories": [],
            },
        )
    pending = PendingChanges(image)
    answers = []
    for directory in request["directories"]:
        dir_id = bytes(directory["id"])
        topics = []
        for topic in directory["topics"]:
            topic_id = bytes(topic["topic_id"])
            partitions = []
            for p in topic["partitions"]:
                index = p["partition_index"]
                code = _assign(pending, broker_id, topic_id, index, dir_id)
                partitions.append({"partition_index": index, "error_code": int(code)})
            topics.append({"topic_id": topic_id, "partitions": partitions})
        answers.append({"id": dir_id, "topics": topics})
    return ControllerResult(
        pending.records, {"throttle_time_ms": 0, "error_code": 0, "directories": answers}
    )


def _assign(
    pending: PendingChanges, broker_id: int, topic_id: bytes, index: int, dir_id: bytes
) -> ErrorCode:
    registration = pending.partition(topic_id, index)
    if registration is None:
        return ErrorCode.UNKNOWN_TOPIC_ID
    if broker_id not in registration.replicas:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    current = list(registration.directories) or [UNASSIGNED_DIRECTORY] * len(registration.replicas)
    if len(current) != len(registration.replicas):
        current = [UNASSIGNED_DIRECTORY] * len(registration.replicas)
    slot = registration.replicas.index(broker_id)
    if current[slot] == dir_id:
        return ErrorCode.NONE
    current[slot] = dir_id
    pending.append(
        make_record(
            "PartitionChangeRecord",
            topic_id=topic_id,
            partition_id=index,
            directories=current,
        )
    )
    return ErrorCode.NONE


def take_offline_dirs_out(
    pending: PendingChanges,
    replication: ReplicationControl,
    broker_id: int,
    offline_dirs: Iterable[bytes],
) -> int:
    """Move leadership and ISR membership of ``broker_id``'s replicas in its
    failed dirs to the other in-sync replicas; returns the records appended."""
    failed = {bytes(d) for d in offline_dirs}
    if not failed:
        return 0
    doomed = []
    for key in pending.partitions_with_broker_in_isr(broker_id):
        registration = pending.partition(*key)
        if registration is not None and registration.directory_of(broker_id) in failed:
            doomed.append(key)
    if not doomed:
        return 0
    log.info(
        "broker %d reports %d failed log dir(s): moving %d partitions off them",
        broker_id,
        len(failed),
        len(doomed),
    )
    return replication.leader_and_isr_updates(
        pending, doomed, broker_to_remove=broker_id, context=f"log dir failure on {broker_id}"
    )
