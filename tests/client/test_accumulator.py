"""RecordAccumulator on a manual clock, without any network."""

from __future__ import annotations

from fakes import ManualClock

from samsa.client.metadata import Cluster, Node, PartitionInfo
from samsa.client.producer.accumulator import RecordAccumulator
from samsa.client.producer.buffer_pool import BufferPool


def make(
    batch_size: int = 300, linger_ms: int = 10, memory: int = 10_000
) -> tuple[RecordAccumulator, ManualClock]:
    clock = ManualClock()
    acc = RecordAccumulator(
        batch_size=batch_size,
        compression=0,
        linger_ms=linger_ms,
        retry_backoff_ms=100,
        retry_backoff_max_ms=100,
        delivery_timeout_ms=1000,
        pool=BufferPool(memory, batch_size),
        clock_ms=clock,
    )
    return acc, clock


CLUSTER = Cluster(
    [Node(1, "a", 1), Node(2, "b", 1)],
    [PartitionInfo("t", p, 1 if p < 2 else 2, 0, (1,), (1,)) for p in range(3)],
)


def test_records_share_a_batch_until_full() -> None:
    acc, clock = make()
    for _ in range(3):
        acc.append(("t", 0), clock.now_ms, None, b"x" * 40, None, None, 0)
    assert len(acc._queues[("t", 0)].batches) == 1
    for _ in range(3):
        acc.append(("t", 0), clock.now_ms, None, b"x" * 40, None, None, 0)
    assert len(acc._queues[("t", 0)].batches) == 2


def test_ready_after_linger_or_when_full() -> None:
    acc, clock = make()
    acc.append(("t", 0), clock.now_ms, None, b"x", None, None, 0)
    res = acc.ready(CLUSTER, clock.now_ms)
    assert res.ready_nodes == set() and res.next_ready_check_delay_ms == 10
    clock.now_ms += 10
    assert acc.ready(CLUSTER, clock.now_ms).ready_nodes == {1}
    for _ in range(6):
        acc.append(("t", 2), clock.now_ms, None, b"y" * 40, None, None, 0)
    assert 2 in acc.ready(CLUSTER, clock.now_ms).ready_nodes  # full, no linger wait


def test_unknown_leader_is_reported() -> None:
    acc, clock = make(linger_ms=0)
    acc.append(("other", 0), clock.now_ms, None, b"x", None, None, 0)
    assert acc.ready(CLUSTER, clock.now_ms).unknown_leader_topics == {"other"}


def test_drain_takes_one_batch_per_partition() -> None:
    acc, clock = make(linger_ms=0)
    for p in (0, 1):
        for _ in range(5):  # 61 bytes each by the upper bound: two batches of 300
            acc.append(("t", p), clock.now_ms, None, b"z" * 40, None, None, 0)
    drained = acc.drain(CLUSTER, [1], 1 << 20, clock.now_ms)
    assert sorted(b.partition for b in drained[1]) == [0, 1]
    assert all(len(acc._queues[("t", p)].batches) == 1 for p in (0, 1))


def test_drain_respects_max_request_size_but_sends_at_least_one() -> None:
    acc, clock = make(linger_ms=0)
    for p in (0, 1):
        acc.append(("t", p), clock.now_ms, None, b"z" * 100, None, None, 0)
    drained = acc.drain(CLUSTER, [1], 50, clock.now_ms)
    assert len(drained[1]) == 1


def test_expired_batches_are_removed_and_reenqueue_goes_to_head() -> None:
    acc, clock = make(linger_ms=0)
    f1 = acc.append(("t", 0), clock.now_ms, None, b"a" * 150, None, None, 0)
    acc.append(("t", 0), clock.now_ms, None, b"b" * 150, None, None, 0)
    first = acc.drain(CLUSTER, [1], 1 << 20, clock.now_ms)[1][0]
    assert first.result is f1._result
    acc.reenqueue(first, clock.now_ms)
    assert acc._queues[("t", 0)].batches[0] is first
    # backing off: not drained before retry.backoff.ms
    assert not acc.drain(CLUSTER, [1], 1 << 20, clock.now_ms + 10)
    clock.now_ms += 1000
    expired = acc.expired_batches(clock.now_ms)
    assert len(expired) == 2 and expired[0] is first


def test_memory_is_bounded_by_buffer_memory() -> None:
    acc, clock = make(batch_size=100, memory=300)
    import pytest

    from samsa.client.errors import BufferExhaustedError

    with pytest.raises(BufferExhaustedError):
        for i in range(100):
            acc.append(("t", i % 3), clock.now_ms, None, b"m" * 80, None, None, 0)
    assert acc.pool.available_memory() < 162  # one 162-byte buffer per record fits, no more


def test_a_retry_the_ready_check_passes_is_also_drained() -> None:
    """Backoff jitter is drawn once per retry: drawn again in drain, it could refuse a
    batch that ready() had just passed, and the Sender slept with no wake-up due."""
    acc, clock = make(linger_ms=0)
    acc.retry_backoff_max_ms = 1000
    acc.append(("t", 0), clock.now_ms, None, b"a", None, None, 0)
    batch = acc.drain(CLUSTER, [1], 1 << 20, clock.now_ms)[1][0]
    for _ in range(50):
        acc.reenqueue(batch, clock.now_ms)
        while not acc.ready(CLUSTER, clock.now_ms).ready_nodes:
            clock.now_ms += 1
        drained = acc.drain(CLUSTER, [1], 1 << 20, clock.now_ms)
        assert drained and drained[1][0] is batch
