"""Real clients that keep a cluster busy while a test breaks it, and keep the record.

Each producer is a thread that writes records ``encode_value(name, seq)``
round-robin over the topic's partitions, at a bounded rate and with a bounded
number of records unacknowledged (so an outage queues a window, not the whole
run), and logs every acknowledgement as a ``checker.Ack``, every delivery
failure, and every produce attempt the client had to retry (the produce
requests that failed).  ``ConfluentProducer`` is librdkafka (acks=all,
idempotent); ``SamsaProducer`` is ``samsa.client.Producer`` set up the same
way.  ``Reader`` consumes every partition from offset 0 all along and logs
what it saw as ``checker.Seen``.  ``read_final_log`` reads each partition from
offset 0 to its high watermark once the faults are over.

Everything a client reports is timestamped (monotonic), so a test can count
what happened inside one fault's window.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    Message,
    Producer,
    TopicPartition,
)
from tests.cluster.checker import Ack, Seen, encode_value

from samsa.client import Producer as SamsaClientProducer

__all__ = [
    "ConfluentProducer",
    "ProducerWorkload",
    "Reader",
    "SamsaProducer",
    "read_final_log",
]

VALUE_PAD = 100
"""Filler bytes per record: small records, so a run writes many."""


def where(message: Message) -> tuple[int, int, bytes]:
    """(partition, offset, value) of a record a broker delivered: the client
    leaves partition and offset unset only on its own events, never on records."""
    partition, offset = message.partition(), message.offset()
    assert partition is not None and offset is not None, message
    return partition, offset, message.value() or b""


class ProducerWorkload(threading.Thread):
    """One producer writing continuously; subclasses talk to their client."""

    def __init__(
        self,
        name: str,
        bootstrap: str,
        topic: str,
        partitions: int,
        *,
        rate: float = 150.0,
        window: int = 400,
    ) -> None:
        super().__init__(name=f"producer-{name}", daemon=True)
        self.producer_name = name
        self.bootstrap = bootstrap
        self.topic = topic
        self.partitions = partitions
        self.rate = rate
        self.window = window
        self.lock = threading.Lock()
        self.acks: list[Ack] = []
        self.acks_by_partition: Counter[int] = Counter()
        self.failures: list[tuple[float, int, str]] = []
        """(when, seq, error) for every record the client gave up on."""
        self.retries: list[tuple[float, str]] = []
        """(when, what) for every produce attempt the client retried."""
        self.sent = 0
        self.crashed: BaseException | None = None
        self._stop_sending = threading.Event()
        self._closed = False

    # -- what the test reads ----------------------------------------------------------
    def acked(self) -> int:
        with self.lock:
            return len(self.acks)

    def acked_per_partition(self) -> dict[int, int]:
        with self.lock:
            return {p: self.acks_by_partition[p] for p in range(self.partitions)}

    def unresolved(self) -> int:
        with self.lock:
            return self.sent - len(self.acks) - len(self.failures)

    def failures_between(self, start: float, end: float) -> list[tuple[float, int, str]]:
        with self.lock:
            return [f for f in self.failures if start <= f[0] <= end]

    def retries_between(self, start: float, end: float) -> list[tuple[float, str]]:
        with self.lock:
            return [r for r in self.retries if start <= r[0] <= end]

    # -- what the client calls --------------------------------------------------------
    def _acknowledged(self, seq: int, partition: int, offset: int | None) -> None:
        # librdkafka acknowledges a record whose offset it does not know (a
        # retried idempotent batch answered as a duplicate without offsets) with
        # offset None; the checker takes -1 as "unknown" and finds it by value.
        if offset is None:
            offset = -1
        with self.lock:
            self.acks.append(Ack(self.producer_name, seq, partition, offset, len(self.acks)))
            self.acks_by_partition[partition] += 1

    def _failed(self, seq: int, error: object) -> None:
        with self.lock:
            self.failures.append((time.monotonic(), seq, str(error)))

    def _retried(self, what: str) -> None:
        with self.lock:
            self.retries.append((time.monotonic(), what))

    # -- the loop -----------------------------------------------------------------------
    def run(self) -> None:
        try:
            self._open()
            interval = 1.0 / self.rate
            next_at = time.monotonic()
            seq = 0
            while not self._stop_sending.is_set():
                if self.unresolved() >= self.window:
                    self._serve(0.05)
                    continue
                partition = seq % self.partitions
                with self.lock:
                    self.sent += 1
                self._produce(seq, partition, encode_value(self.producer_name, seq, VALUE_PAD))
                seq += 1
                next_at += interval
                self._serve(0)
                # Pace: _serve may return early (a callback was served), so loop.
                while not self._stop_sending.is_set():
                    delay = next_at - time.monotonic()
                    if delay <= 0:
                        break
                    self._serve(delay)
                if next_at < time.monotonic() - interval:
                    next_at = time.monotonic()  # far behind: do not burst to catch up
        except BaseException as exc:  # surfaced by finish(): a dead producer fails the test
            self.crashed = exc
        finally:
            self._stop_sending.set()

    def finish(self, timeout: float) -> None:
        """Stop sending, wait for every record sent to resolve (or ``timeout``)."""
        self._stop_sending.set()
        self.join(timeout)
        self._closed = True
        self._close(timeout)
        if self.crashed is not None:
            raise AssertionError(f"producer {self.producer_name} crashed") from self.crashed

    def abort(self) -> None:
        """Stop sending and close the client without waiting for deliveries (a
        failed test's teardown: no client thread outlives its test)."""
        self._stop_sending.set()
        if self.ident is not None:  # started
            self.join(5)
        if self._closed or not hasattr(self, "_producer"):
            return
        self._closed = True
        try:
            self._close(0)
        except Exception:  # the test already failed; its error is the one to see
            pass

    def _open(self) -> None:
        raise NotImplementedError

    def _produce(self, seq: int, partition: int, value: bytes) -> None:
        raise NotImplementedError

    def _serve(self, timeout: float) -> None:
        """Let the client deliver callbacks for up to ``timeout`` seconds."""
        raise NotImplementedError

    def _close(self, timeout: float) -> None:
        raise NotImplementedError


class _RetryLog(logging.Handler):
    """Turns a client's log lines about failed produce attempts into retries."""

    def __init__(
        self, matches: Callable[[logging.LogRecord], bool], sink: Callable[[str], None]
    ) -> None:
        super().__init__(logging.DEBUG)
        self._matches = matches
        self._sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if self._matches(record):
                self._sink(record.getMessage())
        except Exception:  # a log handler must never break the client
            self.handleError(record)


class ConfluentProducer(ProducerWorkload):
    """librdkafka, acks=all and idempotent.  Its produce errors are seen through its
    ``msg`` debug log: each error response on a message set is one line
    ("... encountered error: ...") before the messages are retried or failed."""

    def _open(self) -> None:
        logger = logging.getLogger(f"tests.cluster.librdkafka.{self.producer_name}")
        logger.propagate = False
        logger.setLevel(logging.DEBUG)
        logger.handlers = [
            _RetryLog(lambda r: "encountered error" in r.getMessage(), self._retried)
        ]
        self._producer = Producer(
            {
                "bootstrap.servers": self.bootstrap,
                "client.id": self.producer_name,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 5,
                "message.timeout.ms": 120_000,
                "request.timeout.ms": 5_000,
                "socket.timeout.ms": 5_000,
                "retry.backoff.ms": 50,
                "retry.backoff.max.ms": 500,
                "reconnect.backoff.ms": 50,
                "reconnect.backoff.max.ms": 500,
                # As the Samsa producer's metadata.max.age.ms.  A leader cut from
                # the controller but not from its clients never learns it was
                # replaced (nor would Kafka's), and answers acks=all produces
                # with REQUEST_TIMED_OUT, which librdkafka retries on the same
                # broker without asking for metadata: only the periodic refresh
                # (default 5 minutes) moves it to the new leader.
                "topic.metadata.refresh.interval.ms": 5_000,
                "debug": os.environ.get("RDK_DEBUG", "msg"),
                "logger": logger,
            }
        )

    def _produce(self, seq: int, partition: int, value: bytes) -> None:
        def on_delivery(err: Any, msg: Any, seq: int = seq) -> None:
            if err is not None:
                self._failed(seq, err)
            else:
                self._acknowledged(seq, msg.partition(), msg.offset())

        while True:
            try:
                self._producer.produce(
                    self.topic, value, partition=partition, on_delivery=on_delivery
                )
                return
            except BufferError:  # the local queue is full: deliver, then try again
                self._producer.poll(0.05)

    def _serve(self, timeout: float) -> None:
        self._producer.poll(timeout)

    def _close(self, timeout: float) -> None:
        self._producer.flush(timeout)


class SamsaProducer(ProducerWorkload):
    """``samsa.client.Producer``, acks=all and idempotent.  Its sender logs each
    retried batch ("retrying <topic>-<partition> ...") at INFO."""

    def _open(self) -> None:
        self._done = threading.Condition()
        handler = _RetryLog(
            lambda r: r.getMessage().startswith(f"retrying {self.topic}-"), self._retried
        )
        sender_log = logging.getLogger("samsa.client.producer.sender")
        sender_log.addHandler(handler)
        self._level = sender_log.level
        if sender_log.getEffectiveLevel() > logging.INFO:
            sender_log.setLevel(logging.INFO)
        self._handler = handler
        self._producer = SamsaClientProducer(
            {
                "bootstrap.servers": self.bootstrap,
                "client.id": self.producer_name,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 5,
                "batch.size": 16384,
                "delivery.timeout.ms": 120_000,
                "request.timeout.ms": 5_000,
                "retry.backoff.ms": 50,
                "retry.backoff.max.ms": 500,
                "reconnect.backoff.ms": 50,
                "reconnect.backoff.max.ms": 500,
                "metadata.max.age.ms": 5_000,
            }
        )

    def _produce(self, seq: int, partition: int, value: bytes) -> None:
        def on_delivery(metadata: Any, error: BaseException | None, seq: int = seq) -> None:
            if error is not None:
                self._failed(seq, error)
            else:
                self._acknowledged(seq, metadata.partition, metadata.offset)
            with self._done:
                self._done.notify_all()

        self._producer.send(self.topic, value, partition=partition, on_delivery=on_delivery)

    def _serve(self, timeout: float) -> None:
        # Callbacks run on the client's sender thread: only wait here.
        if timeout <= 0:
            return
        if self.unresolved() >= self.window:
            with self._done:
                self._done.wait_for(lambda: self.unresolved() < self.window, timeout)
        else:
            self._stop_sending.wait(timeout)

    def _close(self, timeout: float) -> None:
        try:
            self._producer.flush(timeout)
        finally:
            self._producer.close(timeout)
            sender_log = logging.getLogger("samsa.client.producer.sender")
            sender_log.removeHandler(self._handler)
            sender_log.setLevel(self._level)


class Reader(threading.Thread):
    """A confluent-kafka consumer reading every partition from offset 0 for the
    whole run, logging each record it was handed."""

    def __init__(self, name: str, bootstrap: str, topic: str, partitions: int) -> None:
        super().__init__(name=f"reader-{name}", daemon=True)
        self.reader_name = name
        self.bootstrap = bootstrap
        self.topic = topic
        self.partitions = partitions
        self.lock = threading.Lock()
        self.seen: list[Seen] = []
        self.positions: dict[int, int] = {}
        self.errors: list[str] = []
        self.crashed: BaseException | None = None
        self._halt = threading.Event()

    def run(self) -> None:
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": f"reader-{self.reader_name}",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "socket.timeout.ms": 5_000,
                "fetch.wait.max.ms": 100,
                "reconnect.backoff.ms": 50,
                "reconnect.backoff.max.ms": 500,
                "topic.metadata.refresh.interval.ms": 1_000,
            }
        )
        try:
            consumer.assign(
                [TopicPartition(self.topic, p, OFFSET_BEGINNING) for p in range(self.partitions)]
            )
            while not self._halt.is_set():
                for message in consumer.consume(500, 0.1):
                    if message.error():
                        with self.lock:
                            self.errors.append(str(message.error()))
                        continue
                    seen = Seen(*where(message), self.reader_name)
                    with self.lock:
                        self.seen.append(seen)
                        self.positions[seen.partition] = seen.offset + 1
        except BaseException as exc:
            self.crashed = exc
        finally:
            consumer.close()

    def caught_up(self, ends: dict[int, int]) -> bool:
        with self.lock:
            return all(self.positions.get(p, 0) >= end for p, end in ends.items() if end > 0)

    def abort(self) -> None:
        self._halt.set()

    def finish(self, timeout: float) -> list[Seen]:
        self._halt.set()
        self.join(timeout)
        if self.crashed is not None:
            raise AssertionError(f"reader {self.reader_name} crashed") from self.crashed
        with self.lock:
            return list(self.seen)


