"""A primary whose store stalls answers each write within ``registry.timeout.ms``.

Every step of a write has its own timeout (open the writer, commit, catch up), but they
add up and writes queue behind one another; a stale primary (a node woken from a pause
that still believes it leads) could keep clients waiting for minutes.  Here the store
stalls for real: another producer leaves a transaction open on ``_schemas``, so the
registry's read_committed reader cannot pass it and no write is ever seen applied.  Four
registrations sent at once are each answered 500 with 50002 within the timeout (plus the
machine's slack), not one after another (they took 2, 4, 6 and 8 s before); once the
transaction is aborted the store moves again, a registration lands, and no id was given
twice."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from confluent_kafka import Producer
from tests.registry.served import avro_record, call, registry_broker, registry_url

from samsa.testing import BrokerProcess

pytestmark = pytest.mark.integration

TIMEOUT_S = 2.0
SLACK_S = 2.5
"""A loaded 2-core machine's HTTP round trip and scheduling; the stacked steps of four
queued writes would take 8 s and more."""


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BrokerProcess, str]]:
    settings = {"registry.timeout.ms": str(int(TIMEOUT_S * 1000))}
    with registry_broker(tmp_path_factory.mktemp("stall") / "data", settings) as proc:
        yield proc, registry_url(proc)


def register(url: str, subject: str) -> Any:
    schema = avro_record(subject.replace("-", "_"), ("id", "int"))
    return call(url, "POST", f"/subjects/{subject}/versions", {"schema": schema}, timeout=60)


def open_transaction_on_schemas(bootstrap: str) -> Producer:
    """A producer with a transaction left open on ``_schemas`` (one record written):
    read_committed readers stop before it until it ends."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": "stall-the-registry",
            "transaction.timeout.ms": 120000,
        }
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce("_schemas", b"{}", key=b'{"keytype":"NOOP","magic":0}', partition=0)
    assert producer.flush(30) == 0
    return producer


def test_writes_to_a_stalled_store_are_answered_within_the_timeout(
    broker: tuple[BrokerProcess, str],
) -> None:
    proc, url = broker
    assert register(url, "before").status == 200
    hanging = open_transaction_on_schemas(proc.bootstrap)

    def timed(subject: str) -> tuple[float, Any]:
        start = time.monotonic()
        answer = register(url, subject)
        return time.monotonic() - start, answer

    with ThreadPoolExecutor(4) as pool:
        outcomes = list(pool.map(timed, [f"stalled-{i}" for i in range(4)]))
    for elapsed, answer in outcomes:
        assert answer.status == 500, answer.body
        assert answer.json()["error_code"] == 50002, answer.body
        assert elapsed < TIMEOUT_S + SLACK_S, (elapsed, answer.body)
    assert any(b"registry.timeout.ms" in a.body for _, a in outcomes), "queued writes time out"

    hanging.abort_transaction(30)
    deadline = time.monotonic() + 60
    while (answer := register(url, "after")).status != 200:
        assert time.monotonic() < deadline, answer.body
    ids: dict[int, str] = {}
    for subject in call(url, "GET", "/subjects").json():
        version = call(url, "GET", f"/subjects/{subject}/versions/latest").json()
        assert ids.setdefault(version["id"], subject) == subject, "an id given twice"
    assert "after" in ids.values()
