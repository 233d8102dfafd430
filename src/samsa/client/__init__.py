"""Samsa's Kafka client, built the way Kafka's Java client is built.

Depends only on ``samsa.protocol`` and ``samsa.errors``, so it works against any
Kafka-compatible broker.  Consumer and Admin join ``Producer`` here later.
"""

from samsa.client.metadata import TopicPartition
from samsa.client.producer import FutureRecordMetadata, Producer, RecordMetadata

__all__ = ["FutureRecordMetadata", "Producer", "RecordMetadata", "TopicPartition"]
