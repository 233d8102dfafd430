"""The transactional part of Kafka's producer TransactionManager (``transactional.id`` set).

The user thread asks (``init_transactions``, ``send_offsets_to_transaction``,
``commit_transaction``, ``abort_transaction``); the Sender thread does the
talking, one step at a time, as Kafka's Sender does with its
TxnRequestHandlers: it finds the coordinator (FindCoordinator key type 1, or
type 0 for the group of a TxnOffsetCommit), sends the step's request, and
retries it on the errors Kafka retries (a coordinator loading, moved or busy
with markers).  Before a batch of a partition new to the transaction is
drained, AddPartitionsToTxn registers the partition with the coordinator
(``prepare_for_drain`` holds the batch back meanwhile).

Errors surface as in Kafka's producer: a newer instance with the same id
(PRODUCER_FENCED, INVALID_PRODUCER_EPOCH on the coordinator's APIs) is fatal
(:class:`ProducerFencedError`); a failed send inside a transaction makes it
abortable -- commit raises, abort works and the producer goes on.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from samsa.client.producer.batch import ProducerBatch
from samsa.client.producer.idempotence import TransactionManager
from samsa.errors import ErrorCode, KafkaError

__all__ = ["ProducerFencedError", "TransactionStep", "TransactionalManager", "TxnClientState"]

log = logging.getLogger(__name__)

TP = tuple[str, int]
FIND_COORDINATOR = 10
INIT_PRODUCER_ID = 22
ADD_PARTITIONS_TO_TXN = 24
ADD_OFFSETS_TO_TXN = 25
END_TXN = 26
TXN_OFFSET_COMMIT = 28
KEY_TYPE_GROUP = 0
KEY_TYPE_TRANSACTION = 1
_FENCED = frozenset({ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_PRODUCER_EPOCH})
_REDISCOVER = frozenset({ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE})


class ProducerFencedError(KafkaError):
    """Another producer with the same ``transactional.id`` took over: this one must close."""


class TxnClientState(Enum):
    UNINITIALIZED = "UNINITIALIZED"
    READY = "READY"
    IN_TRANSACTION = "IN_TRANSACTION"
    COMMITTING = "COMMITTING"
    ABORTING = "ABORTING"
    ABORTABLE_ERROR = "ABORTABLE_ERROR"
    FATAL_ERROR = "FATAL_ERROR"


@dataclass
class TransactionStep:
    """One request of the transactional protocol and the user's wait for it.

    ``handle`` looks at the response body and returns None when the step is
    done, or the error code to act on (retry, rediscover, or fail)."""

    api_key: int
    build: Callable[[], dict[str, Any]]
    handle: Callable[[dict[str, Any]], ErrorCode | None]
    coordinator: tuple[int, str]  # (key type, key)
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None
    then: TransactionStep | None = None  # sent once this one succeeds

    def finish(self, error: BaseException | None = None) -> None:
        self.error = error
        self.done.set()

    def last(self) -> TransactionStep:
        return self if self.then is None else self.then.last()

    def wait(self, timeout: float | None) -> None:
        """Wait for the whole chain; raise its error."""
        final = self.last()
        if not final.done.wait(timeout):
            raise KafkaError(ErrorCode.REQUEST_TIMED_OUT, "the transactional request timed out")
        if final.error is not None:
            raise final.error


class TransactionalManager(TransactionManager):
    def __init__(self, transactional_id: str, transaction_timeout_ms: int) -> None:
        super().__init__(transaction_timeout_ms)
        self.transactional_id = transactional_id
        self._key = (KEY_TYPE_TRANSACTION, transactional_id)
        self.state = TxnClientState.UNINITIALIZED
        self.coordinators: dict[tuple[int, str], int] = {}
        self.partitions: set[TP] = set()  # registered with the coordinator
        self.pending_partitions: set[TP] = set()  # waiting for AddPartitionsToTxn
        self.step_in_flight = False
        self.abortable_error: BaseException | None = None
        self._steps: deque[TransactionStep] = deque()
        self._lock = threading.Lock()

    @property
    def transactional(self) -> bool:
        return True

    # -- the idempotent machinery, adapted ----------------------------------------------
    def needs_init_producer_id(self) -> bool:
        return False  # only init_transactions() gets a producer id

    def request_epoch_bump(self, reason: str) -> None:
        """A transactional producer cannot bump alone: the transaction must abort."""
        self.on_abortable_error(KafkaError(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, reason))

    def prepare_for_drain(self, tp: TP, batch: ProducerBatch) -> bool:
        if self.state is not TxnClientState.IN_TRANSACTION and self.state not in (
            TxnClientState.COMMITTING,
            TxnClientState.ABORTABLE_ERROR,
        ):
            return False
        if tp not in self.partitions:
            with self._lock:
                self.pending_partitions.add(tp)
            return False
        if not super().prepare_for_drain(tp, batch):
            return False
        batch.is_transactional = True
        return True

    def on_batch_failed(self, batch: ProducerBatch, error: BaseException) -> None:
        """A partition refused our epoch: a newer instance took over (fatal, as
        Kafka's producer treats it); any other failure only dooms the transaction."""
        if isinstance(error, KafkaError) and error.code in _FENCED:
            self.fail_fatally(
                ProducerFencedError(
                    error.code,
                    f"transactional id {self.transactional_id!r} was taken over by a newer "
                    f"producer ({batch.topic}-{batch.partition} refused epoch {batch.producer_epoch})",
                )
            )
        else:
            self.on_abortable_error(error)

    def on_abortable_error(self, error: BaseException) -> None:
        if self.state in (TxnClientState.IN_TRANSACTION, TxnClientState.COMMITTING):
            self.abortable_error = error
            self.state = TxnClientState.ABORTABLE_ERROR

    # -- steps ------------------------------------------------------------------------------
    def enqueue(self, step: TransactionStep) -> TransactionStep:
        with self._lock:
            self._steps.append(step)
        return step

    def next_step(self) -> TransactionStep | None:
        """AddPartitionsToTxn for new partitions first, then the user's steps in order."""
        with self._lock:
            if self.pending_partitions and self.state in (
                TxnClientState.IN_TRANSACTION,
                TxnClientState.COMMITTING,
            ):
                return self._add_partitions_step(sorted(self.pending_partitions))
            return self._steps[0] if self._steps else None

    def step_done(self, step: TransactionStep, error: BaseException | None = None) -> None:
        """The step succeeded (its follow-up goes next) or failed for good."""
        with self._lock:
            if self._steps and self._steps[0] is step:
                self._steps.popleft()
            if error is None and step.then is not None:
                self._steps.appendleft(step.then)
                return
        current: TransactionStep | None = step
        while current is not None:
            current.finish(error)
            current = current.then

    def fail_fatally(self, error: BaseException) -> None:
        super().fail_fatally(error)
        self.state = TxnClientState.FATAL_ERROR
        with self._lock:
            steps, self._steps = list(self._steps), deque()
        for step in steps:
            self.step_done(step, error)

    def coordinator_key(self) -> tuple[int, str]:
        return self._key

    def _add_partitions_step(self, tps: list[TP]) -> TransactionStep:
        def build() -> dict[str, Any]:
            by_topic: dict[str, list[int]] = {}
            for topic, partition in tps:
                by_topic.setdefault(topic, []).append(partition)
            return {
                "v3_and_below_transactional_id": self.transactional_id,
                "v3_and_below_producer_id": self.producer_id,
                "v3_and_below_producer_epoch": self.producer_epoch,
                "v3_and_below_topics": [
                    {"name": t, "partitions": ps} for t, ps in by_topic.items()
                ],
            }

        def handle(body: dict[str, Any]) -> ErrorCode | None:
            results = {
                (t["name"], p["partition_index"]): ErrorCode(p["partition_error_code"])
                for t in body["results_by_topic_v3_and_below"]
                for p in t["results_by_partition"]
            }
            if set(results) != set(tps):
                return ErrorCode.UNKNOWN_SERVER_ERROR  # an answer about other partitions
            codes = set(results.values()) - {ErrorCode.NONE}
            if codes:
                return min(codes, key=lambda c: (not c.retriable, c.value))
            with self._lock:
                self.partitions.update(tps)
                self.pending_partitions.difference_update(tps)
            return None

        return TransactionStep(ADD_PARTITIONS_TO_TXN, build, handle, self.coordinator_key())

    # -- the user's steps -----------------------------------------------------------------
    def init_step(self) -> TransactionStep:
        def build() -> dict[str, Any]:
            return {
                "transactional_id": self.transactional_id,
                "transaction_timeout_ms": self.transaction_timeout_ms,
                "producer_id": -1,
                "producer_epoch": -1,
            }

        def handle(body: dict[str, Any]) -> ErrorCode | None:
            code = ErrorCode(body["error_code"])
            if code is not ErrorCode.NONE:
                return code
            self.set_producer_id_and_epoch(body["producer_id"], body["producer_epoch"])
            self.state = TxnClientState.READY
            return None

        return TransactionStep(INIT_PRODUCER_ID, build, handle, self.coordinator_key())

    def end_step(self, commit: bool) -> TransactionStep:
        def build() -> dict[str, Any]:
            return {
                "transactional_id": self.transactional_id,
                "producer_id": self.producer_id,
                "producer_epoch": self.producer_epoch,
                "committed": commit,
            }

        def handle(body: dict[str, Any]) -> ErrorCode | None:
            code = ErrorCode(body["error_code"])
            if code is not ErrorCode.NONE:
                return code
            self.reset_transaction()
            return None

        return TransactionStep(END_TXN, build, handle, self.coordinator_key())

    def offsets_steps(
        self,
        offsets: dict[TP, tuple[int, str | None]],
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
    ) -> TransactionStep:
        """AddOffsetsToTxn to the coordinator, then TxnOffsetCommit to the group's."""

        def commit_body() -> dict[str, Any]:
            by_topic: dict[str, list[dict[str, Any]]] = {}
            for (topic, partition), (offset, metadata) in sorted(offsets.items()):
                by_topic.setdefault(topic, []).append(
                    {
                        "partition_index": partition,
                        "committed_offset": offset,
                        "committed_leader_epoch": -1,
                        "committed_metadata": metadata,
                    }
                )
            return {
                "transactional_id": self.transactional_id,
                "group_id": group_id,
                "producer_id": self.producer_id,
                "producer_epoch": self.producer_epoch,
                "generation_id": generation_id,
                "member_id": member_id,
                "group_instance_id": group_instance_id,
                "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()],
            }

        def commit_handle(body: dict[str, Any]) -> ErrorCode | None:
            codes = {
                ErrorCode(p["error_code"]) for t in body["topics"] for p in t["partitions"]
            } - {ErrorCode.NONE}
            return min(codes, key=lambda c: (not c.retriable, c.value)) if codes else None

        commit = TransactionStep(
            TXN_OFFSET_COMMIT, commit_body, commit_handle, (KEY_TYPE_GROUP, group_id)
        )

        def add_body() -> dict[str, Any]:
            return {
                "transactional_id": self.transactional_id,
                "producer_id": self.producer_id,
                "producer_epoch": self.producer_epoch,
                "group_id": group_id,
            }

        def add_handle(body: dict[str, Any]) -> ErrorCode | None:
            code = ErrorCode(body["error_code"])
            return None if code is ErrorCode.NONE else code

        return TransactionStep(
            ADD_OFFSETS_TO_TXN, add_body, add_handle, self.coordinator_key(), then=commit
        )

    def reset_transaction(self) -> None:
        with self._lock:
            self.partitions.clear()
            self.pending_partitions.clear()
        self.abortable_error = None
        self.state = TxnClientState.READY


def is_fenced(code: ErrorCode) -> bool:
    return code in _FENCED


def needs_new_coordinator(code: ErrorCode) -> bool:
    return code in _REDISCOVER
