"""Samsa Consumer over transactional data written by confluent-kafka, on both brokers.

The fetcher's read_committed filtering and control-batch skipping are unit
tested on hand-built bytes (test_consumer_fetcher.py); this checks them against
what a real transaction coordinator writes: commit and abort markers, the
broker's aborted-transaction lists and last stable offset.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from samsa.client.consumer import Consumer, ConsumerRecord

confluent_kafka = pytest.importorskip("confluent_kafka")
pytestmark = pytest.mark.integration


def _write_transactions(bootstrap: str, topic: str) -> None:
    """Offsets: c0..c2 committed, a0..a2 aborted, c3..c5 committed (plus 3 markers)."""
    p = confluent_kafka.Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": f"tx-{topic}", "linger.ms": 1}
    )
    try:
        p.init_transactions(5)
    except confluent_kafka.KafkaException as exc:
        pytest.xfail(f"the broker runs no transaction coordinator: {exc}")
    for prefix, numbers, commit in (("c", (0, 1, 2), True), ("a", (0, 1, 2), False),
                                    ("c", (3, 4, 5), True)):  # fmt: skip
        p.begin_transaction()
        for i in numbers:
            p.produce(topic, value=f"{prefix}{i}".encode(), key=b"k")
        p.flush(10)
        if commit:
            p.commit_transaction(15)
        else:
            p.abort_transaction(15)
    p.flush(10)


def _values(bootstrap: str, topic: str, isolation: str) -> tuple[list[ConsumerRecord], int]:
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "auto.offset.reset": "earliest",
            "isolation.level": isolation,
            "max.poll.records": 2,
        }
    )
    try:
        c.assign([(topic, 0)])
        out: list[ConsumerRecord] = []
        deadline = time.monotonic() + 15
        end = c.end_offsets([(topic, 0)])[next(iter(c.assignment()))]
        while c.position((topic, 0)) < end and time.monotonic() < deadline:
            out += c.poll(0.2)
        return out, c.position((topic, 0))
    finally:
        c.close()


@pytest.mark.parametrize("isolation", ["read_committed", "read_uncommitted"])
def test_transactions_filter_aborted_and_skip_markers(
    bootstrap: str,
    topic_factory: Callable[[int], str],
    xfail_on_tansu: Callable[[str], None],
    isolation: str,
) -> None:
    if isolation == "read_committed":
        xfail_on_tansu("Fetch returns no aborted transactions (confluent-kafka reads them too)")
    topic = topic_factory(1)
    _write_transactions(bootstrap, topic)
    records, position = _values(bootstrap, topic, isolation)
    values = [r.value for r in records]
    if isolation == "read_committed":
        assert values == [b"c0", b"c1", b"c2", b"c3", b"c4", b"c5"]
    else:
        assert values == [b"c0", b"c1", b"c2", b"a0", b"a1", b"a2", b"c3", b"c4", b"c5"]
    offsets = [r.offset for r in records]
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)
    assert position == 12  # 9 records + 3 markers: the position passes the last marker
