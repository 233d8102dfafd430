"""Exceptions the client raises or hands to futures and callbacks.

Broker-side failures keep their Kafka error code (``KafkaError``); failures the
client detects itself (a record too large to ever send, memory exhausted past
``max.block.ms``, a batch that outlived ``delivery.timeout.ms``) get their own
classes, so applications can tell "the broker refused" from "we gave up".
"""

from __future__ import annotations

from samsa.errors import ErrorCode, KafkaError, SamsaError

__all__ = [
    "BufferExhaustedError",
    "DataLossError",
    "DeliveryTimeoutError",
    "DisconnectedError",
    "KafkaTimeoutError",
    "ListenerSecurityError",
    "ProducerClosedError",
    "RecordTooLargeError",
]


class KafkaTimeoutError(SamsaError, TimeoutError):
    """An operation did not finish within its configured time bound."""


class ListenerSecurityError(KafkaTimeoutError):
    """No answer in time, and the broker closed our connections unanswered: its
    listener most likely wants TLS or SASL settings this client was not given
    (the message says which)."""


class BufferExhaustedError(KafkaTimeoutError):
    """``send()`` could not get ``buffer.memory`` within ``max.block.ms``."""


class DeliveryTimeoutError(KafkaTimeoutError):
    """A batch was not acknowledged within ``delivery.timeout.ms``."""


class RecordTooLargeError(KafkaError):
    """A record larger than ``max.request.size`` or ``buffer.memory``.

    Carries MESSAGE_TOO_LARGE, the code the broker would have answered with, so
    code that switches on error codes treats both the same.
    """

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.MESSAGE_TOO_LARGE, message)


class DisconnectedError(KafkaError):
    """The connection to a broker closed while a request was outstanding."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.NETWORK_EXCEPTION, message)


class ProducerClosedError(SamsaError):
    """``send()`` after ``close()``, or records failed by a forced close."""


class DataLossError(KafkaError):
    """Records a reader was asked for are gone from the log (deleted by retention, truncated).

    Raised by the columnar range reader with ``fail_on_data_loss`` (Spark's
    ``failOnDataLoss``); carries OFFSET_OUT_OF_RANGE, the broker's answer.
    """

    def __init__(
        self, topic: str, partition: int, requested: int, earliest: int, latest: int
    ) -> None:
        if requested < earliest:
            what = f"the earliest available offset is {earliest} (deleted by retention or delete_records?)"
        else:
            what = f"the log ends at offset {latest} (truncated?)"
        super().__init__(
            ErrorCode.OFFSET_OUT_OF_RANGE,
            f"data loss in {topic}-{partition}: requested offset {requested} is not available; "
            f"{what}. Pass fail_on_data_loss=False (Spark: failOnDataLoss=false) to skip ahead",
        )
        self.topic = topic
        self.partition = partition
        self.requested = requested
        self.earliest = earliest
        self.latest = latest
