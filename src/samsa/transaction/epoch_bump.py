"""EndTxn under transaction version 2 (KIP-890 part 2): every commit or abort bumps the epoch.

With transaction version 1 a producer keeps its epoch across transactions, so
a late write of a finished transaction could still land in the next one.
Version 2 closes that hole: the coordinator writes ``PrepareCommit`` or
``PrepareAbort`` at epoch + 1, the markers carry that epoch (so the partitions
refuse anything older), and EndTxn v5 answers the producer id and epoch the
client continues with.  Kafka's ``TransactionCoordinator.endTransaction``.

Since the epoch moves on every EndTxn, "same state, same epoch" no longer
marks a retry: a retried EndTxn is recognised by its epoch being exactly one
below the stored one (or, when the bump exhausted the epoch and a new producer
id took over, by the old id at ``MAX_EPOCH - 1``).  Kept free of I/O so the
state machine is tested on its own; the coordinator persists what it decides.
"""

from __future__ import annotations

from dataclasses import dataclass

from samsa.errors import ErrorCode
from samsa.transaction.metadata import MAX_EPOCH, TransactionMetadata, TxnState

__all__ = [
    "TRANSACTION_VERSION_2",
    "EndTxnDecision",
    "completed",
    "decide_end_txn_v2",
    "epoch_exhausted",
]

TRANSACTION_VERSION_2 = 2

S = TxnState


@dataclass(frozen=True)
class EndTxnDecision:
    """Either an answer now (``prepared`` None) or a prepare state to persist and complete."""

    error: ErrorCode
    producer_id: int = -1
    producer_epoch: int = -1
    prepared: TransactionMetadata | None = None


def epoch_exhausted(meta: TransactionMetadata) -> bool:
    """One more bump would reach Short.MaxValue: the commit/abort moves to a new producer id."""
    return meta.producer_epoch >= MAX_EPOCH - 1


def decide_end_txn_v2(
    meta: TransactionMetadata | None,
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    now_ms: int,
    next_producer_id: int = -1,
) -> EndTxnDecision:
    """What a transaction version 2 EndTxn does to ``meta``.

    ``next_producer_id`` is the id to continue with when ``epoch_exhausted(meta)``
    (the caller allocates it), otherwise -1.
    """
    if meta is None:
        return EndTxnDecision(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    state = meta.state
    retry_on_overflow = (
        meta.previous_producer_id == producer_id
        and producer_epoch == MAX_EPOCH - 1
        and meta.producer_epoch == 0
    )
    retry_on_bump = meta.producer_epoch == producer_epoch + 1
    if meta.producer_id != producer_id and not retry_on_overflow:
        return EndTxnDecision(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    if state.is_prepare:
        valid_epoch = retry_on_bump
    elif state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        valid_epoch = retry_on_bump or retry_on_overflow or producer_epoch == meta.producer_epoch
    else:
        valid_epoch = producer_epoch == meta.producer_epoch
    if not valid_epoch:
        return EndTxnDecision(ErrorCode.PRODUCER_FENCED)
    is_retry = retry_on_bump or retry_on_overflow

    def prepare(no_partition_added: bool) -> EndTxnDecision:
        prepared = meta.but(
            state=S.PREPARE_COMMIT if commit else S.PREPARE_ABORT,
            producer_epoch=meta.producer_epoch + 1,
            next_producer_id=next_producer_id,
            client_transaction_version=TRANSACTION_VERSION_2,
            # An abort with nothing added still needs a start time: Kafka uses now.
            start_ms=now_ms if no_partition_added else meta.start_ms,
            last_update_ms=now_ms,
        )
        if next_producer_id >= 0:
            return EndTxnDecision(ErrorCode.NONE, next_producer_id, 0, prepared)
        return EndTxnDecision(
            ErrorCode.NONE, prepared.producer_id, prepared.producer_epoch, prepared
        )

    current = EndTxnDecision(ErrorCode.NONE, meta.producer_id, meta.producer_epoch)
    if state is S.ONGOING:
        return prepare(no_partition_added=False)
    if state is S.COMPLETE_COMMIT:
        if commit:
            return current if is_retry else EndTxnDecision(ErrorCode.INVALID_TXN_STATE)
        return EndTxnDecision(ErrorCode.INVALID_TXN_STATE) if is_retry else prepare(True)
    if state is S.COMPLETE_ABORT:
        if commit:
            return EndTxnDecision(ErrorCode.INVALID_TXN_STATE)
        return current if is_retry else prepare(True)
    if state.is_prepare:
        same = (state is S.PREPARE_COMMIT) == commit
        return EndTxnDecision(
            ErrorCode.CONCURRENT_TRANSACTIONS if same else ErrorCode.INVALID_TXN_STATE
        )
    if state is S.EMPTY and not commit:
        # A client may abort before it added any partition (an error on its
        # first send); the bump still fences whatever it might have sent.
        return prepare(no_partition_added=True)
    return EndTxnDecision(ErrorCode.INVALID_TXN_STATE)


def completed(meta: TransactionMetadata, now_ms: int) -> TransactionMetadata:
    """The Complete state after the markers; an exhausted epoch hands over to the next id."""
    done = S.COMPLETE_COMMIT if meta.state is S.PREPARE_COMMIT else S.COMPLETE_ABORT
    if meta.next_producer_id >= 0:
        meta = meta.but(
            previous_producer_id=meta.producer_id,
            producer_id=meta.next_producer_id,
            producer_epoch=0,
            next_producer_id=-1,
        )
    return meta.but(state=done, partitions=frozenset(), last_update_ms=now_ms)
