"""ProducerBatch: the records for one partition that travel in one request.

A batch *is* a RecordsBuilder (records are appended straight into it, one
Python call per record) plus the delivery state described below.

A batch owns a pooled buffer (returned to the BufferPool when the batch is
done), the per-batch result its records' futures share, and the bookkeeping the
Sender needs: creation and last-attempt times for linger, backoff and
``delivery.timeout.ms``; the attempt count; and, with idempotence, the producer
id, epoch and base sequence assigned when the batch is first drained (kept
across retries so the broker can de-duplicate).

Thread-safety: appends happen under the partition deque's lock (application
threads); everything after the batch is drained happens on the Sender thread.
``done`` is idempotent so a late response cannot complete a batch twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from samsa.client.producer.future import FutureRecordMetadata, ProduceRequestResult, RecordMetadata
from samsa.client.producer.records_builder import RecordsBuilder

__all__ = ["DeliveryCallback", "ProducerBatch"]

log = logging.getLogger(__name__)

DeliveryCallback = Callable[[RecordMetadata | None, BaseException | None], object]


class ProducerBatch(RecordsBuilder):
    __slots__ = (
        "allocated_size",
        "attempts",
        "base_sequence",
        "buffer",
        "created_ms",
        "drained_ms",
        "final",
        "full",
        "in_retry",
        "last_attempt_ms",
        "partition",
        "producer_epoch",
        "producer_id",
        "result",
        "thunks",
        "topic",
        "tp",
    )

    def __init__(self, tp: tuple[str, int], buffer: bytearray, compression: int, now_ms: int):
        self.tp = tp
        self.topic, self.partition = tp
        super().__init__(buffer, compression)
        self.buffer = buffer
        self.allocated_size = len(buffer)
        self.result = ProduceRequestResult(self.topic, self.partition)
        self.thunks: list[tuple[FutureRecordMetadata, DeliveryCallback]] = []
        self.created_ms = now_ms
        self.last_attempt_ms = now_ms
        self.drained_ms = 0
        self.attempts = 0
        self.in_retry = False
        self.full = False
        self.final = False
        self.producer_id = -1
        self.producer_epoch = -1
        self.base_sequence = -1

    @property
    def has_sequence(self) -> bool:
        return self.base_sequence >= 0

    def set_producer_state(self, producer_id: int, epoch: int, base_sequence: int) -> None:
        self.producer_id = producer_id
        self.producer_epoch = epoch
        self.base_sequence = base_sequence

    def reset_producer_state(self) -> None:
        self.producer_id = -1
        self.producer_epoch = -1
        self.base_sequence = -1

    def records(self) -> memoryview:
        """The batch bytes with the current producer id/epoch/sequence in its header."""
        return self.build(self.producer_id, self.producer_epoch, self.base_sequence)

    def reenqueued(self, now_ms: int) -> None:
        self.attempts += 1
        self.last_attempt_ms = now_ms
        self.in_retry = True

    def delivery_deadline_passed(self, delivery_timeout_ms: int, now_ms: int) -> bool:
        return now_ms - self.created_ms >= delivery_timeout_ms

    def done(self, base_offset: int, log_append_time: int, error: BaseException | None) -> bool:
        """Complete every record of the batch once; False if it was already complete."""
        if self.final:
            return False
        self.final = True
        result = self.result
        result.set(base_offset, log_append_time, error)
        for future, callback in self.thunks:
            try:
                callback(None if error is not None else future.metadata_or_none(), error)
            except Exception:
                log.exception("delivery callback for %s-%d raised", self.topic, self.partition)
        result.done()
        return True

    def __repr__(self) -> str:
        return (
            f"ProducerBatch({self.topic}-{self.partition}, records={self.record_count}, "
            f"seq={self.base_sequence}, attempts={self.attempts})"
        )
