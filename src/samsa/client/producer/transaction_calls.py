"""The application thread's side of a transactional producer (``transactional.id`` set).

``Producer.init_transactions`` and its siblings land here: each checks that the
call fits the transaction's state (raising INVALID_TXN_STATE, or the fatal
error once the producer was fenced), then hands a step to the Sender thread and
waits for it at most ``max.block.ms`` (or the caller's timeout).

Apart from the Producer, whose job is sending records, because the rules of
which call is allowed when are the transaction's own; the wire steps themselves
are built by :class:`~samsa.client.producer.transactions.TransactionalManager`
and sent by the Sender (``txn_sender``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from samsa.client.producer.transactions import (
    TransactionalManager,
    TransactionStep,
    TxnClientState,
)
from samsa.errors import ErrorCode, KafkaError

__all__ = ["TransactionCalls"]


class TransactionCalls:
    """The transactional calls of one Producer, on the application thread."""

    def __init__(
        self,
        txn: TransactionalManager,
        *,
        max_block_ms: int,
        wakeup: Callable[[], None],
        flush: Callable[[float | None], None],
        abort_undrained: Callable[[BaseException], object],
    ) -> None:
        self.txn = txn
        self._max_block_ms = max_block_ms
        self._wakeup = wakeup
        self._flush = flush
        self._abort_undrained = abort_undrained

    def init(self, timeout: float | None) -> None:
        txn = self._usable()
        self._run_step(txn.init_step(), timeout)

    def begin(self) -> None:
        txn = self._usable()
        if txn.state is not TxnClientState.READY:
            raise KafkaError(
                ErrorCode.INVALID_TXN_STATE, f"cannot begin in state {txn.state.value}"
            )
        txn.state = TxnClientState.IN_TRANSACTION

    def send_offsets(self, offsets: Mapping[Any, Any], group: Any, timeout: float | None) -> None:
        txn = self._usable()
        self.check_in_transaction("send offsets")
        wanted = {
            (tp[0], tp[1]): (o, None) if isinstance(o, int) else (o.offset, o.metadata)
            for tp, o in offsets.items()
        }
        if isinstance(group, str):
            group_id, generation, member, instance = group, -1, "", None
        else:
            group_id, generation = group.group_id, group.generation_id
            member, instance = group.member_id, group.group_instance_id
        step = txn.offsets_steps(wanted, group_id, generation, member, instance)
        self._run_step(step, timeout)

    def commit(self, timeout: float | None) -> None:
        txn = self._usable()
        self.check_in_transaction("commit")
        self._flush(timeout)
        if txn.fatal_error is not None:
            raise txn.fatal_error
        if txn.abortable_error is not None:
            raise KafkaError(
                ErrorCode.INVALID_TXN_STATE,
                f"the transaction must be aborted: {txn.abortable_error}",
            )
        txn.state = TxnClientState.COMMITTING
        self._run_step(txn.end_step(commit=True), timeout)

    def abort(self, timeout: float | None) -> None:
        txn = self._usable()
        if txn.state not in (TxnClientState.IN_TRANSACTION, TxnClientState.ABORTABLE_ERROR):
            raise KafkaError(
                ErrorCode.INVALID_TXN_STATE, f"cannot abort in state {txn.state.value}"
            )
        txn.state = TxnClientState.ABORTING
        self._abort_undrained(KafkaError(ErrorCode.INVALID_TXN_STATE, "aborted"))
        self._flush(timeout)
        self._run_step(txn.end_step(commit=False), timeout)

    def check_in_transaction(self, what: str) -> None:
        """Raise unless records and offsets may join the transaction now."""
        txn = self.txn
        if txn.fatal_error is not None:
            raise txn.fatal_error
        if txn.state is TxnClientState.ABORTABLE_ERROR:
            raise KafkaError(
                ErrorCode.INVALID_TXN_STATE,
                f"cannot {what}: the transaction must be aborted ({txn.abortable_error})",
            )
        if txn.state is not TxnClientState.IN_TRANSACTION:
            raise KafkaError(
                ErrorCode.INVALID_TXN_STATE,
                f"cannot {what} in state {txn.state.value}: call begin_transaction() first",
            )

    def _usable(self) -> TransactionalManager:
        if self.txn.fatal_error is not None:
            raise self.txn.fatal_error
        return self.txn

    def _run_step(self, step: TransactionStep, timeout: float | None) -> None:
        self.txn.enqueue(step)
        self._wakeup()
        step.wait(self._max_block_ms / 1000 if timeout is None else timeout)
