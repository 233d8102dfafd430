"""BufferPool: bounded memory for batches, with a free list (Kafka's BufferPool).

The producer may hold at most ``buffer.memory`` bytes of batch buffers.  Buffers
of exactly ``batch.size`` bytes -- the common case -- are kept on a free list
when released and handed out again, so steady-state producing allocates
nothing.  Larger buffers (a record bigger than ``batch.size``) are allocated on
demand and simply dropped when released, their bytes returned to the budget.

When the budget is exhausted, ``allocate`` blocks up to ``max.block.ms``.
Waiters are served strictly in arrival order (one Condition each, in a FIFO)
so a large request cannot be starved by a stream of small ones; memory freed
while the head waiter still needs more is accumulated for it.  On timeout the
caller gets BufferExhaustedError naming the numbers involved.

Thread-safety: all methods may be called from any thread.
"""

from __future__ import annotations

import threading
import time
from collections import deque

from samsa.client.errors import BufferExhaustedError, ProducerClosedError

__all__ = ["BufferPool"]


class BufferPool:
    def __init__(self, total_memory: int, poolable_size: int) -> None:
        self.total_memory = total_memory
        self.poolable_size = poolable_size
        self._lock = threading.Lock()
        self._free: deque[bytearray] = deque()
        self._non_pooled_available = total_memory
        self._waiters: deque[threading.Condition] = deque()
        self._closed = False

    def allocate(self, size: int, max_block_ms: float) -> bytearray:
        """A buffer of ``size`` bytes (contents undefined: reused), blocking up to ``max_block_ms`` for memory."""
        if size > self.total_memory:
            raise ValueError(
                f"attempt to allocate {size} bytes, but buffer.memory is only {self.total_memory}"
            )
        with self._lock:
            if self._closed:
                raise ProducerClosedError("producer is closed")
            if size == self.poolable_size and self._free:
                return self._free.pop()
            free_bytes = len(self._free) * self.poolable_size
            if not self._waiters and self._non_pooled_available + free_bytes >= size:
                self._free_up(size)
                self._non_pooled_available -= size
                return bytearray(size)
            return self._wait_for(size, max_block_ms)

    def _free_up(self, size: int) -> None:
        """Release pooled buffers into the non-pooled budget until ``size`` fits."""
        while self._non_pooled_available < size and self._free:
            self._free.pop()
            self._non_pooled_available += self.poolable_size

    def _wait_for(self, size: int, max_block_ms: float) -> bytearray:
        """Called with the lock held: queue as a waiter until ``size`` is gathered."""
        cond = threading.Condition(self._lock)
        self._waiters.append(cond)
        accumulated = 0
        deadline = time.monotonic() + max_block_ms / 1000.0
        try:
            while accumulated < size:
                left = deadline - time.monotonic()
                timed_out = left <= 0 or not cond.wait(left)
                if timed_out and time.monotonic() >= deadline:
                    raise BufferExhaustedError(
                        f"failed to allocate {size} bytes within max.block.ms={int(max_block_ms)} "
                        f"(buffer.memory={self.total_memory}, available={self.available_memory()}); "
                        "the producer is sending slower than records are produced"
                    )
                if self._closed:
                    raise ProducerClosedError("producer closed while waiting for buffer memory")
                # Only the head waiter takes memory, which keeps the order fair.
                if self._waiters[0] is not cond:
                    continue
                if accumulated == 0 and size == self.poolable_size and self._free:
                    buf = self._free.pop()
                    accumulated = size
                    return buf
                need = size - accumulated
                self._free_up(need)
                got = min(need, self._non_pooled_available)
                self._non_pooled_available -= got
                accumulated += got
            return bytearray(size)
        except BaseException:
            # Give back what this waiter had gathered.
            self._non_pooled_available += accumulated
            raise
        finally:
            self._waiters.remove(cond)
            if self._waiters and (self._non_pooled_available > 0 or self._free):
                self._waiters[0].notify()

    def deallocate(self, buf: bytearray, size: int | None = None) -> None:
        """Return a buffer of ``size`` bytes (as allocated): pooled-size ones go to
        the free list, others back to the budget."""
        if size is None:
            size = len(buf)
        with self._lock:
            if size == self.poolable_size and len(buf) == size:
                self._free.append(buf)
            else:
                self._non_pooled_available += size
            if self._waiters:
                self._waiters[0].notify()

    def available_memory(self) -> int:
        """Bytes not handed out (free-list buffers count as available)."""
        return self._non_pooled_available + len(self._free) * self.poolable_size

    def queued(self) -> int:
        """Threads waiting for memory; the accumulator treats any as "memory exhausted"."""
        return len(self._waiters)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for cond in self._waiters:
                cond.notify_all()
