"""Which ``__remote_log_metadata`` partition holds a user partition's records.

Kafka's RemoteLogMetadataTopicPartitioner: all events of one user partition go
to one metadata partition, so a consumer of that metadata partition sees them
in order.  The choice must equal Kafka's bit for bit (a Kafka broker and a
Samsa broker reading the same topic, Kafka's tools inspecting it), so it is
computed exactly as Kafka computes it::

    hash = Objects.hash(topicId.leastSignificantBits,
                        topicId.mostSignificantBits,
                        partition)                  # Java int arithmetic
    metadata partition = toPositive(murmur2(hash as 4 big-endian bytes)) % n

``Objects.hash(a, b, c)`` is ``31 * (31 * (31 + h(a)) + h(b)) + h(c)`` with
``Long.hashCode(v) = (int) (v ^ (v >>> 32))`` and ``Integer.hashCode(v) = v``.
"""

from __future__ import annotations

import struct

from samsa.protocol.murmur2 import murmur2, to_positive
from samsa.tiered.metadata.model import TopicIdPartition

__all__ = ["DEFAULT_METADATA_TOPIC_PARTITIONS", "METADATA_TOPIC", "metadata_partition"]

METADATA_TOPIC = "__remote_log_metadata"
DEFAULT_METADATA_TOPIC_PARTITIONS = 50
"""Kafka's ``remote.log.metadata.topic.num.partitions`` default."""

_HALVES = struct.Struct(">qq")
_INT = struct.Struct(">i")


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _long_hash(value: int) -> int:
    unsigned = value & 0xFFFFFFFFFFFFFFFF
    return _int32(unsigned ^ (unsigned >> 32))


def _java_hash(topic_id: bytes, partition: int) -> int:
    most, least = _HALVES.unpack(topic_id)
    h = 1
    for element in (_long_hash(least), _long_hash(most), _int32(partition)):
        h = _int32(31 * h + element)
    return h


def metadata_partition(topic_id_partition: TopicIdPartition, partitions: int) -> int:
    """The metadata partition of ``topic_id_partition`` among ``partitions``."""
    if partitions <= 0:
        raise ValueError(f"the metadata topic needs at least one partition, not {partitions}")
    key = _INT.pack(_java_hash(topic_id_partition.topic_id, topic_id_partition.partition))
    return to_positive(murmur2(key)) % partitions
