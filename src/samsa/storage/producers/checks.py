"""Validation of the live append path: Kafka's producer checks for one partition.

Kept apart from recovery because these run on every produce request with a
producer id, before and after the append, and follow a fixed set of rules
that is easiest to check against Kafka's when read alone.

Validation follows current Kafka (``UnifiedLog.analyzeAndValidateProducerState``
and ``ProducerAppendInfo.checkSequence``, 2.5+ / KIP-360), in this order:

1. Duplicate: same epoch and exactly the sequence range of one of the last five
   batches -> :data:`CheckOutcome.DUPLICATE` with the original offsets; the broker
   answers with those and appends nothing.
2. Epoch older than the current one -> ``INVALID_PRODUCER_EPOCH`` (Kafka 2.7+ uses
   this instead of the fatal PRODUCER_FENCED so clients can recover).
3. Newer epoch (a bump) -> the batch must start at sequence 0, else
   ``OUT_OF_ORDER_SEQUENCE_NUMBER``.
4. Same epoch -> ``first_seq`` must follow the last sequence (0 follows 2**31 - 1),
   else ``OUT_OF_ORDER_SEQUENCE_NUMBER``.
5. Unknown producer (no state on this partition) -> accepted at *any* sequence.
   Before KIP-360 brokers answered UNKNOWN_PRODUCER_ID when such a batch did not
   start at 0; since 2.5 Kafka accepts it, because the only way a broker forgets a
   live producer is retention/DeleteRecords/expiry removing its state, and
   refusing would strand the producer (librdkafka only resets on that error).
   ``UNKNOWN_PRODUCER_ID`` is therefore never raised here.

A retry older than the last five batches is not recognised as a duplicate and is
refused as out of order, as in Kafka.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from samsa.errors import ErrorCode, KafkaError
from samsa.storage.producers.entry import NO_PRODUCER_EPOCH, decrement_sequence, in_sequence
from samsa.storage.producers.state_base import ProducerStateBase


class CheckOutcome(Enum):
    OK = "ok"
    DUPLICATE = "duplicate"


class CheckResult(NamedTuple):
    """What to do with a batch: append it, or answer with the original batch's offsets.

    For OK the offset fields are -1. For DUPLICATE they are the first/last offset
    and max timestamp the original batch got, which the produce response repeats.
    """

    outcome: CheckOutcome
    first_offset: int = -1
    last_offset: int = -1
    timestamp: int = -1

    @property
    def is_duplicate(self) -> bool:
        return self.outcome is CheckOutcome.DUPLICATE


CHECK_OK = CheckResult(CheckOutcome.OK)


class ProducerStateChecks(ProducerStateBase):
    """The checks before an append and the record of it after."""

    def check(
        self,
        producer_id: int,
        producer_epoch: int,
        first_seq: int,
        last_seq: int,
        *,
        is_transactional: bool = False,
    ) -> CheckResult:
        """Validate a client batch before it is appended (see the module docstring).

        Raises KafkaError(INVALID_PRODUCER_EPOCH | OUT_OF_ORDER_SEQUENCE_NUMBER |
        INVALID_TXN_STATE). Changes no state: call :meth:`update` after the append.
        """
        if producer_id < 0:
            raise ValueError(f"check() needs a producer id, got {producer_id}")
        entry = self._producers.get(producer_id)
        if entry is None:
            return CHECK_OK  # unknown producer: any sequence (KIP-360)
        duplicate = entry.find_duplicate(producer_epoch, first_seq, last_seq)
        if duplicate is not None:
            return CheckResult(
                CheckOutcome.DUPLICATE,
                duplicate.first_offset,
                duplicate.last_offset,
                duplicate.timestamp,
            )
        current_epoch = entry.producer_epoch
        if producer_epoch < current_epoch:
            raise KafkaError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"producer {producer_id} epoch {producer_epoch} is older than {current_epoch}",
            )
        if producer_epoch != current_epoch:
            if first_seq != 0 and current_epoch != NO_PRODUCER_EPOCH:
                raise KafkaError(
                    ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"producer {producer_id} new epoch {producer_epoch} must start at "
                    f"sequence 0, got {first_seq}",
                )
        elif current_epoch != NO_PRODUCER_EPOCH and not in_sequence(entry.last_seq, first_seq):
            raise KafkaError(
                ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                f"producer {producer_id} sent sequence {first_seq} after {entry.last_seq}",
            )
        if entry.current_txn_first_offset is not None and not is_transactional:
            raise KafkaError(
                ErrorCode.INVALID_TXN_STATE,
                f"producer {producer_id} sent a non-transactional batch inside a transaction",
            )
        return CHECK_OK

    def update(
        self,
        producer_id: int,
        producer_epoch: int,
        first_seq: int,
        last_seq: int,
        first_offset: int,
        last_offset: int,
        timestamp: int,
        *,
        is_transactional: bool = False,
    ) -> None:
        """Record a batch that :meth:`check` accepted and that is now in the log."""
        if producer_id < 0:
            raise ValueError(f"update() needs a producer id, got {producer_id}")
        offset_delta = last_offset - first_offset
        if offset_delta < 0:
            raise ValueError(f"last_offset {last_offset} < first_offset {first_offset}")
        if first_seq >= 0 and decrement_sequence(last_seq, offset_delta) != first_seq:
            # A v2 batch spends one offset and one sequence per record; anything else
            # means the caller mixed up fields, and the snapshot could not store it.
            raise ValueError(
                f"sequence range {first_seq}..{last_seq} does not match offsets "
                f"{first_offset}..{last_offset}"
            )
        self._apply_data_batch(
            producer_id,
            producer_epoch,
            last_seq,
            first_offset,
            last_offset,
            timestamp,
            is_transactional,
        )

    def check_marker(self, producer_id: int, producer_epoch: int, coordinator_epoch: int) -> None:
        """Kafka's ``checkProducerEpoch``/``checkCoordinatorEpoch`` for a marker the
        coordinator asks to write: an older producer epoch is fenced
        (INVALID_PRODUCER_EPOCH), an older coordinator epoch is a zombie
        coordinator (TRANSACTION_COORDINATOR_FENCED)."""
        entry = self._producers.get(producer_id)
        if entry is None:
            return
        if producer_epoch < entry.producer_epoch:
            raise KafkaError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"marker for producer {producer_id} epoch {producer_epoch} older than "
                f"{entry.producer_epoch}",
            )
        if coordinator_epoch < entry.coordinator_epoch:
            raise KafkaError(
                ErrorCode.TRANSACTION_COORDINATOR_FENCED,
                f"marker for producer {producer_id} from coordinator epoch {coordinator_epoch}, "
                f"older than {entry.coordinator_epoch}",
            )
