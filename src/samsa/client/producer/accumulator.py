"""RecordAccumulator: per-partition queues of batches waiting for the Sender.

``send()`` appends here and returns; the Sender thread asks which brokers have
something worth sending (``ready``) and takes at most one batch per partition
per request (``drain``), a policy that lives in ``sendable``.  This is Kafka's
RecordAccumulator:

* each partition has a deque of ProducerBatch guarded by its own lock, so
  application threads writing to different partitions do not contend;
* appending tries the last batch under the lock; when it is full, memory for
  a new batch is reserved *outside* the lock (it may block on buffer.memory),
  and the lock is taken again to re-check -- another thread may have opened a
  batch meanwhile, in which case the reservation is given back (the
  double-check); the batch takes its buffer only when it is encoded;
* a partition is sendable when its head batch is full, has waited linger.ms
  (or its retry backoff), or when a flush or close is under way, or when other
  threads are blocked waiting for memory;
* retried batches go back to the *head* of their deque (in sequence order when
  idempotent) so records keep their order.

Times are monotonic milliseconds passed in by the caller, except for batch
creation, which reads the injected clock only when a new batch opens.
"""

from __future__ import annotations

import random
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from samsa.client.errors import ProducerClosedError
from samsa.client.metadata import Cluster
from samsa.client.producer.batch import (
    BATCH_OVERHEAD,
    DeliveryCallback,
    ProducerBatch,
    estimate_record_size,
)
from samsa.client.producer.buffer_pool import BufferPool
from samsa.client.producer.future import FutureRecordMetadata
from samsa.client.producer.sendable import ReadyCheckResult, drain_batches, ready_nodes
from samsa.protocol.batches.record_builder import RecordHeader as Header

if TYPE_CHECKING:
    from samsa.client.producer.idempotence import TransactionManager

__all__ = ["PartitionQueue", "RecordAccumulator"]

TP = tuple[str, int]


class PartitionQueue:
    """One partition's batches; ``Producer.send`` appends to ``open_batch`` under ``lock``."""

    __slots__ = ("batches", "lock", "open_batch")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.batches: deque[ProducerBatch] = deque()
        # The batch appends go to while it is ``open`` (the deque's last one).
        self.open_batch: ProducerBatch | None = None


