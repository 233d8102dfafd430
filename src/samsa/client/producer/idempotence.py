"""Idempotent-producer state (the non-transactional part of Kafka's TransactionManager).

The broker de-duplicates a partition's batches by (producer id, epoch,
sequence).  This class owns the producer id and epoch from InitProducerId, the
next sequence per partition (assigned when a batch is first drained and kept
across its retries), the last acknowledged sequence, and which batches are in
flight.  With that, up to five requests per connection can be in flight and a
retry neither duplicates nor reorders records:

* a retried batch is re-queued in sequence order and is only sent again when
  nothing else of its partition is in flight, so the broker sees sequences in
  order;
* OUT_OF_ORDER_SEQUENCE_NUMBER on a batch that follows an unresolved earlier
  batch is retried like any transient error; on the very next expected batch
  it means the broker lost our state, as does UNKNOWN_PRODUCER_ID, and the
  producer bumps its epoch (InitProducerId v3+ with the current id and epoch,
  or a fresh id on older brokers) once nothing is in flight, then starts every
  partition over at sequence 0.

Thread-safety: used only on the Sender thread.
"""

from __future__ import annotations

import logging

from samsa.client.producer.batch import ProducerBatch

__all__ = ["TransactionManager"]

log = logging.getLogger(__name__)

TP = tuple[str, int]
_SEQ_MAX = 2**31 - 1


class TransactionManager:
    def __init__(self, transaction_timeout_ms: int = 60000) -> None:
        self.transaction_timeout_ms = transaction_timeout_ms
        self.producer_id = -1
        self.producer_epoch = -1
        self.bump_requested = False
        self._next_seq: dict[TP, int] = {}
        self._last_acked: dict[TP, int] = {}
        self._in_flight: dict[TP, list[ProducerBatch]] = {}
        self.init_in_flight = False
        self.retry_after_ms = 0
        self.fatal_error: BaseException | None = None
        self.transactional_id: str | None = None

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id >= 0 and not self.bump_requested

    def needs_init_producer_id(self) -> bool:
        """True when the Sender should send InitProducerId now."""
        if self.init_in_flight or self.fatal_error is not None:
            return False
        if self.producer_id < 0:
            return True
        return self.bump_requested and not self.has_in_flight()

    def init_request_body(self, version: int) -> dict[str, object]:
        bump = self.bump_requested and self.producer_id >= 0 and version >= 3
        return {
            "transactional_id": None,
            "transaction_timeout_ms": self.transaction_timeout_ms,
            "producer_id": self.producer_id if bump else -1,
            "producer_epoch": self.producer_epoch if bump else -1,
        }

    def set_producer_id_and_epoch(self, producer_id: int, epoch: int) -> None:
        """A new id or epoch restarts every partition at sequence 0."""
        log.info("producer id %d epoch %d", producer_id, epoch)
        self.producer_id = producer_id
        self.producer_epoch = epoch
        self.bump_requested = False
        self._next_seq.clear()
        self._last_acked.clear()

    def request_epoch_bump(self, reason: str) -> None:
        if not self.bump_requested:
            log.warning("bumping the producer epoch: %s", reason)
        self.bump_requested = True

    # -- per partition ----------------------------------------------------------
    def prepare_for_drain(self, tp: TP, batch: ProducerBatch) -> bool:
        """Called under the deque lock before a batch is drained; False = not now.

        Assigns the sequence on the first drain; a retry (batch already has a
        sequence under the current epoch) waits until nothing of its partition
        is in flight, so retries go out one by one in order.
        """
        if not self.has_producer_id:
            return False
        in_flight = self._in_flight.get(tp)
        if batch.has_sequence and (
            batch.producer_id != self.producer_id or batch.producer_epoch != self.producer_epoch
        ):
            if in_flight:
                return False
            batch.reset_producer_state()
        if batch.has_sequence:
            if in_flight:
                return False
        else:
            seq = self._next_seq.get(tp, 0)
            batch.set_producer_state(self.producer_id, self.producer_epoch, seq)
            self._next_seq[tp] = (seq + batch.record_count) & _SEQ_MAX
        if in_flight is None:
            self._in_flight[tp] = [batch]
        else:
            in_flight.append(batch)
        return True

    def remove_in_flight(self, batch: ProducerBatch) -> None:
        lst = self._in_flight.get(batch.tp)
        if lst is not None:
            try:
                lst.remove(batch)
            except ValueError:
                pass
            if not lst:
                del self._in_flight[batch.tp]

    def has_in_flight(self, tp: TP | None = None) -> bool:
        if tp is None:
            return bool(self._in_flight)
        return bool(self._in_flight.get(tp))

    def on_success(self, batch: ProducerBatch) -> None:
        if batch.producer_epoch == self.producer_epoch and batch.producer_id == self.producer_id:
            last = (batch.base_sequence + batch.record_count - 1) & _SEQ_MAX
            self._last_acked[batch.tp] = last

    def is_next_expected(self, batch: ProducerBatch) -> bool:
        """True if no earlier batch of the partition is unresolved."""
        expected = (self._last_acked.get(batch.tp, -1) + 1) & _SEQ_MAX
        return batch.base_sequence == expected

    def on_batch_failed(self, batch: ProducerBatch, error: BaseException) -> None:
        """A batch failed for good (the transactional manager makes the transaction abortable)."""

    def fail_fatally(self, error: BaseException) -> None:
        self.fatal_error = error
