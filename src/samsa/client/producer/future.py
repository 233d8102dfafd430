"""Per-batch results and the per-record futures that point into them.

As in Kafka's ProduceRequestResult/FutureRecordMetadata, the expensive parts
(an event to wait on, a lock, the callback list) exist once per *batch*; a
record's future is a small slotted object holding its batch result and its
offset within the batch.  That keeps ``send()`` cheap: no Condition per record.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from samsa.client.errors import KafkaTimeoutError

__all__ = ["FutureRecordMetadata", "ProduceRequestResult", "RecordMetadata"]


@dataclass(frozen=True, slots=True)
class RecordMetadata:
    """Where a record landed.  ``offset`` is -1 when unknown (acks=0, duplicates)."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    serialized_key_size: int
    serialized_value_size: int


class ProduceRequestResult:
    """Outcome of one batch, shared by the futures of its records."""

    __slots__ = (
        "_callbacks",
        "_event",
        "_lock",
        "base_offset",
        "error",
        "log_append_time",
        "partition",
        "topic",
    )

    def __init__(self, topic: str, partition: int) -> None:
        self.topic = topic
        self.partition = partition
        self.base_offset = -1
        self.log_append_time = -1
        self.error: BaseException | None = None
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    def set(self, base_offset: int, log_append_time: int, error: BaseException | None) -> None:
        self.base_offset = base_offset
        self.log_append_time = log_append_time
        self.error = error

    def done(self) -> None:
        """Wake waiters and run callbacks added through futures (on the calling thread)."""
        with self._lock:
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb()

    @property
    def completed(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float | None) -> bool:
        return self._event.wait(timeout)

    def add_callback(self, cb: Callable[[], None]) -> None:
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(cb)
                return
        cb()


class FutureRecordMetadata(tuple):
    """The future ``send()`` returns (the subset of concurrent.futures.Future used in practice).

    A tuple subclass ``(result, relative_offset, timestamp, key_size, value_size)``
    with no ``__new__`` or ``__init__`` of its own, so that creating one per
    record runs no Python code -- it is on the ``send()`` hot path.  It holds sizes, not the record
    itself, so futures an application keeps do not keep payloads alive.
    """

    __slots__ = ()

    _result: ProduceRequestResult = property(itemgetter(0))  # type: ignore[assignment]
    relative_offset: int = property(itemgetter(1))  # type: ignore[assignment]
    timestamp: int = property(itemgetter(2))  # type: ignore[assignment]
    key_size: int = property(itemgetter(3))  # type: ignore[assignment]
    value_size: int = property(itemgetter(4))  # type: ignore[assignment]

    def __repr__(self) -> str:
        r = self._result
        return f"FutureRecordMetadata({r.topic}-{r.partition}, done={self.done()})"

    def done(self) -> bool:
        return self._result.completed

    def cancelled(self) -> bool:
        return False

    def cancel(self) -> bool:
        return False

    def _metadata(self) -> RecordMetadata:
        r = self._result
        offset = r.base_offset + self.relative_offset if r.base_offset >= 0 else -1
        ts = r.log_append_time if r.log_append_time >= 0 else self.timestamp
        return RecordMetadata(r.topic, r.partition, offset, ts, self.key_size, self.value_size)

    def result(self, timeout: float | None = None) -> RecordMetadata:
        """Block until acknowledged; raises the delivery error or KafkaTimeoutError."""
        if not self._result.wait(timeout):
            raise KafkaTimeoutError(f"record not acknowledged within {timeout} s")
        if self._result.error is not None:
            raise self._result.error
        return self._metadata()

    get = result

    def exception(self, timeout: float | None = None) -> BaseException | None:
        if not self._result.wait(timeout):
            raise KafkaTimeoutError(f"record not acknowledged within {timeout} s")
        return self._result.error

    def add_done_callback(self, fn: Callable[[FutureRecordMetadata], Any]) -> None:
        self._result.add_callback(lambda: fn(self))

    def metadata_or_none(self) -> RecordMetadata | None:
        return None if self._result.error is not None else self._metadata()


class FailedFuture(FutureRecordMetadata):
    """A future failed before reaching the accumulator (e.g. record too large)."""

    __slots__ = ()

    def __new__(cls, topic: str, partition: int, error: BaseException) -> FailedFuture:
        result = ProduceRequestResult(topic, partition)
        result.set(-1, -1, error)
        result.done()
        return tuple.__new__(cls, (result, 0, -1, -1, -1))
