"""Transaction version 2's EndTxn (KIP-890 part 2) on the coordinator over an in-memory log.

Every commit or abort bumps the epoch: the markers carry the bumped epoch, the
answer gives the client the id and epoch to continue with, a retried EndTxn
(one epoch below) is answered as done, and an exhausted epoch hands over to a
new producer id.  The broker-level wire path is EndTxn v5.
"""

from __future__ import annotations

from tests.transaction.test_coordinator import MemoryLog, Partitions, coordinator, run

from samsa.errors import ErrorCode
from samsa.protocol.internal_records.transaction_records import (
    decode_transaction_value,
    encode_transaction_key,
    encode_transaction_value,
)
from samsa.transaction import TxnState
from samsa.transaction.metadata import MAX_EPOCH, TransactionMetadata


def _value_versions(log: MemoryLog) -> list[int]:
    return [int.from_bytes(v[:2], "big") for _, v in log.partitions[0] if v]


def test_a_commit_bumps_the_epoch_and_the_markers_carry_it() -> None:
    log, parts = MemoryLog(), Partitions()

    async def scenario() -> None:
        c = coordinator(log, parts)
        await c.load(0, 3)
        _, pid, epoch = await c.init_producer_id("app", 60_000)
        assert await c.add_partitions("app", pid, epoch, [("t", 0)]) is ErrorCode.NONE
        assert await c.end_txn_v2("app", pid, epoch, True) == (ErrorCode.NONE, pid, epoch + 1)
        assert c.get("app").state is TxnState.COMPLETE_COMMIT  # type: ignore[union-attr]
        # A retry of the same EndTxn (its answer was lost) is answered as done...
        assert await c.end_txn_v2("app", pid, epoch, True) == (ErrorCode.NONE, pid, epoch + 1)
        # ...but the old epoch can no longer add to a transaction.
        assert await c.add_partitions("app", pid, epoch, [("t", 0)]) is ErrorCode.PRODUCER_FENCED
        # The next transaction runs at the bumped epoch and bumps again.
        assert await c.add_partitions("app", pid, epoch + 1, [("t", 1)]) is ErrorCode.NONE
        assert await c.end_txn_v2("app", pid, epoch + 1, False) == (
            ErrorCode.NONE,
            pid,
            epoch + 2,
        )

    run(scenario())
    assert parts.markers == [(("t", 0), 1000, 1, True), (("t", 1), 1000, 2, False)]
    values = [decode_transaction_value(v) for _, v in log.partitions[0] if v]
    assert [v.client_transaction_version for v in values[-2:]] == [2, 2]
    # Kafka writes TransactionLogValue v1 (tagged fields) for transaction version 2.
    assert _value_versions(log)[:2] == [0, 0] and _value_versions(log)[-1] == 1


def test_abort_without_partitions_bumps_the_epoch_and_writes_no_marker() -> None:
    log, parts = MemoryLog(), Partitions()

    async def scenario() -> None:
        c = coordinator(log, parts)
        await c.load(0, 1)
        _, pid, epoch = await c.init_producer_id("app", 60_000)
        assert await c.end_txn_v2("app", pid, epoch, False) == (ErrorCode.NONE, pid, epoch + 1)
        assert c.get("app").state is TxnState.COMPLETE_ABORT  # type: ignore[union-attr]
        # A commit with nothing open is still refused.
        code, *_ = await c.end_txn_v2("app", pid, epoch + 1, True)
        assert code is ErrorCode.INVALID_TXN_STATE

    run(scenario())
    assert parts.markers == []


def test_stale_and_mismatched_end_txn_get_kafkas_errors() -> None:
    log, parts = MemoryLog(), Partitions()

    async def scenario() -> None:
        c = coordinator(log, parts)
        await c.load(0, 1)
        assert (await c.end_txn_v2("nobody", 1, 0, True))[
            0
        ] is ErrorCode.INVALID_PRODUCER_ID_MAPPING
        _, pid, epoch = await c.init_producer_id("app", 60_000)
        await c.add_partitions("app", pid, epoch, [("t", 0)])
        assert (await c.end_txn_v2("app", pid + 7, epoch, True))[0] is (
            ErrorCode.INVALID_PRODUCER_ID_MAPPING
        )
        assert (await c.end_txn_v2("app", pid, epoch + 1, True))[0] is ErrorCode.PRODUCER_FENCED
        assert await c.end_txn_v2("app", pid, epoch, True) == (ErrorCode.NONE, pid, epoch + 1)
        # A retry that asks the other outcome is an invalid transition, not a success.
        assert (await c.end_txn_v2("app", pid, epoch, False))[0] is ErrorCode.INVALID_TXN_STATE
        # Two epochs behind is a fenced zombie.
        await c.add_partitions("app", pid, epoch + 1, [("t", 0)])
        await c.end_txn_v2("app", pid, epoch + 1, True)
        assert (await c.end_txn_v2("app", pid, epoch, True))[0] is ErrorCode.PRODUCER_FENCED

    run(scenario())


def test_an_exhausted_epoch_moves_the_producer_to_a_new_id() -> None:
    log, parts = MemoryLog(), Partitions()
    last = MAX_EPOCH - 1
    ongoing = TransactionMetadata(
        "app", 77, last, 60_000, TxnState.ONGOING, frozenset({("t", 0)}), 500, 500
    )
    log.partitions[0].append(
        (encode_transaction_key("app"), encode_transaction_value(ongoing.to_record()))
    )

    async def scenario() -> None:
        c = coordinator(log, parts)
        await c.load(0, 1)
        new_pid = 1000  # the test allocator's first id
        assert await c.end_txn_v2("app", 77, last, True) == (ErrorCode.NONE, new_pid, 0)
        meta = c.get("app")
        assert meta is not None
        assert (meta.producer_id, meta.producer_epoch, meta.previous_producer_id) == (
            new_pid,
            0,
            77,
        )
        # The client's retry with the old id at the last epoch is recognised.
        assert await c.end_txn_v2("app", 77, last, True) == (ErrorCode.NONE, new_pid, 0)
        assert await c.add_partitions("app", new_pid, 0, [("t", 0)]) is ErrorCode.NONE

    run(scenario())
    # The markers fence the old id at Short.MaxValue, above anything it could send.
    assert parts.markers == [(("t", 0), 77, MAX_EPOCH, True)]


def test_a_new_coordinator_completes_a_prepared_version_2_commit_with_its_handover() -> None:
    log = MemoryLog()
    last = MAX_EPOCH - 1

    async def crash_after_prepare() -> None:
        ongoing = TransactionMetadata(
            "app", 77, last, 60_000, TxnState.ONGOING, frozenset({("t", 0)}), 500, 500
        )
        log.partitions[0].append(
            (encode_transaction_key("app"), encode_transaction_value(ongoing.to_record()))
        )
        c = coordinator(log, Partitions(unavailable=10**9))
        await c.load(0, 1)
        await c.end_txn_v2("app", 77, last, True)
        await c.shutdown()

    parts = Partitions()

    async def take_over() -> TransactionMetadata | None:
        c = coordinator(log, parts)
        await c.load(0, 2)
        await c.completion.wait("app", 5)
        return c.get("app")

    run(crash_after_prepare())
    meta = run(take_over())
    assert meta is not None and meta.state is TxnState.COMPLETE_COMMIT
    assert (meta.producer_id, meta.producer_epoch, meta.client_transaction_version) == (1000, 0, 2)
    assert parts.markers == [(("t", 0), 77, MAX_EPOCH, True)]