class RecordAccumulator:
    def __init__(
        self,
        *,
        batch_size: int,
        compression: int,
        linger_ms: int,
        retry_backoff_ms: int,
        retry_backoff_max_ms: int,
        delivery_timeout_ms: int,
        pool: BufferPool,
        clock_ms: Callable[[], int],
        transaction_manager: TransactionManager | None = None,
        wakeup: Callable[[], None] | None = None,
    ) -> None:
        self.batch_size = batch_size
        self.compression = compression
        self.linger_ms = linger_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.retry_backoff_max_ms = max(retry_backoff_ms, retry_backoff_max_ms)
        self.delivery_timeout_ms = delivery_timeout_ms
        self.pool = pool
        self.txn = transaction_manager
        self._clock = clock_ms
        self._wakeup = wakeup or (lambda: None)
        self._queues: dict[TP, PartitionQueue] = {}
        self._queues_lock = threading.Lock()
        self._incomplete: set[ProducerBatch] = set()
        self._incomplete_lock = threading.Lock()
        self._drain_index: dict[int, int] = {}
        self._flushes_in_progress = 0
        self._flush_lock = threading.Lock()
        self.muted: set[TP] = set()
        self.closed = False
        self._rng = random.Random()

    # -- append (application threads) -------------------------------------------
    def queue_for(self, tp: TP) -> PartitionQueue:
        """The partition's queue, created on first use."""
        with self._queues_lock:
            q = self._queues.get(tp)
            if q is None:
                q = self._queues[tp] = PartitionQueue()
            return q

    def append(
        self,
        tp: TP,
        timestamp_ms: int,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[Header] | None,
        callback: DeliveryCallback | None,
        max_block_ms: float,
        size: int = -1,
        abort_on_new_batch: bool = False,
    ) -> FutureRecordMetadata | None:
        """Add a record to the partition's open batch, opening one if needed.

        ``size`` is the record's upper-bound size when the caller already knows
        it.  With ``abort_on_new_batch`` the call returns None instead of opening
        a batch, so a sticky partitioner can move on first (Kafka's
        ``abortOnNewBatch``).  Blocks up to ``max_block_ms`` for buffer memory
        (BufferExhaustedError).
        """
        if size < 0:
            size = estimate_record_size(key, value, headers)
        q = self._queues.get(tp)
        if q is None:
            q = self.queue_for(tp)
        batch = q.open_batch
        if batch is not None:
            # The hot path: one uncontended lock, one tuple, one list append.
            lock = q.lock
            lock.acquire()
            try:
                estimated = batch.estimated + size
                if estimated <= batch.limit:  # open, with room
                    values = batch.values
                    offset = len(values)
                    values.append(value)
                    batch.timestamps.append(timestamp_ms)
                    if key is not None or headers:
                        batch.extras[offset] = (key, headers)
                    batch.estimated = estimated
                    future = FutureRecordMetadata(
                        (
                            batch.result,
                            offset,
                            timestamp_ms,
                            -1 if key is None else len(key),
                            -1 if value is None else len(value),
                        ),
                    )
                    if callback is not None:
                        batch.thunks.append((future, callback))
                    return future
            finally:
                lock.release()
        if abort_on_new_batch:
            return None
        return self._append_to_new_batch(
            q, tp, timestamp_ms, key, value, headers, callback, max_block_ms, size
        )

    def _append_to_new_batch(
        self,
        q: PartitionQueue,
        tp: TP,
        timestamp_ms: int,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[Header] | None,
        callback: DeliveryCallback | None,
        max_block_ms: float,
        size: int,
    ) -> FutureRecordMetadata:
        """Open a batch: allocate outside the lock (may block), then double-check."""
        if self.closed:
            raise ProducerClosedError("producer is closed")
        alloc = max(self.batch_size, BATCH_OVERHEAD + size)
        self.pool.reserve(alloc, max_block_ms)
        with q.lock:
            if self.closed:
                self.pool.deallocate(None, alloc)
                raise ProducerClosedError("producer is closed")
            batch = q.open_batch
            if batch is not None and batch.open and batch.estimated + size <= batch.capacity:
                # Another thread opened a batch meanwhile: use it, return the memory.
                self.pool.deallocate(None, alloc)
                created = False
            else:
                if batch is not None and batch.open:
                    batch.full = True
                    batch.seal()
                batch = ProducerBatch(tp, alloc, self.compression, self._clock(), self.pool)
                q.batches.append(batch)
                q.open_batch = batch
                created = True
            values = batch.values
            offset = len(values)
            values.append(value)
            batch.timestamps.append(timestamp_ms)
            if key is not None or headers:
                batch.extras[offset] = (key, headers)
            batch.estimated += size
            future: FutureRecordMetadata = FutureRecordMetadata(
                (
                    batch.result,
                    offset,
                    timestamp_ms,
                    -1 if key is None else len(key),
                    -1 if value is None else len(value),
                ),
            )
            if callback is not None:
                batch.thunks.append((future, callback))
        if not created:
            return future
        with self._incomplete_lock:
            self._incomplete.add(batch)
        # A new batch means either the previous one is full or the partition
        # just became non-empty: either way the Sender must re-plan its wait.
        self._wakeup()
        return future

    # -- readiness and draining (Sender thread) -----------------------------------
    def retry_backoff_for(self, attempts: int) -> int:
        """Exponential retry backoff with 20 % jitter (KIP-580)."""
        if attempts <= 0:
            return 0
        base = min(self.retry_backoff_max_ms, self.retry_backoff_ms * (2 ** min(attempts - 1, 20)))
        return int(base * self._rng.uniform(0.8, 1.2)) if base else 0

    def next_expiry_delay_ms(self, now_ms: int) -> int | None:
        """Time until the oldest queued batch passes delivery.timeout.ms (None: nothing
        queued): the Sender must wake for it even when nothing else happens."""
        oldest = min(
            (q.batches[0].created_ms for q in list(self._queues.values()) if q.batches),
            default=None,
        )
        if oldest is None:
            return None
        return max(0, oldest + self.delivery_timeout_ms - now_ms)

    def ready(self, cluster: Cluster, now_ms: int) -> ReadyCheckResult:
        """Nodes with sendable data, and how long until the next one might be (sendable.py)."""
        exhausted = self.pool.queued() > 0
        force = exhausted or self.closed or self._flushes_in_progress > 0
        return ready_nodes(self._queues, cluster, now_ms, self.linger_ms, force, self.muted)

    def drain(
        self, cluster: Cluster, nodes: Sequence[int], max_size: int, now_ms: int
    ) -> dict[int, list[ProducerBatch]]:
        """At most one batch per partition per node, up to ``max_size`` bytes each (sendable.py)."""
        return drain_batches(
            self._queues,
            cluster,
            nodes,
            max_size,
            now_ms,
            drain_index=self._drain_index,
            muted=self.muted,
            txn=self.txn,
        )

    def expired_batches(self, now_ms: int) -> list[ProducerBatch]:
        """Remove and return queued batches older than delivery.timeout.ms."""
        expired: list[ProducerBatch] = []
        limit = self.delivery_timeout_ms
        for q in list(self._queues.values()):
            if not q.batches:
                continue
            with q.lock:
                dq = q.batches
                while dq and now_ms - dq[0].created_ms >= limit:
                    dq[0].seal()
                    expired.append(dq.popleft())
        return expired

    def reenqueue(self, batch: ProducerBatch, now_ms: int) -> None:
        """Put a batch back at the head of its deque for a retry.

        With idempotence, batches carrying a sequence are kept in sequence
        order among the retries at the head, so the broker sees no gap.
        """
        batch.reenqueued(now_ms, self.retry_backoff_for(batch.attempts + 1))
        q = self.queue_for(batch.tp)
        with q.lock:
            dq = q.batches
            if batch.has_sequence:
                i = 0
                while (
                    i < len(dq) and dq[i].has_sequence and dq[i].base_sequence < batch.base_sequence
                ):
                    i += 1
                dq.insert(i, batch)
            else:
                dq.appendleft(batch)

    def deallocate(self, batch: ProducerBatch, reuse_buffer: bool = True) -> None:
        """Return a finished batch's memory (and buffer, once it has one) and forget it.

        ``reuse_buffer=False`` returns only the budget: the buffer may still be
        referenced by a request the connection has not finished writing.
        """
        with self._incomplete_lock:
            self._incomplete.discard(batch)
        self.pool.deallocate(batch.buffer if reuse_buffer else None, batch.allocated_size)

    # -- flush / close --------------------------------------------------------------
    def begin_flush(self) -> None:
        with self._flush_lock:
            self._flushes_in_progress += 1

    def end_flush(self) -> None:
        with self._flush_lock:
            self._flushes_in_progress -= 1

    @property
    def flush_in_progress(self) -> bool:
        return self._flushes_in_progress > 0

    def incomplete_batches(self) -> list[ProducerBatch]:
        with self._incomplete_lock:
            return list(self._incomplete)

    def has_undrained(self) -> bool:
        return any(q.batches for q in list(self._queues.values()))

    def has_incomplete(self) -> bool:
        return bool(self._incomplete)

    def close(self) -> None:
        """No more appends; everything queued becomes sendable at once."""
        self.closed = True
        for q in list(self._queues.values()):
            with q.lock:  # appends in progress finish before we return
                if q.open_batch is not None:
                    q.open_batch.seal()

    def abort_undrained(self, error: BaseException) -> list[ProducerBatch]:
        """Fail every batch still queued (forced close); returns them."""
        aborted: list[ProducerBatch] = []
        for q in list(self._queues.values()):
            with q.lock:
                for batch in q.batches:
                    batch.seal()
                aborted.extend(q.batches)
                q.batches.clear()
        for batch in aborted:
            batch.done(-1, -1, error)
            self.deallocate(batch)
        return aborted
