"""Producer: the public façade (Kafka's KafkaProducer).

``send()`` does only cheap, local work on the caller's thread -- interceptors,
serializers, the partitioner, and an append to the RecordAccumulator -- and
returns a future.  A single Sender thread does all network I/O.  The first
send to a topic blocks (at most ``max.block.ms``) until its metadata is known;
later sends read the cached snapshot without locking.

``close()`` stops new sends, lets the Sender deliver everything queued and in
flight, and only after ``timeout`` fails whatever is left: when it returns,
every future has resolved.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from samsa.client.config import COMMON_DEFS, PRODUCER_DEFS, parse_config, validate_producer
from samsa.client.errors import KafkaTimeoutError, ProducerClosedError, RecordTooLargeError
from samsa.client.metadata import Metadata, PartitionInfo
from samsa.client.network.network_client import NetworkClient
from samsa.client.network.security import ClientSecurity
from samsa.client.producer.accumulator import PartitionQueue, RecordAccumulator
from samsa.client.producer.batch import (
    BATCH_OVERHEAD,
    RECORD_OVERHEAD,
    DeliveryCallback,
    ProducerBatch,
    estimate_record_size,
)
from samsa.client.producer.buffer_pool import BufferPool
from samsa.client.producer.future import (
    FailedFuture,
    FutureRecordMetadata,
    RecordMetadata,
)
from samsa.client.producer.idempotence import TransactionManager
from samsa.client.producer.partitioner import Partitioner
from samsa.client.producer.sender import Sender
from samsa.client.producer.transaction_calls import TransactionCalls
from samsa.client.producer.transactions import TransactionalManager
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.batches.record_builder import RecordHeader as Header

__all__ = ["Producer"]

log = logging.getLogger(__name__)
_ids = itertools.count(1)
_RECORD_OVERHEAD = RECORD_OVERHEAD
_time_ns = time.time_ns


def _monotonic_ms() -> int:
    return int(time.monotonic() * 1000)


def _check_bytes(data: object, what: str) -> None:
    """Records are encoded later on the Sender thread: refuse what it cannot encode now."""
    if data is not None and not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(
            f"{what} must be bytes (or set {what}.serializer), not {type(data).__name__}"
        )


class Producer:
    """Asynchronous, batching Kafka producer.  Thread-safe: share one per process."""

    def __init__(self, config: Mapping[str, Any] | None = None, **overrides: Any) -> None:
        values = dict(config or {})
        values.update(overrides)
        cfg = parse_config(COMMON_DEFS + PRODUCER_DEFS, values, "producer")
        validate_producer(cfg)
        self.config = cfg
        self._client_id = (
            cfg["client.id"] if "client.id" in values else f"samsa-producer-{next(_ids)}"
        )
        self._max_block_ms: int = cfg["max.block.ms"]
        self._max_request_size: int = cfg["max.request.size"]
        self._buffer_memory: int = cfg["buffer.memory"]
        self._max_record_size = min(self._max_request_size - BATCH_OVERHEAD, self._buffer_memory)
        self._key_serializer = cfg["key.serializer"]
        self._value_serializer = cfg["value.serializer"]
        self._interceptors: list[Any] = cfg["interceptors"]
        self._partitioner = Partitioner(cfg["partitioner"], cfg["partitioner.ignore.keys"])
        self._metadata = Metadata(
            cfg["bootstrap.servers"], cfg["metadata.max.age.ms"], cfg["retry.backoff.ms"]
        )
        self._txn: TransactionManager | None = None
        if cfg["transactional.id"] is not None:
            self._txn = TransactionalManager(cfg["transactional.id"], cfg["transaction.timeout.ms"])
        elif cfg["enable.idempotence"]:
            self._txn = TransactionManager(cfg["transaction.timeout.ms"])
        self._pool = BufferPool(cfg["buffer.memory"], cfg["batch.size"])
        self._client = NetworkClient(
            self._metadata,
            client_id=self._client_id,
            max_in_flight=cfg["max.in.flight.requests.per.connection"],
            request_timeout_ms=cfg["request.timeout.ms"],
            reconnect_backoff_ms=cfg["reconnect.backoff.ms"],
            reconnect_backoff_max_ms=cfg["reconnect.backoff.max.ms"],
            connections_max_idle_ms=cfg["connections.max.idle.ms"],
            connection_setup_timeout_ms=cfg["socket.connection.setup.timeout.ms"],
            send_buffer_bytes=cfg["send.buffer.bytes"],
            receive_buffer_bytes=cfg["receive.buffer.bytes"],
            keepalive=cfg["socket.keepalive.enable"],
            nodelay=cfg["socket.nagle.disable"],
            security=ClientSecurity.from_config(cfg),
        )
        self._accumulator = RecordAccumulator(
            batch_size=cfg["batch.size"],
            compression=cfg["compression.type"],
            linger_ms=cfg["linger.ms"],
            retry_backoff_ms=cfg["retry.backoff.ms"],
            retry_backoff_max_ms=cfg["retry.backoff.max.ms"],
            delivery_timeout_ms=cfg["delivery.timeout.ms"],
            pool=self._pool,
            clock_ms=_monotonic_ms,
            transaction_manager=self._txn,
            wakeup=self._client.wakeup,
        )
        self._sender = Sender(
            self._client,
            self._metadata,
            self._accumulator,
            acks=cfg["acks"],
            retries=cfg["retries"],
            request_timeout_ms=cfg["request.timeout.ms"],
            max_request_size=cfg["max.request.size"],
            delivery_timeout_ms=cfg["delivery.timeout.ms"],
            guarantee_order=cfg["max.in.flight.requests.per.connection"] == 1,
            transaction_manager=self._txn,
        )
        self._transactions: TransactionCalls | None = None
        if isinstance(self._txn, TransactionalManager):
            self._transactions = TransactionCalls(
                self._txn,
                max_block_ms=self._max_block_ms,
                wakeup=self._sender.wakeup,
                flush=self.flush,
                abort_undrained=self._accumulator.abort_undrained,
            )
        self._closed = False
        # send()'s fast path: keyless records, nothing user-defined to run first.
        self._fast = (
            not self._interceptors
            and self._key_serializer is None
            and self._value_serializer is None
            and self._partitioner.sticky_keyless
            and cfg["transactional.id"] is None  # each send checks the transaction's state
        )
        # topic -> the queue of its sticky partition, for send()'s fast path;
        # set by the general path each time it appends a sticky record.
        self._fast_queues: dict[str, PartitionQueue] = {}
        self._sender.start(f"samsa-producer-network-thread | {self._client_id}")

    # -- sending --------------------------------------------------------------------------
    def send(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        headers: Sequence[Header] | Mapping[str, bytes | None] | None = None,
        partition: int | None = None,
        timestamp: int | None = None,
        on_delivery: DeliveryCallback | None = None,
    ) -> FutureRecordMetadata:
        """Queue a record; returns a future of its RecordMetadata.

        ``on_delivery(metadata, error)`` runs on the Sender thread once the record
        is acknowledged or has failed (exactly one of the two is None).  Blocks
        only for unknown-topic metadata or exhausted buffer.memory, each at most
        ``max.block.ms``; raises KafkaTimeoutError / BufferExhaustedError then.
        """
        # Fast path -- a keyless record of bytes to a topic whose sticky
        # partition already has an open batch, with no interceptors or
        # serializers configured.  This is RecordAccumulator.append's hot path
        # written out here: the call alone would cost ~15 % of send().
        if key is None and partition is None and headers is None:
            q = self._fast_queues.get(topic)
            if q is not None and type(value) is bytes:
                value_size = len(value)
                size = _RECORD_OVERHEAD + value_size
                if timestamp is None:
                    timestamp = _time_ns() // 1_000_000
                # Never None: a queue is cached only after a batch was opened in it.
                batch: ProducerBatch = q.open_batch  # type: ignore[assignment]
                lock = q.lock
                lock.acquire()
                try:
                    estimated = batch.estimated + size
                    if estimated <= batch.limit and size <= self._max_record_size:
                        values = batch.values
                        offset = len(values)
                        values.append(value)
                        batch.timestamps.append(timestamp)
                        batch.estimated = estimated
                        future: FutureRecordMetadata = FutureRecordMetadata(
                            (batch.result, offset, timestamp, -1, value_size),
                        )
                        if on_delivery is not None:
                            batch.thunks.append((future, on_delivery))
                        return future
                finally:
                    lock.release()
        return self._send(topic, value, key, headers, partition, timestamp, on_delivery)

    def _send(
        self,
        topic: str,
        value: Any,
        key: Any,
        headers: Sequence[Header] | Mapping[str, bytes | None] | None,
        partition: int | None,
        timestamp: int | None,
        on_delivery: DeliveryCallback | None,
    ) -> FutureRecordMetadata:
        """The general path: interceptors, metadata wait, serializers, partitioner, append."""
        if self._closed:
            raise ProducerClosedError("cannot send after the producer is closed")
        if self._transactions is not None:
            self._transactions.check_in_transaction("send")
        if self._interceptors:
            topic, value, key, headers, partition, timestamp = self._on_send(
                topic, value, key, headers, partition, timestamp
            )
            on_delivery = self._wrap_interceptors(on_delivery)
        cluster = self._metadata.cluster
        ps = cluster.partitions_by_topic.get(topic)
        if ps is None or (partition is not None and not 0 <= partition < len(ps)):
            cluster = self._metadata.wait_for_topic(
                topic, self._max_block_ms, self._sender.wakeup, partition
            )
        if self._key_serializer is not None:
            key = self._key_serializer(key)
        if self._value_serializer is not None:
            value = self._value_serializer(value)
        if headers is not None and isinstance(headers, Mapping):
            headers = list(headers.items())
        _check_bytes(key, "key")
        _check_bytes(value, "value")
        size = estimate_record_size(key, value, headers)
        if size > self._max_record_size:
            error = RecordTooLargeError(
                f"record of about {size} bytes exceeds max.request.size={self._max_request_size} "
                f"or buffer.memory={self._buffer_memory}"
            )
            if on_delivery is not None:
                on_delivery(None, error)
            return FailedFuture(topic, partition if partition is not None else -1, error)
        if timestamp is None:
            timestamp = _time_ns() // 1_000_000
        sticky = partition is None and self._partitioner.sticky_keyless and key is None
        if partition is None:
            partition = self._partitioner.partition(topic, key, cluster, size)
        append = self._accumulator.append
        if sticky:
            # KIP-480: the sticky partition moves on when its batch is done.
            future = append(
                (topic, partition), timestamp, key, value, headers, on_delivery,
                self._max_block_ms, size, True,
            )  # fmt: skip
            if future is None:
                partition = self._partitioner.on_new_batch(topic, cluster, partition)
                future = append(
                    (topic, partition), timestamp, key, value, headers, on_delivery,
                    self._max_block_ms, size, False,
                )  # fmt: skip
                assert future is not None
            if self._fast:
                # The next keyless sends to this topic take the fast path.
                self._fast_queues[topic] = self._accumulator.queue_for((topic, partition))
            return future
        future = append(
            (topic, partition), timestamp, key, value, headers, on_delivery,
            self._max_block_ms, size, False,
        )  # fmt: skip
        assert future is not None
        return future

    def _on_send(self, *record: Any) -> Any:
        for interceptor in self._interceptors:
            try:
                record = interceptor.on_send(*record)
            except Exception:
                log.exception("interceptor %r on_send failed", interceptor)
        return record

    def _wrap_interceptors(self, callback: DeliveryCallback | None) -> DeliveryCallback:
        interceptors = self._interceptors

        def on_done(metadata: RecordMetadata | None, error: BaseException | None) -> None:
            for interceptor in interceptors:
                try:
                    interceptor.on_acknowledgement(metadata, error)
                except Exception:
                    log.exception("interceptor %r on_acknowledgement failed", interceptor)
            if callback is not None:
                callback(metadata, error)

        return on_done

    # -- transactions (transactional.id; transaction_calls.py) ----------------------------
    def init_transactions(self, timeout: float | None = None) -> None:
        """Get the producer id and epoch of ``transactional.id``, fencing older instances
        (whose open transaction the coordinator aborts)."""
        self._transactional().init(timeout)

    def begin_transaction(self) -> None:
        self._transactional().begin()

    def send_offsets_to_transaction(
        self, offsets: Mapping[Any, Any], group: Any, timeout: float | None = None
    ) -> None:
        """Commit a consumer's ``offsets`` (int or OffsetAndMetadata per partition) with
        the transaction; ``group`` is ``Consumer.group_metadata()`` or a group id."""
        self._transactional().send_offsets(offsets, group, timeout)

    def commit_transaction(self, timeout: float | None = None) -> None:
        """Send what is queued, then commit; a failed send raises and the transaction
        must be aborted."""
        self._transactional().commit(timeout)

    def abort_transaction(self, timeout: float | None = None) -> None:
        """Drop what is queued, wait for what is in flight, then abort."""
        self._transactional().abort(timeout)

    def _transactional(self) -> TransactionCalls:
        if self._transactions is None:
            raise KafkaError(ErrorCode.INVALID_TXN_STATE, "the producer has no transactional.id")
        return self._transactions

    # -- flush / metadata / close ------------------------------------------------------
    def flush(self, timeout: float | None = None) -> None:
        """Send everything queued now and wait for it (raises KafkaTimeoutError on timeout)."""
        acc = self._accumulator
        acc.begin_flush()
        try:
            self._sender.wakeup()
            deadline = None if timeout is None else time.monotonic() + timeout
            for batch in acc.incomplete_batches():
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not batch.result.wait(left):
                    raise KafkaTimeoutError(f"flush did not complete within {timeout} s")
        finally:
            acc.end_flush()

    def partitions_for(self, topic: str) -> list[PartitionInfo]:
        """Partitions of ``topic``, fetching its metadata if needed (max.block.ms)."""
        cluster = self._metadata.wait_for_topic(topic, self._max_block_ms, self._sender.wakeup)
        return list(cluster.partitions_by_topic[topic])

    def close(self, timeout: float | None = None) -> None:
        """Deliver what is pending (up to ``timeout`` seconds), then stop.

        On return every future has resolved: delivered, or failed with the reason.
        """
        if self._closed:
            return
        self._closed = True
        self._fast = False
        self._fast_queues = {}
        self._sender.initiate_close()
        if not self._sender.join(timeout):
            log.warning("producer close timed out; failing unsent records")
            self._sender.force_close()
            self._pool.close()
            self._sender.join(None)
        self._metadata.close()

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # For tests and benchmarks.
    @property
    def accumulator(self) -> RecordAccumulator:
        return self._accumulator

    @property
    def metadata(self) -> Metadata:
        return self._metadata
