"""Sender: the producer's background I/O thread (Kafka's Sender).

Each loop: obtain a producer id if idempotence needs one (``producer_id_requests``),
or send the next transactional step (``txn_sender``); ask the accumulator
which leaders have sendable data; keep only those whose connection is ready
(this is where ``max.in.flight.requests.per.connection`` bites); drain at most
one batch per partition into one Produce request per broker; fail batches past
``delivery.timeout.ms``; then ``NetworkClient.poll`` for at most as long as
nothing can become sendable.

Responses: success completes the batch's futures; retriable errors put the
batch back at the head of its deque with backoff (and refresh metadata when the
error means our leader information is stale); anything else fails the batch.
With ``acks=0`` the request has no response and batches complete once written.

Closing: ``initiate_close`` lets the loop drain everything queued and in flight
first; ``force_close`` fails what is left.  Either way every future resolves.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from samsa.client.errors import (
    DeliveryTimeoutError,
    DisconnectedError,
    ProducerClosedError,
    RecordTooLargeError,
)
from samsa.client.metadata import Metadata
from samsa.client.network.in_flight import ClientRequest, ClientResponse
from samsa.client.network.network_client import NetworkClient
from samsa.client.producer.accumulator import RecordAccumulator
from samsa.client.producer.batch import ProducerBatch
from samsa.client.producer.idempotence import TransactionManager
from samsa.client.producer.producer_id_requests import ProducerIdRequests
from samsa.client.producer.transactions import TransactionalManager
from samsa.client.producer.txn_sender import TransactionalRequests
from samsa.errors import ErrorCode, KafkaError

__all__ = ["Sender"]

log = logging.getLogger(__name__)

PRODUCE = 0

# Errors after which our idea of who leads the partition is likely stale.
_INVALIDATES_METADATA = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.NETWORK_EXCEPTION,
        ErrorCode.REQUEST_TIMED_OUT,
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
        ErrorCode.KAFKA_STORAGE_ERROR,
    }
)


def _clock() -> int:
    return int(time.monotonic() * 1000)


class Sender:
    def __init__(
        self,
        client: NetworkClient,
        metadata: Metadata,
        accumulator: RecordAccumulator,
        *,
        acks: int,
        retries: int,
        request_timeout_ms: int,
        max_request_size: int,
        delivery_timeout_ms: int,
        guarantee_order: bool,
        transaction_manager: TransactionManager | None = None,
        on_batch_done: Callable[[ProducerBatch], None] | None = None,
        clock_ms: Callable[[], int] = _clock,
    ) -> None:
        self.client = client
        self.metadata = metadata
        self.accumulator = accumulator
        self.acks = acks
        self.retries = retries
        self.request_timeout_ms = request_timeout_ms
        self.max_request_size = max_request_size
        self.delivery_timeout_ms = delivery_timeout_ms
        self.guarantee_order = guarantee_order
        self.txn = transaction_manager
        self._on_batch_done = on_batch_done
        self._clock = clock_ms
        self.running = True
        self.forced = False
        self._in_flight_batches: dict[int, ProducerBatch] = {}  # id(batch) -> batch
        self._txn_requests: TransactionalRequests | None = None
        self._pid_requests: ProducerIdRequests | None = None
        backoff_ms = accumulator.retry_backoff_ms
        if isinstance(transaction_manager, TransactionalManager):
            self._txn_requests = TransactionalRequests(client, transaction_manager, backoff_ms)
        elif transaction_manager is not None:
            self._pid_requests = ProducerIdRequests(client, transaction_manager, backoff_ms)
        self._thread: threading.Thread | None = None

    # -- thread lifecycle ------------------------------------------------------------
    def start(self, name: str) -> None:
        self._thread = threading.Thread(target=self.run, name=name, daemon=True)
        self._thread.start()

    def run(self) -> None:
        try:
            while self.running:
                self.run_once()
            # Graceful close: finish what is queued and in flight.
            while not self.forced and (
                self.accumulator.has_undrained() or self.client.has_in_flight()
            ):
                self.run_once()
        except Exception:
            log.exception("producer sender thread failed")
        finally:
            if self.forced or self.accumulator.has_incomplete():
                self._abort_all(ProducerClosedError("producer closed before delivery"))
            self.client.close()

    def wakeup(self) -> None:
        self.client.wakeup()

    def initiate_close(self) -> None:
        self.running = False
        self.accumulator.close()
        self.wakeup()

    def force_close(self) -> None:
        self.forced = True
        self.initiate_close()

    def join(self, timeout: float | None) -> bool:
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    # -- one iteration -------------------------------------------------------------------
    def run_once(self) -> None:
        now = self._clock()
        txn = self.txn
        if txn is not None:
            if txn.fatal_error is not None:
                self._abort_all(txn.fatal_error)
            elif self._txn_requests is not None:
                self._txn_requests.maybe_send(now)
            elif self._pid_requests is not None and self._pid_requests.maybe_send(now):
                self.client.poll(self.request_timeout_ms, now)
                return
        timeout = self._send_producer_data(now)
        self.client.poll(timeout, now)

    def _send_producer_data(self, now: int) -> int:
        cluster = self.metadata.cluster
        result = self.accumulator.ready(cluster, now)
        if result.unknown_leader_topics:
            for topic in result.unknown_leader_topics:
                self.metadata.add_topic(topic)
            self.metadata.request_update()
        poll_timeout = result.next_ready_check_delay_ms
        nodes: list[int] = []
        for node in result.ready_nodes:
            if self.client.ready(node, now):
                nodes.append(node)
            else:
                poll_timeout = min(poll_timeout, self.client.connection_delay_ms(node, now))
        batches = self.accumulator.drain(cluster, nodes, self.max_request_size, now)
        if self.guarantee_order:
            for node_batches in batches.values():
                for b in node_batches:
                    self.accumulator.muted.add(b.tp)
        self._expire(now)
        expiry = self.accumulator.next_expiry_delay_ms(now)
        if expiry is not None:
            poll_timeout = min(poll_timeout, expiry)
        if batches:
            poll_timeout = 0
            for node, node_batches in batches.items():
                self._send_produce_request(node, node_batches, now)
        txn = self.txn
        if txn is not None and (
            not txn.has_producer_id
            or (self._txn_requests is not None and self._txn_requests.txn.next_step() is not None)
        ):
            poll_timeout = min(poll_timeout, self.accumulator.retry_backoff_ms)
        return max(0, poll_timeout)

    def _expire(self, now: int) -> None:
        for batch in self.accumulator.expired_batches(now):
            if self.txn is not None and batch.has_sequence:
                # A retry expiring in the queue leaves a gap in its partition's sequences.
                self.txn.request_epoch_bump("a batch waiting for its retry expired")
            self._fail(batch, DeliveryTimeoutError(self._expiry_message(batch, now)), now)
        limit = self.delivery_timeout_ms
        for batch in list(self._in_flight_batches.values()):
            if now - batch.created_ms >= limit:
                if self.txn is not None:
                    # The outcome is unknown: sequences may now have a gap.
                    self.txn.request_epoch_bump("an in-flight batch expired")
                # Its request may still be queued on the connection, written from
                # the batch's own buffer: that buffer must not be pooled for reuse.
                self._fail(
                    batch,
                    DeliveryTimeoutError(self._expiry_message(batch, now)),
                    now,
                    buffer_in_use=True,
                )

    @staticmethod
    def _expiry_message(batch: ProducerBatch, now: int) -> str:
        return (
            f"expiring {batch.record_count} record(s) for {batch.topic}-{batch.partition}: "
            f"{now - batch.created_ms} ms passed since batch creation (delivery.timeout.ms)"
        )

    # -- requests ------------------------------------------------------------------------
    def _send_produce_request(self, node: int, batches: list[ProducerBatch], now: int) -> None:
        by_topic: dict[str, list[dict[str, Any]]] = {}
        by_tp: dict[tuple[str, int], ProducerBatch] = {}
        for batch in batches:
            by_topic.setdefault(batch.topic, []).append(
                {"index": batch.partition, "records": batch.records()}
            )
            by_tp[batch.tp] = batch
            self._in_flight_batches[id(batch)] = batch
        body = {
            "transactional_id": None if self.txn is None else self.txn.transactional_id,
            "acks": self.acks,
            "timeout_ms": self.request_timeout_ms,
            "topic_data": [{"name": t, "partition_data": ps} for t, ps in by_topic.items()],
        }
        request = ClientRequest(
            node,
            PRODUCE,
            body,
            callback=lambda resp: self._handle_produce_response(resp, by_tp),
            expect_response=self.acks != 0,
            created_ms=now,
        )
        self.client.send(request, now)

    def _handle_produce_response(
        self, resp: ClientResponse, batches: dict[tuple[str, int], ProducerBatch]
    ) -> None:
        now = resp.received_ms
        if resp.disconnected:
            code = ErrorCode.REQUEST_TIMED_OUT if resp.timed_out else ErrorCode.NETWORK_EXCEPTION
            msg = f"node {resp.request.node_id} {'timed out' if resp.timed_out else 'disconnected'}"
            for batch in batches.values():
                self._complete(batch, code, -1, -1, now, msg)
            return
        if resp.version_mismatch is not None:
            for batch in batches.values():
                self._complete(
                    batch, ErrorCode.UNSUPPORTED_VERSION, -1, -1, now, resp.version_mismatch
                )
            return
        if resp.body is None:  # acks=0: done once written
            for batch in batches.values():
                self._complete(batch, ErrorCode.NONE, -1, -1, now, None)
            return
        for topic in resp.body["responses"]:
            name = topic["name"]
            for p in topic["partition_responses"]:
                found = batches.pop((name, p["index"]), None)
                if found is None:
                    continue
                self._complete(
                    found,
                    ErrorCode(p["error_code"]),
                    p["base_offset"],
                    p.get("log_append_time_ms", -1),
                    now,
                    p.get("error_message"),
                )
        for batch in batches.values():  # the broker left a partition out
            self._complete(
                batch, ErrorCode.UNKNOWN_SERVER_ERROR, -1, -1, now, "no response for partition"
            )

    def _complete(
        self,
        batch: ProducerBatch,
        code: ErrorCode,
        base_offset: int,
        log_append_time: int,
        now: int,
        message: str | None,
    ) -> None:
        self._in_flight_batches.pop(id(batch), None)
        self.accumulator.muted.discard(batch.tp)
        txn = self.txn
        if txn is not None:
            txn.remove_in_flight(batch)
        if batch.final:
            return  # expired while in flight; its futures already failed
        if code is ErrorCode.NONE or code is ErrorCode.DUPLICATE_SEQUENCE_NUMBER:
            if txn is not None:
                txn.on_success(batch)
            if code is ErrorCode.DUPLICATE_SEQUENCE_NUMBER:
                base_offset = -1
            self._finish(batch, base_offset, log_append_time, None)
            return
        retriable = code.retriable
        if txn is not None and batch.has_sequence:
            if code is ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER:
                if txn.is_next_expected(batch):
                    txn.request_epoch_bump(f"{code.name} on {batch.topic}-{batch.partition}")
                retriable = True
            elif code is ErrorCode.UNKNOWN_PRODUCER_ID:
                txn.request_epoch_bump(f"{code.name} on {batch.topic}-{batch.partition}")
                retriable = True
            elif code is ErrorCode.INVALID_PRODUCER_EPOCH and (
                batch.producer_epoch != txn.producer_epoch or txn.bump_requested
            ):
                retriable = True
        if (
            retriable
            and batch.attempts < self.retries
            and now - batch.created_ms < self.delivery_timeout_ms
            and not self.forced
        ):
            log.info(
                "retrying %s-%d (attempt %d): %s%s",
                batch.topic,
                batch.partition,
                batch.attempts + 1,
                code.name,
                f" ({message})" if message else "",
            )
            if code in _INVALIDATES_METADATA:
                self.metadata.request_update()
            self.accumulator.reenqueue(batch, now)
            return
        if code in _INVALIDATES_METADATA:
            self.metadata.request_update()
        if txn is not None and batch.has_sequence and batch.producer_epoch == txn.producer_epoch:
            # The broker did not store these sequences, so the next batch of the
            # partition would leave a gap and be refused OUT_OF_ORDER_SEQUENCE_NUMBER
            # for good: start over under a new epoch, as Kafka's producer does.
            txn.request_epoch_bump(f"{code.name} failed a batch of {batch.topic}-{batch.partition}")
        error: KafkaError
        if code is ErrorCode.MESSAGE_TOO_LARGE:
            error = RecordTooLargeError(
                message or f"batch of {batch.size_bytes} bytes refused by the broker"
            )
        elif code is ErrorCode.NETWORK_EXCEPTION:
            error = DisconnectedError(message or "disconnected")
        else:
            error = KafkaError(code, message or "")
        self._fail(batch, error, now)

    def _finish(
        self,
        batch: ProducerBatch,
        base_offset: int,
        log_append_time: int,
        error: BaseException | None,
        buffer_in_use: bool = False,
    ) -> None:
        if batch.done(base_offset, log_append_time, error):
            if self._on_batch_done is not None:
                self._on_batch_done(batch)
            self.accumulator.deallocate(batch, reuse_buffer=not buffer_in_use)

    def _fail(
        self, batch: ProducerBatch, error: BaseException, now: int, buffer_in_use: bool = False
    ) -> None:
        self._in_flight_batches.pop(id(batch), None)
        self.accumulator.muted.discard(batch.tp)
        if self.txn is not None:
            self.txn.on_batch_failed(batch, error)
        self._finish(batch, -1, -1, error, buffer_in_use)

    def _abort_all(self, error: BaseException) -> None:
        self.accumulator.abort_undrained(error)
        for batch in list(self._in_flight_batches.values()):
            self._fail(batch, error, 0)
        for batch in self.accumulator.incomplete_batches():
            self._finish(batch, -1, -1, error)
