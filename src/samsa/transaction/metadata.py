"""What the coordinator knows of one transactional id, and its ``__transaction_state`` record.

The states and their numbers are Kafka's (``TransactionState``): they are
written to the log as ``TransactionStatus`` and shown by DescribeTransactions
and ListTransactions under Kafka's names.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import IntEnum

from samsa.protocol.internal_records.transaction_records import TransactionLogValue

__all__ = ["MAX_EPOCH", "TransactionMetadata", "TxnState"]

# Kafka bumps to a new producer id before the epoch reaches Short.MaxValue.
MAX_EPOCH = 32767

TopicPartition = tuple[str, int]


class TxnState(IntEnum):
    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def kafka_name(self) -> str:
        return _NAMES[self]

    @property
    def is_prepare(self) -> bool:
        return self in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)

    @classmethod
    def from_name(cls, name: str) -> TxnState | None:
        for state, known in _NAMES.items():
            if known.lower() == name.lower():
                return state
        return None


_NAMES = {
    TxnState.EMPTY: "Empty",
    TxnState.ONGOING: "Ongoing",
    TxnState.PREPARE_COMMIT: "PrepareCommit",
    TxnState.PREPARE_ABORT: "PrepareAbort",
    TxnState.COMPLETE_COMMIT: "CompleteCommit",
    TxnState.COMPLETE_ABORT: "CompleteAbort",
    TxnState.DEAD: "Dead",
    TxnState.PREPARE_EPOCH_FENCE: "PrepareEpochFence",
}


@dataclass(frozen=True)
class TransactionMetadata:
    """Immutable: every change is a new value, written to the log before it is kept."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState
    partitions: frozenset[TopicPartition] = field(default_factory=frozenset)
    start_ms: int = -1
    last_update_ms: int = -1
    previous_producer_id: int = -1
    next_producer_id: int = -1
    """Set while a transaction version 2 commit/abort exhausted the epoch: the
    producer id the client continues with (at epoch 0) once it completes."""
    client_transaction_version: int = 0
    """The transaction version of the client's last EndTxn (2: epoch bump per
    transaction); stored so a new coordinator completes it the same way."""

    @property
    def record_version(self) -> int:
        """TransactionLogValue v1 (tagged fields) for transaction version 2, as Kafka writes."""
        return 1 if self.client_transaction_version >= 2 else 0

    def but(self, **changes: object) -> TransactionMetadata:
        return replace(self, **changes)  # type: ignore[arg-type]

    def to_record(self) -> TransactionLogValue:
        by_topic: dict[str, list[int]] = {}
        for topic, index in sorted(self.partitions):
            by_topic.setdefault(topic, []).append(index)
        return TransactionLogValue(
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            timeout_ms=self.timeout_ms,
            status=int(self.state),
            partitions={t: tuple(ids) for t, ids in by_topic.items()},
            last_update_ms=self.last_update_ms,
            start_ms=self.start_ms,
            previous_producer_id=self.previous_producer_id,
            next_producer_id=self.next_producer_id,
            client_transaction_version=self.client_transaction_version,
        )

    @classmethod
    def from_record(cls, transactional_id: str, value: TransactionLogValue) -> TransactionMetadata:
        return cls(
            transactional_id=transactional_id,
            producer_id=value.producer_id,
            producer_epoch=value.producer_epoch,
            timeout_ms=value.timeout_ms,
            state=TxnState(value.status),
            partitions=frozenset(
                (topic, index) for topic, ids in value.partitions.items() for index in ids
            ),
            start_ms=value.start_ms,
            last_update_ms=value.last_update_ms,
            previous_producer_id=value.previous_producer_id,
            next_producer_id=value.next_producer_id,
            client_transaction_version=value.client_transaction_version,
        )
