"""A single broker whose disk fills: the producer is told, nothing acknowledged is
lost, and a restart with space back serves a clean log.

The data dir is a real 24 MB tmpfs, filled while the broker runs.  The write
that meets ENOSPC takes the dir offline; a librdkafka producer without retries
gets KAFKA_STORAGE_ERROR for that record (not silence, not an acknowledgement),
and the broker, left without a log dir, stops with status 1 as Kafka's does.
After the filler is removed the broker starts again, recovers the log (which
was not closed cleanly) and serves every record acknowledged before the fault,
in order, and takes new writes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Message, Producer
from tests.cluster.helpers import create_topic
from tests.cluster.workload import read_final_log
from tests.diskfaults.disk import fill, small_tmpfs

from samsa.testing import BrokerProcess

pytestmark = pytest.mark.integration

TOPIC = "disk"
RECORDS = 300


def _produce(bootstrap: str, values: list[bytes], **settings: object) -> list[object]:
    """Send ``values``; returns each record's delivery error (None: acknowledged)."""
    results: list[object] = [...] * len(values)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", **settings})

    def report(index: int) -> Callable[[KafkaError | None, Message], None]:
        def on_delivery(err: KafkaError | None, _msg: Message) -> None:
            results[index] = err

        return on_delivery

    for i, value in enumerate(values):
        producer.produce(TOPIC, value, partition=0, on_delivery=report(i))
    assert producer.flush(60) == 0, "records never resolved: silence"
    return results


def test_full_disk_answers_storage_error_and_a_restart_recovers(
    tmp_path: Path, record_property: object
) -> None:
    with small_tmpfs(tmp_path / "disk", "24m") as disk:
        broker = BrokerProcess(disk / "data")
        broker.start()
        try:
            create_topic(broker.bootstrap, TOPIC)
            before = [b"before-%d" % i for i in range(RECORDS)]
            results = _produce(broker.bootstrap, before, **{"enable.idempotence": True})
            assert all(err is None for err in results)

            filler = fill(disk)
            refused = _produce(broker.bootstrap, [b"x" * 200_000], retries=0)
            error = refused[0]
            assert isinstance(error, KafkaError), f"expected an error, got {error!r}"
            assert error.code() == KafkaError.KAFKA_STORAGE_ERROR, error
            assert broker.proc is not None
            assert broker.proc.wait(30) == 1
            assert broker.wait_for_log("all log dirs have failed", 1)

            filler.unlink()  # space comes back
            broker.start()
            after = [b"after-%d" % i for i in range(10)]
            assert all(err is None for err in _produce(broker.bootstrap, after))
            values = [value for _, value in read_final_log(broker.bootstrap, TOPIC, 1)[0]]
            stored = [v for v in values if not v.startswith(b"x")]
            assert stored == before + after
            lines = [
                f"single node, full disk: acknowledged {RECORDS}, "
                f"lost {len(set(before) - set(values))}, refused with KAFKA_STORAGE_ERROR 1"
            ]
            for line in lines:
                print(line)
                record_property("figures", line)  # type: ignore[operator]
        finally:
            if broker.running:
                broker.kill()
