"""Samsa's Kafka client, built the way Kafka's Java client is built.

Depends only on ``samsa.protocol`` and ``samsa.errors``, so it works against any
Kafka-compatible broker: ``Producer`` (accumulator + sender thread), ``Consumer``
(fetcher + classic group membership) and ``Admin``.
"""

from samsa.client.admin import Admin, NewTopic
from samsa.client.consumer import CommitFailedError, Consumer, ConsumerRecord, OffsetAndMetadata
from samsa.client.metadata import TopicPartition
from samsa.client.producer import FutureRecordMetadata, Producer, RecordMetadata

__all__ = [
    "Admin",
    "CommitFailedError",
    "Consumer",
    "ConsumerRecord",
    "FutureRecordMetadata",
    "NewTopic",
    "OffsetAndMetadata",
    "Producer",
    "RecordMetadata",
    "TopicPartition",
]
