"""/metrics of a real broker: counters move by exactly a known workload.

The workload is one record per Produce request (confluent-kafka flushes after
each record), then a group consumer that reads them all and commits, so the
expected deltas are exact: requests, records and bytes in, records out, lag.
"""

from __future__ import annotations

import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from prometheus_client.parser import text_string_to_metric_families

from samsa.testing import BrokerProcess

RECORDS = 20


def endpoint_url(broker: BrokerProcess, name: str) -> str:
    assert broker.wait_for_log(f"{name} listening on http://")
    found = re.search(rf"{name} listening on (http://\S+/)", broker.log_text())
    assert found is not None
    return found.group(1)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(
        tmp_path_factory.mktemp("metrics") / "data", args=["--metrics-listen", "127.0.0.1:0"]
    ) as proc:
        yield proc


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(url: str) -> Samples:
    with urllib.request.urlopen(url + "metrics", timeout=10) as response:
        text = response.read().decode()
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_counters_move_by_exactly_the_workload(broker: BrokerProcess) -> None:
    url = endpoint_url(broker, "metrics")
    topic, group = "metrics-topic", "metrics-group"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)
    before = scrape(url)

    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    for i in range(RECORDS):
        producer.produce(topic, key=b"k", value=b"v%03d" % i)
        assert producer.flush(10) == 0  # one record, one Produce request
    after = scrape(url)

    produce = {"api": "Produce", "version": "10"}  # librdkafka 2.x speaks v10 at most
    assert (
        value(after, "samsa_requests_total", **produce)
        - value(before, "samsa_requests_total", **produce)
        == RECORDS
    )
    assert value(after, "samsa_request_errors_total", **produce) == 0
    assert value(after, "samsa_topic_records_in_total", topic=topic) == RECORDS
    assert value(after, "samsa_topic_bytes_in_total", topic=topic) > RECORDS * 5
    assert value(after, "samsa_log_end_offset", topic=topic, partition="0") == RECORDS
    assert value(after, "samsa_log_size_bytes", topic=topic, partition="0") == value(
        after, "samsa_topic_bytes_in_total", topic=topic
    )
    histogram_count = value(after, "samsa_request_latency_seconds_count", **produce)
    assert histogram_count == value(after, "samsa_requests_total", **produce)

    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    seen = 0
    deadline = time.monotonic() + 30
    while seen < RECORDS - 5:
        assert time.monotonic() < deadline
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            seen += 1
    consumer.commit(asynchronous=False)  # committed where the consumer stands
    committed = consumer.position(consumer.assignment())[0].offset

    def consumed() -> bool:
        return value(scrape(url), "samsa_topic_records_out_total", topic=topic) == RECORDS

    while not consumed():  # records out count once the next fetch moves past them
        assert time.monotonic() < deadline, scrape(url)
        consumer.poll(0.1)
    final = scrape(url)
    consumer.close()
    assert value(final, "samsa_topic_bytes_out_total", topic=topic) >= value(
        final, "samsa_topic_bytes_in_total", topic=topic
    )
    labels = {"group": group, "topic": topic, "partition": "0"}
    assert value(final, "samsa_consumer_group_committed_offset", **labels) == committed
    assert value(final, "samsa_consumer_group_lag", **labels) == RECORDS - committed
    clients = [k for k in final if k[0] == "samsa_connections"]
    assert any(
        dict(labels_)["client_software_name"].startswith("confluent-kafka")
        for _, labels_ in clients
    )


def test_a_scrape_may_ask_for_one_family(broker: BrokerProcess) -> None:
    """``?name[]=`` as prometheus_client's handler: a poller of one gauge does not
    cost a broker of 10,000 partitions its 70,000 partition samples."""
    url = endpoint_url(broker, "metrics")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("one-family", 2, 1)])["one-family"].result(10)

    def families(query: str) -> dict[str, int]:
        with urllib.request.urlopen(url + "metrics?" + query, timeout=10) as response:
            text = response.read().decode()
        return {f.name: len(f.samples) for f in text_string_to_metric_families(text)}

    assert families("name%5B%5D=samsa_partitions") == {"samsa_partitions": 1}
    log_ends = families("name[]=samsa_log_end_offset")
    assert list(log_ends) == ["samsa_log_end_offset"] and log_ends["samsa_log_end_offset"] >= 2
    assert families("name[]=no_such_family") == {}
    assert len(families("")) > 10  # no name: everything


def test_metrics_endpoint_is_read_only_and_404s_unknown_paths(broker: BrokerProcess) -> None:
    url = endpoint_url(broker, "metrics")
    for method, path, status in (("GET", "nope", 404), ("POST", "metrics", 405), ("PUT", "", 405)):
        request = urllib.request.Request(
            url + path, method=method, data=b"x" if method != "GET" else None
        )
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(request, timeout=10)
        assert error.value.code == status


def test_metrics_are_off_by_default(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data")
    broker.start()
    try:
        assert "metrics listening" not in broker.log_text()
    finally:
        broker.stop()
