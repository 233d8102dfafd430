"""The Samsa consumer: ``Consumer`` plus the values it returns."""

from __future__ import annotations

from samsa.client.consumer.consumer import Consumer
from samsa.client.consumer.errors import (
    CommitFailedError,
    ConsumerClosedError,
    OffsetOutOfRangeError,
)
from samsa.client.consumer.records import (
    ConsumerRecord,
    OffsetAndMetadata,
    OffsetAndTimestamp,
    TopicPartition,
)

__all__ = [
    "CommitFailedError",
    "Consumer",
    "ConsumerClosedError",
    "ConsumerRecord",
    "OffsetAndMetadata",
    "OffsetAndTimestamp",
    "OffsetOutOfRangeError",
    "TopicPartition",
]
