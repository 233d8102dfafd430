"""A broker with two log dirs (JBOD) keeps serving one when the other fails.

One real broker process, ``log.dirs`` naming two dirs; a topic's partitions
are spread over both.  An injected EIO on write (``io_faults``) takes the
first dir offline: its partitions answer KAFKA_STORAGE_ERROR, the other dir's
partitions keep acknowledging records, the broker does not stop, and
DescribeLogDirs names the failed dir beside the working one.  After a restart
with the fault removed, every acknowledged record of both dirs is there and
the failed dir's partitions take records again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Message, Producer
from tests.cluster.helpers import admin, create_topic
from tests.cluster.workload import read_final_log

from samsa.errors import ErrorCode
from samsa.testing import BrokerProcess

pytestmark = pytest.mark.integration

TOPIC = "jbod"
PARTITIONS = 4


def _produce(bootstrap: str, values: dict[int, list[bytes]]) -> dict[int, list[object]]:
    """Send each partition's values; each record's delivery error (None: acknowledged)."""
    results: dict[int, list[object]] = {p: [...] * len(v) for p, v in values.items()}
    producer = Producer(
        {"bootstrap.servers": bootstrap, "acks": "all", "retries": 0, "linger.ms": 5}
    )

    def report(partition: int, index: int) -> Callable[[KafkaError | None, Message], None]:
        def on_delivery(err: KafkaError | None, _msg: Message) -> None:
            results[partition][index] = err

        return on_delivery

    for partition, batch in values.items():
        for i, value in enumerate(batch):
            producer.produce(TOPIC, value, partition=partition, on_delivery=report(partition, i))
    assert producer.flush(60) == 0, "records never resolved: silence"
    return results


def test_an_io_error_in_one_dir_leaves_the_other_serving(
    tmp_path: Path, rules: Path, record_property: object
) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    # --data-dir sets log.dirs, a comma-separated list.
    broker = BrokerProcess(Path(f"{first},{second}"))
    broker.start()
    try:
        create_topic(broker.bootstrap, TOPIC, partitions=PARTITIONS)
        in_first = [p for p in range(PARTITIONS) if (first / f"{TOPIC}-{p}").is_dir()]
        in_second = [p for p in range(PARTITIONS) if (second / f"{TOPIC}-{p}").is_dir()]
        assert len(in_first) == len(in_second) == PARTITIONS // 2, (in_first, in_second)
        for d in (first, second):
            assert "directory.id=" in (d / "meta.properties").read_text()
        before = {p: [b"before-%d-%d" % (p, i) for i in range(50)] for p in range(PARTITIONS)}
        assert all(e is None for errs in _produce(broker.bootstrap, before).values() for e in errs)

        rules.write_text(f"write {first}/{TOPIC}-\n")
        during = {p: [b"during-%d-%d" % (p, i) for i in range(20)] for p in range(PARTITIONS)}
        results = _produce(broker.bootstrap, during)
        for p in in_first:
            codes = {e.code() for e in results[p] if isinstance(e, KafkaError)}
            assert codes == {KafkaError.KAFKA_STORAGE_ERROR}, (p, results[p][:3])
        for p in in_second:
            assert all(e is None for e in results[p]), (p, results[p][:3])
        assert broker.running, "a broker with a working dir left must not stop"
        assert broker.wait_for_log(f"log dir {first} is offline", 1)
        with admin(broker.bootstrap) as client:
            assert client.failed_log_dirs(timeout=10) == {
                1: [(str(first), int(ErrorCode.KAFKA_STORAGE_ERROR))]
            }
            sizes = client.describe_log_dirs([TOPIC], timeout=10)
        # The working dir still reports its partitions; the failed one none.
        assert {tp.partition for tp in sizes[1]} == set(in_second)

        broker.stop()
        rules.write_text("")
        broker.start()
        after = {p: [b"after-%d" % p] for p in range(PARTITIONS)}
        assert all(e is None for errs in _produce(broker.bootstrap, after).values() for e in errs)
        stored = read_final_log(broker.bootstrap, TOPIC, PARTITIONS)
        lost = 0
        for p in range(PARTITIONS):
            values = [v for _, v in stored[p]]
            acknowledged = before[p] + (during[p] if p in in_second else []) + after[p]
            assert values == acknowledged, p
            lost += len(set(acknowledged) - set(values))
        line = (
            f"two log dirs, EIO on one: {len(in_first)} partitions refused with "
            f"KAFKA_STORAGE_ERROR, {len(in_second)} kept acknowledging, lost {lost}"
        )
        print(line)
        record_property("figures", line)  # type: ignore[operator]
    finally:
        if broker.running:
            broker.kill()
