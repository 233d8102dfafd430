"""The transaction coordinator over an in-memory log and recording partitions.

The broker-level behaviour is tested with real clients in
tests/integration/test_transactions.py; these check the state machine's
corners that a client cannot easily reach: a coordinator that takes over a
prepared transaction finishes it, markers are retried until written, errors
for stale producers, and the records are Kafka's.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Iterable
from typing import TypeVar

from samsa.errors import ErrorCode
from samsa.protocol.internal_records.transaction_records import (
    decode_transaction_key,
    decode_transaction_value,
)
from samsa.transaction import TransactionConfig, TransactionCoordinator, TxnState

T = TypeVar("T")
TopicPartition = tuple[str, int]


def run(coro: Awaitable[T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, 10)

    return asyncio.run(bounded())


class MemoryLog:
    def __init__(self) -> None:
        self.partitions: defaultdict[int, list[tuple[bytes, bytes | None]]] = defaultdict(list)

    async def append(self, partition: int, records: list[tuple[bytes, bytes | None]]) -> None:
        self.partitions[partition].extend(records)

    def read(self, partition: int) -> Iterable[tuple[bytes, bytes | None]]:
        return list(self.partitions[partition])


class Partitions:
    """Markers as partitions receive them; ``unavailable`` ones answer NOT_LEADER a few times."""

    def __init__(self, unavailable: int = 0) -> None:
        self.markers: list[tuple[TopicPartition, int, int, bool]] = []
        self.unavailable = unavailable

    async def write_markers(
        self,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        commit: bool,
        partitions: Iterable[TopicPartition],
    ) -> dict[TopicPartition, ErrorCode]:
        out = {}
        for tp in partitions:
            if self.unavailable > 0:
                self.unavailable -= 1
                out[tp] = ErrorCode.NOT_LEADER_OR_FOLLOWER
            else:
                self.markers.append((tp, producer_id, producer_epoch, commit))
                out[tp] = ErrorCode.NONE
        return out

    async def close(self) -> None:
        pass


def coordinator(
    log: MemoryLog, partitions: Partitions, clock: list[int] | None = None
) -> TransactionCoordinator:
    ids = iter(range(1000, 2000))

    async def allocate() -> int:
        return next(ids)

    now = clock if clock is not None else [1_000]
    return TransactionCoordinator(
        log,
        partitions,
        allocate,
        TransactionConfig(num_partitions=1, marker_retry_backoff_ms=1, end_txn_wait_ms=100),
        time_ms=lambda: now[0],
    )


def test_commit_writes_prepare_markers_then_complete_in_kafkas_records() -> None:
    log, parts = MemoryLog(), Partitions(unavailable=2)

    async def scenario() -> None:
        c = coordinator(log, parts)
        await c.load(0, 7)
        code, pid, epoch = await c.init_producer_id("app", 60_000)
        assert (code, epoch) == (ErrorCode.NONE, 0)
        assert await c.add_partitions("app", pid, epoch, [("t", 0), ("t", 1)]) is ErrorCode.NONE
        assert await c.end_txn("app", pid, epoch, True) is ErrorCode.NONE
        assert c.get("app").state is TxnState.COMPLETE_COMMIT  # type: ignore[union-attr]

    run(scenario())
    assert sorted(tp for tp, *_ in parts.markers) == [("t", 0), ("t", 1)], "retried past errors"
    states = [decode_transaction_value(v).status for _, v in log.partitions[0] if v]
    assert states == [0, 1, 2, 4]  # Empty, Ongoing, PrepareCommit, CompleteCommit
    assert {decode_transaction_key(k) for k, _ in log.partitions[0]} == {"app"}


def test_a_new_coordinator_finishes_a_prepared_transaction() -> None:
    log, parts = MemoryLog(), Partitions()

    async def crash_after_prepare() -> None:
        c = coordinator(log, Partitions(unavailable=10**9))  # markers never get through
        await c.load(0, 1)
        _, pid, epoch = await c.init_producer_id("app", 60_000)
        await c.add_partitions("app", pid, epoch, [("t", 0)])
        await c.end_txn("app", pid, epoch, False)
        await c.shutdown()

    async def take_over() -> TxnState:
        c = coordinator(log, parts)
        await c.load(0, 2)
        for _ in range(100):
            meta = c.get("app")
            if meta is not None and meta.state is TxnState.COMPLETE_ABORT:
                break
            await asyncio.sleep(0.01)
        return c.get("app").state  # type: ignore[union-attr]

    run(crash_after_prepare())
    assert run(take_over()) is TxnState.COMPLETE_ABORT
    assert parts.markers == [(("t", 0), 1000, 0, False)]


def test_a_new_instance_fences_the_old_and_aborts_its_transaction() -> None:
    log, parts = MemoryLog(), Partitions()

    async def scenario() -> None:
        c = coordinator(log, parts)
        await c.load(0, 0)
        _, pid, old = await c.init_producer_id("app", 60_000)
        await c.add_partitions("app", pid, old, [("t", 0)])
        code, same_pid, new = await c.init_producer_id("app", 60_000)
        assert (code, same_pid, new) == (ErrorCode.NONE, pid, old + 2)
        assert parts.markers == [(("t", 0), pid, old + 1, False)]
        assert await c.add_partitions("app", pid, old, [("t", 1)]) is ErrorCode.PRODUCER_FENCED
        assert await c.end_txn("app", pid, old, True) is ErrorCode.PRODUCER_FENCED
        assert await c.end_txn("app", pid + 1, new, True) is ErrorCode.INVALID_PRODUCER_ID_MAPPING
        assert await c.end_txn("app", pid, new, True) is ErrorCode.INVALID_TXN_STATE

    run(scenario())


def test_timeouts_and_coordinator_errors() -> None:
    log, parts, clock = MemoryLog(), Partitions(), [1_000]

    async def scenario() -> None:
        c = coordinator(log, parts, clock)
        assert (await c.init_producer_id("app", 1000))[0] is ErrorCode.NOT_COORDINATOR
        await c.load(0, 0)
        assert (await c.init_producer_id("app", 10**9))[0] is ErrorCode.INVALID_TRANSACTION_TIMEOUT
        _, pid, epoch = await c.init_producer_id("app", 1000)
        await c.add_partitions("app", pid, epoch, [("t", 0)])
        clock[0] += 999
        assert await c.abort_timed_out() == 0
        clock[0] += 2
        assert await c.abort_timed_out() == 1
        await c.completion.wait("app", 5)
        meta = c.get("app")
        assert meta is not None and meta.state is TxnState.COMPLETE_ABORT
        assert meta.producer_epoch == epoch + 1, "the timed-out producer is fenced"
        assert await c.end_txn("app", pid, epoch, True) is ErrorCode.PRODUCER_FENCED

    run(scenario())


def test_idle_transactional_ids_expire_with_a_tombstone() -> None:
    log, parts, clock = MemoryLog(), Partitions(), [1_000]

    async def scenario() -> None:
        c = coordinator(log, parts, clock)
        c.config = TransactionConfig(num_partitions=1, id_expiration_ms=5_000)
        await c.load(0, 0)
        await c.init_producer_id("idle", 60_000)
        _, busy_pid, busy_epoch = await c.init_producer_id("busy", 60_000)
        await c.add_partitions("busy", busy_pid, busy_epoch, [("t", 0)])
        clock[0] += 5_001
        assert await c.expire_transactional_ids() == 1, "an open transaction keeps its id"
        assert c.get("idle") is None and c.get("busy") is not None
        reloaded = coordinator(log, parts, clock)
        await reloaded.load(0, 1)
        assert reloaded.get("idle") is None, "the tombstone is in the log"
        assert reloaded.get("busy") is not None

    run(scenario())
