"""A broker restart in the middle of idempotent producing loses and duplicates nothing.

Samsa's broker only (tansu keeps its log in memory, so a restart empties it):
the producer sends keyed records continuously from a thread while the broker
is stopped and started again on the same data dir and port.  Requests in
flight at the stop fail with disconnects; the Sender retries them with their
original producer id and sequence numbers, so whatever the broker had already
written is answered as a duplicate instead of being written twice.  Read back
with confluent-kafka, every acknowledged record is there exactly once, in send
order per partition.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from samsa.client import Producer
from samsa.testing import BrokerProcess

pytestmark = pytest.mark.integration

PARTITIONS = 3


def _read_all(bootstrap: str, topic: str, expected: int) -> dict[int, list[Any]]:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "restart-verify",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    got: dict[int, list[Any]] = {p: [] for p in range(PARTITIONS)}
    count = empty = 0
    # Keep reading a little past ``expected`` so duplicates would show up too.
    while empty < 6:
        msgs = c.consume(2000, 0.5)
        empty = 0 if msgs else empty + 1 if count >= expected else 0
        for m in msgs:
            assert m.error() is None, m.error()
            got[m.partition()].append((m.offset(), m.key(), m.value()))
            count += 1
    c.close()
    return got


@pytest.mark.parametrize("how", ["stop", "kill"])
def test_broker_restart_during_idempotent_produce(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, how: str
) -> None:
    """``stop`` is a clean SIGTERM shutdown; ``kill`` a SIGKILL crash mid-request."""
    from confluent_kafka.admin import AdminClient, NewTopic

    caplog.set_level(logging.INFO, logger="samsa.client")
    broker = BrokerProcess(tmp_path / "data")
    bootstrap = broker.start()
    try:
        topic = "restart-topic"
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(15)
        producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "enable.idempotence": True,
                "acks": "all",
                "retries": 1_000_000,
                "linger.ms": 5,
                "retry.backoff.ms": 50,
                "retry.backoff.max.ms": 200,
                "reconnect.backoff.ms": 20,
                "reconnect.backoff.max.ms": 200,
                "request.timeout.ms": 5000,
                "delivery.timeout.ms": 60_000,
                "max.in.flight.requests.per.connection": 5,
            }
        )
        sent: list[tuple[bytes, bytes, Any]] = []
        stop = threading.Event()

        def produce() -> None:
            i = 0
            while not stop.is_set():
                key = b"k%d" % (i % 7)
                value = b"%08d" % i
                sent.append((key, value, producer.send(topic, value, key=key)))
                i += 1
                if i % 50 == 0:
                    time.sleep(0.002)  # a steady stream, not a flood

        thread = threading.Thread(target=produce, name="produce-loop")
        thread.start()
        try:
            _wait(lambda: sum(1 for *_, f in sent[:2000] if f.done()) >= 1000, 30)
            broker.stop() if how == "stop" else broker.kill()
            time.sleep(0.3)  # requests fail and pile up while the broker is down
            broker = BrokerProcess(tmp_path / "data", port=broker.port)
            broker.start()
            acked_at_restart = sum(1 for *_, f in list(sent) if f.done())
            target = len(sent) + 3000
            _wait(lambda: len(sent) >= target, 60)
        finally:
            stop.set()
            thread.join(30)
        producer.flush(60)
        producer.close(10)

        errors = [f.exception(0) for *_, f in sent if f.exception(0) is not None]
        assert not errors, f"{len(errors)} records failed, first: {errors[0]!r}"
        assert acked_at_restart < len(sent)  # the restart really was mid-stream
        assert "connect to node" in caplog.text  # and the producer saw the broker gone

        metas = {value: f.result(0) for _, value, f in sent}
        got = _read_all(bootstrap, topic, len(sent))
        seen: dict[bytes, int] = {}
        for partition, records in got.items():
            values = [v for _, _, v in records]
            # send order per partition is value order (values count up)
            assert values == sorted(values), f"partition {partition} out of order"
            for offset, _, value in records:
                seen[value] = seen.get(value, 0) + 1
                md = metas.get(value)
                assert md is not None, f"unexpected record {value!r}"
                assert (md.partition, md.offset) == (partition, offset)
        dupes = {v: n for v, n in seen.items() if n > 1}
        assert not dupes, f"duplicates: {list(dupes.items())[:5]}"
        missing = [v for _, v, _ in sent if v not in seen]
        assert not missing, f"{len(missing)} acknowledged records missing, first {missing[:5]}"
    finally:
        broker.stop()
        broker.kill()


def _wait(condition: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)