def end_offsets(
    bootstrap: str, topic: str, partitions: int, isolation_level: str = "read_committed"
) -> dict[int, int]:
    """Each partition's end from its leader: the high watermark, or with
    ``read_committed`` (librdkafka's default) the last stable offset."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "end-offsets",
            "isolation.level": isolation_level,
        }
    )
    try:
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=5)[1]
            for p in range(partitions)
        }
    finally:
        consumer.close()


def read_final_log(
    bootstrap: str,
    topic: str,
    partitions: int,
    timeout: float = 60.0,
    isolation_level: str = "read_committed",
) -> dict[int, list[tuple[int, bytes]]]:
    """Every partition read from offset 0 up to its end (taken first; see
    ``end_offsets``) at ``isolation_level``."""
    ends = end_offsets(bootstrap, topic, partitions, isolation_level)
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "final-read",
            "isolation.level": isolation_level,
            "enable.auto.commit": False,
            "auto.offset.reset": "error",
            "enable.partition.eof": True,
        }
    )
    out: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}
    done = {p for p, end in ends.items() if end == 0}
    deadline = time.monotonic() + timeout
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        while len(done) < partitions:
            if time.monotonic() > deadline:
                got = {p: len(records) for p, records in out.items()}
                raise AssertionError(f"final read timed out: ends {ends}, read {got}")
            for message in consumer.consume(1000, 0.5):
                error = message.error()
                if error is not None:
                    eof = error.code() == KafkaError._PARTITION_EOF
                    if eof and (message.offset() or 0) >= ends[message.partition() or 0]:
                        done.add(message.partition() or 0)
                    continue
                p, offset, value = where(message)
                if offset < ends[p]:
                    out[p].append((offset, value))
                if offset >= ends[p] - 1:
                    done.add(p)
        return out
    finally:
        consumer.close()
