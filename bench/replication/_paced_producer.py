"""A producer at a steady rate in its own thread, confluent-kafka or Samsa's, that
records every record's send and acknowledgement time.

Shared plumbing of ``replication_bench.py``: both the ``failover`` and the
``shutdown`` case measure what a producer saw while a broker went away.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench.replication._common import quiet_confluent


@dataclass
class Delivery:
    sent: float
    acked: float
    error: str | None


@dataclass
class PacedProducer:
    """A producer sending ``rate`` records/s (acks=all, linger 0) in its own thread,
    recording every record's send and delivery time.  ``client``: confluent-kafka
    (callbacks run in this thread's poll) or Samsa's producer (on its sender thread)."""

    bootstrap: str
    targets: list[tuple[str, int]]
    """(topic, partition) pairs, written round-robin."""
    rate: float
    client: str = "confluent"
    delivery_timeout_ms: int = 120_000
    deliveries: list[Delivery] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    sent: int = 0

    def start(self) -> None:
        target = self._run_confluent if self.client == "confluent" else self._run_samsa
        self._thread = threading.Thread(target=target, daemon=True)
        self._thread.start()

    def _paced(self, send_one: Callable[[float, int], None], poll: Callable[[], object]) -> None:
        """Call ``send_one(now, target index)`` ``rate`` times a second until stopped."""
        interval = 1 / self.rate
        next_at = time.perf_counter()
        while not self._stop.is_set():
            send_one(time.perf_counter(), self.sent % len(self.targets))
            self.sent += 1
            next_at += interval
            while True:
                poll()
                wait = next_at - time.perf_counter()
                if wait <= 0:
                    break
                time.sleep(min(wait, 0.002))

    def _record(self, sent: float, error: str | None) -> None:
        self.deliveries.append(Delivery(sent, time.perf_counter(), error))

    def _run_confluent(self) -> None:
        import json

        from confluent_kafka import Producer

        def on_stats(raw: str) -> None:
            self.stats = json.loads(raw)

        producer = Producer(
            quiet_confluent(
                {
                    "bootstrap.servers": self.bootstrap,
                    "acks": "all",
                    "linger.ms": 0,
                    "message.timeout.ms": self.delivery_timeout_ms,
                    "statistics.interval.ms": 200,
                    "stats_cb": on_stats,
                }
            )
        )
        for topic in {t for t, _ in self.targets}:
            producer.list_topics(topic, timeout=10)
        payload = b"x" * 100

        def send_one(sent: float, index: int) -> None:
            def report(err: Any, _msg: Any) -> None:
                self._record(sent, None if err is None else err.name())

            topic, partition = self.targets[index]
            producer.produce(topic, payload, partition=partition, on_delivery=report)

        self._paced(send_one, lambda: producer.poll(0))
        producer.flush(30)
        producer.poll(0.5)  # a last statistics callback

    def _run_samsa(self) -> None:
        from samsa.client import Producer

        producer = Producer(
            {
                "bootstrap.servers": self.bootstrap,
                "acks": "all",
                "linger.ms": 0,
                "enable.idempotence": False,
                "delivery.timeout.ms": self.delivery_timeout_ms,
                "request.timeout.ms": min(30_000, self.delivery_timeout_ms),
            }
        )
        for topic in {t for t, _ in self.targets}:
            producer.partitions_for(topic)
        payload = b"x" * 100

        def send_one(sent: float, index: int) -> None:
            def report(_metadata: Any, error: BaseException | None) -> None:
                name = (
                    None
                    if error is None
                    else getattr(getattr(error, "code", None), "name", type(error).__name__)
                )
                self._record(sent, name)

            topic, partition = self.targets[index]
            producer.send(topic, payload, partition=partition, on_delivery=report)

        self._paced(send_one, lambda: None)
        producer.flush(30)
        producer.close()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(60)

    def failures(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for d in self.deliveries:
            if d.error is not None:
                out[d.error] = out.get(d.error, 0) + 1
        return out

    def retries(self) -> int | None:
        """librdkafka's count of produce requests it sent again (txretries, all brokers)."""
        if not self.stats:
            return None
        return sum(int(b.get("txretries", 0)) for b in self.stats.get("brokers", {}).values())
