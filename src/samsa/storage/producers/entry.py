"""What a partition remembers about one idempotent producer.

The broker de-duplicates retried produce requests and rejects gaps by comparing
an incoming batch's (epoch, first sequence, last sequence) with what the same
producer appended before. Kafka keeps, per producer id, the current epoch and the
metadata of the last few batches (``ProducerStateEntry.NUM_BATCHES_TO_RETAIN``):
a client has at most 5 requests in flight per partition
(``max.in.flight.requests.per.connection`` <= 5 with idempotence), so any retry it
can send is one of the last 5 batches, and remembering those is enough to answer
the retry with the original offsets.

Sequences are int32 and wrap from 2**31 - 1 back to 0, so all arithmetic on them
goes through the helpers below rather than plain ``+``/``-``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1
NO_COORDINATOR_EPOCH = -1
INT32_MAX = 2**31 - 1

# Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN: matches the client's maximum
# number of in-flight requests per partition when idempotence is on.
NUM_BATCHES_TO_RETAIN = 5


def increment_sequence(sequence: int, increment: int) -> int:
    """``sequence + increment`` in the int32 sequence space, wrapping past 2**31 - 1 to 0."""
    return (sequence + increment) % (INT32_MAX + 1)


def decrement_sequence(sequence: int, decrement: int) -> int:
    """``sequence - decrement`` in the int32 sequence space, wrapping below 0 to 2**31 - 1."""
    return (sequence - decrement) % (INT32_MAX + 1)


def in_sequence(last_seq: int, next_seq: int) -> bool:
    """Whether ``next_seq`` directly follows ``last_seq`` (0 follows 2**31 - 1)."""
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """One appended batch, stored the way Kafka stores it (and its snapshot file does).

    Only the last sequence/offset and their common delta are kept; the first ones are
    derived. A v2 batch assigns one offset and one sequence per record, so
    ``last_offset - first_offset == last_seq - first_seq`` (modulo wraparound) and a
    single delta describes both ranges.
    """

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


def _batch_deque() -> deque[BatchMetadata]:
    return deque(maxlen=NUM_BATCHES_TO_RETAIN)


@dataclass
class ProducerStateEntry:
    """Current epoch and recent batches of one producer id on one partition.

    ``coordinator_epoch`` and ``current_txn_first_offset`` are carried for
    transactions: they are written to and read from snapshots already so the file
    format does not change when transactional produce lands.
    """

    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    coordinator_epoch: int = NO_COORDINATOR_EPOCH
    last_timestamp: int = NO_TIMESTAMP
    current_txn_first_offset: int | None = None
    batches: deque[BatchMetadata] = field(default_factory=_batch_deque)

    @property
    def is_empty(self) -> bool:
        """True when no data batch of the current epoch is remembered."""
        return not self.batches

    @property
    def first_seq(self) -> int:
        return self.batches[0].first_seq if self.batches else NO_SEQUENCE

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def last_data_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    @property
    def last_offset_delta(self) -> int:
        return self.batches[-1].offset_delta if self.batches else 0

    def maybe_update_epoch(self, producer_epoch: int) -> bool:
        """Switch to ``producer_epoch``; a different epoch forgets the old batches.

        Sequences restart at 0 with every epoch, so batches of an older epoch can
        neither be duplicates of nor predecessors to batches of the new one.
        """
        if producer_epoch == self.producer_epoch:
            return False
        self.producer_epoch = producer_epoch
        self.batches.clear()
        return True

    def add_batch(
        self,
        producer_epoch: int,
        last_seq: int,
        last_offset: int,
        offset_delta: int,
        timestamp: int,
    ) -> None:
        """Remember an appended data batch, dropping the oldest beyond the retained five."""
        self.maybe_update_epoch(producer_epoch)
        self.batches.append(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def end_transaction(self, producer_epoch: int, coordinator_epoch: int, timestamp: int) -> None:
        """Apply a COMMIT/ABORT marker: the transaction is over, the epoch may have moved."""
        self.maybe_update_epoch(producer_epoch)
        self.coordinator_epoch = coordinator_epoch
        self.current_txn_first_offset = None
        self.last_timestamp = timestamp

    def find_duplicate(
        self, producer_epoch: int, first_seq: int, last_seq: int
    ) -> BatchMetadata | None:
        """The remembered batch with exactly this epoch and sequence range, if any."""
        if producer_epoch != self.producer_epoch:
            return None
        for batch in self.batches:
            if batch.first_seq == first_seq and batch.last_seq == last_seq:
                return batch
        return None
