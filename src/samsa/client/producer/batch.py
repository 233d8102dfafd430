"""ProducerBatch: the records for one partition that travel in one request.

Records are stored *unencoded*, as columns: ``send()`` appends the timestamp
and the value to two lists (a key or headers go to the sparse ``extras`` map),
and the whole batch is encoded in one tight loop by
``samsa.protocol.batches.record_columns.encode_records`` when the Sender first needs
its bytes.  Per-record varint work thus leaves the caller's thread and costs
about half as much as a call per record; and since ints and bytes are not
tracked by the garbage collector, a million queued records add no GC work.

A batch owns a reservation of ``buffer.memory`` (returned to the BufferPool
when the batch is done) and, from its encoding on, the pooled buffer it is
encoded into -- taken only then, so that an open batch's records are not held
twice, as Python objects and as reserved bytes in a buffer; it also owns the per-batch
result its records' futures share, and the bookkeeping the Sender needs:
creation and last-attempt times for linger, backoff and
``delivery.timeout.ms``; the attempt count; and, with idempotence, the producer
id, epoch and base sequence assigned when the batch is first drained (kept
across retries so the broker can de-duplicate).  ``estimated`` is an upper
bound of the encoded size, so the encoding always fits the buffer.

Thread-safety: appends happen under the partition deque's lock while the batch
is ``open``; the Sender ``seal``s it under that same lock before draining, and
from then on only the Sender touches it.  ``done`` is idempotent so a late
response cannot complete a batch twice.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable, Sequence

import crc32c

from samsa.client.producer.buffer_pool import BufferPool
from samsa.client.producer.future import FutureRecordMetadata, ProduceRequestResult, RecordMetadata
from samsa.protocol.batches.compression import compress
from samsa.protocol.batches.record_batch import BATCH_HEADER_SIZE, HEADER, LOG_OVERHEAD
from samsa.protocol.batches.record_builder import RecordHeader
from samsa.protocol.batches.record_columns import encode_records

__all__ = [
    "BATCH_OVERHEAD",
    "RECORD_OVERHEAD",
    "DeliveryCallback",
    "ProducerBatch",
    "estimate_record_size",
]

log = logging.getLogger(__name__)

DeliveryCallback = Callable[[RecordMetadata | None, BaseException | None], object]

BATCH_OVERHEAD = BATCH_HEADER_SIZE
_CRC_START = 21
_TRANSACTIONAL = 0x10  # the batch attribute bit of a transactional batch
# Kafka's MAX_RECORD_OVERHEAD: what a record adds to its key and value bytes at
# most with realistic deltas (length, attributes, timestamp and offset deltas,
# key/value lengths, header count).  Batches fill against it.
RECORD_OVERHEAD = 21


def estimate_record_size(
    key: bytes | None, value: bytes | None, headers: Sequence[RecordHeader] | None
) -> int:
    """Upper bound of one record's encoded size (Kafka's estimateSizeInBytesUpperBound)."""
    size = RECORD_OVERHEAD + (len(key) if key else 0) + (len(value) if value else 0)
    if headers:
        for name, val in headers:
            size += 10 + len(name) * 4 + (len(val) if val else 0)
    return size


_CRC = struct.Struct(">I")


class ProducerBatch:
    __slots__ = (
        "_count",
        "_end",
        "_out",
        "allocated_size",
        "attempts",
        "base_sequence",
        "base_timestamp",
        "buffer",
        "capacity",
        "compression",
        "created_ms",
        "drained_ms",
        "estimated",
        "extras",
        "final",
        "full",
        "in_retry",
        "is_transactional",
        "last_attempt_ms",
        "limit",
        "max_timestamp",
        "open",
        "partition",
        "pool",
        "producer_epoch",
        "producer_id",
        "result",
        "retry_backoff_ms",
        "thunks",
        "timestamps",
        "topic",
        "tp",
        "values",
    )

    def __init__(
        self,
        tp: tuple[str, int],
        capacity: int,
        compression: int,
        now_ms: int,
        pool: BufferPool | None = None,
    ):
        """``capacity`` bytes are reserved in ``pool`` (None: a plain buffer is made at encode)."""
        self.tp = tp
        self.topic, self.partition = tp
        self.pool = pool
        self.buffer: bytearray | None = None  # taken from the pool when first encoded
        self.allocated_size = self.capacity = capacity
        self.compression = compression
        self.timestamps: list[int] = []
        self.values: list[bytes | None] = []
        self.extras: dict[int, tuple[bytes | None, Sequence[RecordHeader] | None]] = {}
        self.estimated = BATCH_OVERHEAD
        self.open = True
        # ``capacity`` while open, 0 once sealed: the append path checks one number.
        self.limit = self.capacity
        self._count = 0
        self._out: bytearray | None = None
        self._end = 0
        self.base_timestamp = -1
        self.max_timestamp = -1
        self.result = ProduceRequestResult(self.topic, self.partition)
        self.thunks: list[tuple[FutureRecordMetadata, DeliveryCallback]] = []
        self.created_ms = now_ms
        self.last_attempt_ms = now_ms
        self.drained_ms = 0
        self.attempts = 0
        self.retry_backoff_ms = 0
        self.in_retry = False
        self.full = False
        self.final = False
        self.producer_id = -1
        self.producer_epoch = -1
        self.base_sequence = -1
        self.is_transactional = False

    @property
    def record_count(self) -> int:
        return self._count if self._out is not None else len(self.values)

    @property
    def size_bytes(self) -> int:
        """Exact size once encoded; before that the upper bound appends were checked against."""
        return self._end if self._out is not None else self.estimated

    def seal(self) -> None:
        """No more appends (called under the partition lock, before draining)."""
        self.open = False
        self.limit = 0

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

    def _encode(self) -> None:
        assert not self.open, "encode a sealed batch"
        self.base_timestamp = self.timestamps[0]
        body, self.max_timestamp = encode_records(self.timestamps, self.values, self.extras)
        if self.compression:
            body = compress(self.compression, body)
        end = BATCH_OVERHEAD + len(body)
        size = self.allocated_size
        out = self.buffer = bytearray(size) if self.pool is None else self.pool.buffer_for(size)
        if end > len(out):  # the estimate is an upper bound; this is only a safety net
            out = bytearray(end)
        out[BATCH_OVERHEAD:end] = body
        self._out = out
        self._end = end
        self._count = len(self.values)
        # The bytes are all that is needed from now on (retries included).
        self.timestamps = []
        self.values = []
        self.extras = {}

    def records(self) -> memoryview:
        """The batch bytes with the current producer id/epoch/sequence in its header.

        Encodes (and compresses) on first use; a retry only rewrites the header.
        """
        if self._out is None:
            self._encode()
        out = self._out
        assert out is not None
        end = self._end
        count = self._count
        HEADER.pack_into(
            out,
            0,
            0,  # base offset, assigned by the broker
            end - LOG_OVERHEAD,
            -1,  # partition leader epoch, set by the broker
            2,  # magic
            0,  # crc placeholder
            self.compression | (_TRANSACTIONAL if self.is_transactional else 0),
            count - 1,
            self.base_timestamp,
            self.max_timestamp,
            self.producer_id,
            self.producer_epoch,
            self.base_sequence,
            count,
        )
        view = memoryview(out)[:end]
        _CRC.pack_into(out, 17, crc32c.crc32c(view[_CRC_START:]))
        return view

    def reenqueued(self, now_ms: int, backoff_ms: int) -> None:
        """``backoff_ms`` is drawn once per retry: readiness and draining must agree
        on it (jitter drawn twice let the ready check pass and the drain refuse, and
        the Sender then slept with nothing to wake it)."""
        self.attempts += 1
        self.last_attempt_ms = now_ms
        self.retry_backoff_ms = backoff_ms
        self.in_retry = True

    def delivery_deadline_passed(self, delivery_timeout_ms: int, now_ms: int) -> bool:
        return now_ms - self.created_ms >= delivery_timeout_ms

    def done(self, base_offset: int, log_append_time: int, error: BaseException | None) -> bool:
        """Complete every record of the batch once; False if it was already complete."""
        if self.final:
            return False
        self.final = True
        self.seal()
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
