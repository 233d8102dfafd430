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
    "DeliveryTimeoutError",
    "DisconnectedError",
    "KafkaTimeoutError",
    "ProducerClosedError",
    "RecordTooLargeError",
]


class KafkaTimeoutError(SamsaError, TimeoutError):
    """An operation did not finish within its configured time bound."""


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
