"""BufferPool: bounded memory for batches, with a free list (Kafka's BufferPool).

The producer may hold at most ``buffer.memory`` bytes of batch buffers.  Buffers
of exactly ``batch.size`` bytes -- the common case -- are kept on a free list
when released and handed out again, so steady-state producing allocates
nothing.  Larger buffers (a record bigger than ``batch.size``) are allocated on
demand and simply dropped when released, their bytes returned to the budget.

Batches do not hold a buffer while they fill: they ``reserve`` their share
when opened and take the buffer (``buffer_for``) only when the Sender encodes
them.  An open batch's records are still Python objects, so a buffer held
beside them would count the same records twice in real memory; reserving
instead keeps the memory the producer really touches (pooled buffers, encoded
batches, open batches' columns) within ``buffer.memory``.  To keep that
true, a reservation that needs more than the unpooled budget drops free-list
buffers rather than handing them to a batch that cannot use them yet.

When the budget is exhausted, ``allocate`` and ``reserve`` block up to ``max.block.ms``.
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
        buf = self._acquire(size, max_block_ms, take_free=True)
        return buf if buf is not None else bytearray(size)

    def reserve(self, size: int, max_block_ms: float) -> None:
        """Set ``size`` bytes of the budget aside, blocking up to ``max_block_ms``.

        The buffer comes later from :meth:`buffer_for`; give the bytes back with
        :meth:`deallocate` (passing the buffer if one was taken, else None).
        """
        self._acquire(size, max_block_ms, take_free=False)

    def buffer_for(self, size: int) -> bytearray:
        """A buffer for ``size`` bytes already reserved: a pooled one if free, else new."""
        with self._lock:
            if size == self.poolable_size and self._free:
                # The reservation now owns this buffer's bytes: its own go back.
                self._non_pooled_available += size
                if self._waiters:
                    self._waiters[0].notify()
                return self._free.pop()
        return bytearray(size)

    def _acquire(self, size: int, max_block_ms: float, take_free: bool) -> bytearray | None:
        """Take ``size`` bytes of budget; a free pooled buffer with them if ``take_free``."""
        if size > self.total_memory:
            raise ValueError(
                f"attempt to allocate {size} bytes, but buffer.memory is only {self.total_memory}"
            )
        with self._lock:
            if self._closed:
                raise ProducerClosedError("producer is closed")
            if take_free and size == self.poolable_size and self._free:
                return self._free.pop()
            free_bytes = len(self._free) * self.poolable_size
            if not self._waiters and self._non_pooled_available + free_bytes >= size:
                self._free_up(size)
                self._non_pooled_available -= size
                return None
            return self._wait_for(size, max_block_ms, take_free)

    def _free_up(self, size: int) -> None:
        """Release pooled buffers into the non-pooled budget until ``size`` fits."""
        while self._non_pooled_available < size and self._free:
            self._free.pop()
            self._non_pooled_available += self.poolable_size

    def _wait_for(self, size: int, max_block_ms: float, take_free: bool) -> bytearray | None:
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
                if take_free and accumulated == 0 and size == self.poolable_size and self._free:
                    buf = self._free.pop()
                    accumulated = size
                    return buf
                need = size - accumulated
                self._free_up(need)
                got = min(need, self._non_pooled_available)
                self._non_pooled_available -= got
                accumulated += got
            return None
        except BaseException:
            # Give back what this waiter had gathered.
            self._non_pooled_available += accumulated
            raise
        finally:
            self._waiters.remove(cond)
            if self._waiters and (self._non_pooled_available > 0 or self._free):
                self._waiters[0].notify()

    def deallocate(self, buf: bytearray | None, size: int | None = None) -> None:
        """Return ``size`` bytes (as allocated or reserved) and their buffer if any:
        pooled-size buffers go to the free list, other bytes back to the budget."""
        if size is None:
            assert buf is not None, "deallocating a reservation needs its size"
            size = len(buf)
        with self._lock:
            if buf is not None and size == self.poolable_size and len(buf) == size:
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
