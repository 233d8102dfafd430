"""Records and images for controller tests, built the way the controller builds them."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from samsa.controller.image.metadata_image import MetadataImage
from samsa.protocol.metadata_records import MetadataRecord, make_record


def topic_id_of(name: str) -> bytes:
    """A stable topic id per name, so tests can refer to topics by id."""
    return uuid.uuid5(uuid.NAMESPACE_OID, name).bytes


def incarnation(broker_id: int, generation: int = 0) -> bytes:
    return uuid.UUID(int=(broker_id << 32) | generation).bytes


def register_broker(
    broker_id: int,
    epoch: int,
    *,
    fenced: bool = False,
    rack: str | None = None,
    generation: int = 0,
    in_controlled_shutdown: bool = False,
) -> MetadataRecord:
    return make_record(
        "RegisterBrokerRecord",
        broker_id=broker_id,
        incarnation_id=incarnation(broker_id, generation),
        broker_epoch=epoch,
        end_points=[
            {"name": "PLAINTEXT", "host": f"b{broker_id}", "port": 9092, "security_protocol": 0}
        ],
        rack=rack,
        fenced=fenced,
        in_controlled_shutdown=in_controlled_shutdown,
    )


def topic(name: str) -> MetadataRecord:
    return make_record("TopicRecord", name=name, topic_id=topic_id_of(name))


def partition(
    name: str,
    partition_id: int,
    replicas: Sequence[int],
    isr: Sequence[int] | None = None,
    leader: int | None = None,
    *,
    leader_epoch: int = 0,
    partition_epoch: int = 0,
    adding: Sequence[int] = (),
    removing: Sequence[int] = (),
) -> MetadataRecord:
    isr = list(replicas) if isr is None else list(isr)
    return make_record(
        "PartitionRecord",
        topic_id=topic_id_of(name),
        partition_id=partition_id,
        replicas=list(replicas),
        isr=isr,
        leader=(isr[0] if isr else -1) if leader is None else leader,
        leader_epoch=leader_epoch,
        partition_epoch=partition_epoch,
        adding_replicas=list(adding),
        removing_replicas=list(removing),
    )


def change(name: str, partition_id: int, **fields: object) -> MetadataRecord:
    return make_record(
        "PartitionChangeRecord", topic_id=topic_id_of(name), partition_id=partition_id, **fields
    )


def config(resource_type: int, resource_name: str, key: str, value: str | None) -> MetadataRecord:
    return make_record(
        "ConfigRecord",
        resource_type=resource_type,
        resource_name=resource_name,
        name=key,
        value=value,
    )


def image_of(*records: MetadataRecord) -> MetadataImage:
    image = MetadataImage()
    for record in records:
        image.replay(record)
    return image


def cluster(
    brokers: int = 3, racks: Sequence[str | None] | None = None, fenced: Sequence[int] = ()
) -> list[MetadataRecord]:
    """Registration records of brokers 1..N (epoch = broker id * 10)."""
    return [
        register_broker(
            b,
            b * 10,
            fenced=b in fenced,
            rack=None if racks is None else racks[(b - 1) % len(racks)],
        )
        for b in range(1, brokers + 1)
    ]
