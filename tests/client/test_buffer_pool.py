from __future__ import annotations

import threading

import pytest

from samsa.client.errors import BufferExhaustedError
from samsa.client.producer.buffer_pool import BufferPool


def test_pooled_buffers_are_reused_and_memory_is_bounded() -> None:
    pool = BufferPool(1024, 256)
    bufs = [pool.allocate(256, 0) for _ in range(4)]
    assert pool.available_memory() == 0
    pool.deallocate(bufs[0])
    again = pool.allocate(256, 0)
    assert again is bufs[0]
    with pytest.raises(BufferExhaustedError, match=r"max\.block\.ms=0"):
        pool.allocate(256, 0)


def test_non_pooled_sizes_return_to_the_budget() -> None:
    pool = BufferPool(1000, 100)
    big = pool.allocate(700, 0)
    assert pool.available_memory() == 300
    pool.deallocate(big)
    assert pool.available_memory() == 1000


def test_free_list_is_released_for_a_large_request() -> None:
    pool = BufferPool(1000, 100)
    small = [pool.allocate(100, 0) for _ in range(10)]
    for b in small:
        pool.deallocate(b)
    assert len(pool.allocate(1000, 0)) == 1000


def test_blocked_allocate_is_released_by_deallocate_from_another_thread() -> None:
    pool = BufferPool(200, 100)
    a = pool.allocate(100, 0)
    pool.allocate(100, 0)
    got: list[bytearray] = []
    waiting = threading.Event()

    def worker() -> None:
        waiting.set()
        got.append(pool.allocate(100, 5000))

    t = threading.Thread(target=worker)
    t.start()
    waiting.wait(2)
    # The worker may not be queued yet; deallocate only wakes queued waiters,
    # so wait for it to queue (event-driven: poll the queue length).
    for _ in range(1000):
        if pool.queued():
            break
        threading.Event().wait(0.001)
    pool.deallocate(a)
    t.join(5)
    assert got and got[0] is a
    assert pool.queued() == 0


def test_timeout_error_is_clear() -> None:
    pool = BufferPool(100, 100)
    pool.allocate(100, 0)
    with pytest.raises(BufferExhaustedError) as info:
        pool.allocate(100, 20)
    assert "buffer.memory=100" in str(info.value)
    assert pool.queued() == 0


def test_request_larger_than_total_memory_is_refused() -> None:
    with pytest.raises(ValueError, match=r"buffer\.memory"):
        BufferPool(100, 10).allocate(101, 0)


def test_a_reservation_takes_budget_and_its_buffer_comes_later() -> None:
    pool = BufferPool(1024, 256)
    pool.reserve(256, 0)
    assert pool.available_memory() == 768
    buf = pool.buffer_for(256)
    assert len(buf) == 256 and pool.available_memory() == 768
    pool.deallocate(buf, 256)
    assert pool.available_memory() == 1024
    pool.reserve(256, 0)
    assert pool.buffer_for(256) is buf, "the pooled buffer is reused at encode time"


def test_a_reservation_returned_without_a_buffer_gives_its_bytes_back() -> None:
    pool = BufferPool(1000, 100)
    pool.reserve(700, 0)
    pool.deallocate(None, 700)
    assert pool.available_memory() == 1000


def test_reservations_drop_free_buffers_instead_of_holding_them_while_batches_fill() -> None:
    """Real memory stays within the budget: free (touched) buffers + reserved <= total."""
    pool = BufferPool(1024, 256)
    bufs = [pool.allocate(256, 0) for _ in range(4)]
    for b in bufs:
        pool.deallocate(b)
    for _ in range(3):
        pool.reserve(256, 0)  # three open batches, none encoded yet
    assert pool.available_memory() == 256
    assert len(pool._free) == 1, "only the unreserved budget may stay as a pooled buffer"
    with pytest.raises(BufferExhaustedError):
        pool.reserve(512, 0)


def test_a_blocked_reservation_is_released_by_deallocate() -> None:
    pool = BufferPool(200, 100)
    pool.reserve(100, 0)
    buf = pool.allocate(100, 0)
    done = threading.Event()

    def worker() -> None:
        pool.reserve(100, 5000)
        done.set()

    t = threading.Thread(target=worker)
    t.start()
    assert not done.wait(0.05)
    pool.deallocate(buf)
    assert done.wait(5)
    t.join()
    assert pool.available_memory() == 0 and pool.queued() == 0
