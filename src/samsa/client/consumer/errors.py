"""Consumer-specific failures, keeping Kafka's error codes where the broker gave one."""

from __future__ import annotations

from samsa.client.metadata import TopicPartition
from samsa.errors import ErrorCode, KafkaError, SamsaError

__all__ = [
    "CommitFailedError",
    "ConsumerClosedError",
    "OffsetOutOfRangeError",
    "kafka_error",
]


def kafka_error(code: int, message: str = "") -> KafkaError:
    """KafkaError for ``code``; a code this build does not know maps to UNKNOWN_SERVER_ERROR."""
    try:
        return KafkaError(ErrorCode(code), message)
    except ValueError:
        return KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"error code {code}: {message}")


class OffsetOutOfRangeError(KafkaError):
    """The position is outside the log and ``auto.offset.reset`` is ``none``."""

    def __init__(self, tp: TopicPartition, offset: int) -> None:
        super().__init__(
            ErrorCode.OFFSET_OUT_OF_RANGE,
            f"offset {offset} of {tp.topic}-{tp.partition} is out of range "
            "and auto.offset.reset is none",
        )
        self.partition = tp
        self.offset = offset


class CommitFailedError(KafkaError):
    """A commit the group refused because a rebalance took the partitions away.

    As in Kafka, this is not retriable: the records since the last commit will
    be processed again by the partitions' new owner.
    """


class ConsumerClosedError(SamsaError):
    """A method was called after ``close()``."""
