"""Client quotas against a real broker: AlterClientQuotas / DescribeClientQuotas on
the wire, librdkafka throttled by them (its statistics report the broker's
throttle times), a consumer's fetches bounded, KIP-219 muting, quotas kept across
a restart, and one 30 s run holding a producer to 1 MB/s.

The broker here measures over ``quota.window.num=2`` windows of one second, so a
client over its quota is throttled within a second or two and the tests stay
short (and the 30 s average is steady: see that test's docstring).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from tests.integration.test_bad_input import RawClient
from tests.integration.test_metrics_endpoint import endpoint_url, scrape, value

from samsa.errors import ErrorCode
from samsa.protocol.api import decode_response, encode_request
from samsa.testing import BrokerProcess
from samsa.testing.cluster import wait_until

pytestmark = pytest.mark.serial  # measures a rate: not beside another xdist worker

DESCRIBE, ALTER = 48, 49
SMALL_WINDOWS = {"quota.window.num": "2", "quota.window.size.seconds": "1"}


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(
        tmp_path_factory.mktemp("quotas") / "data",
        SMALL_WINDOWS,
        args=["--metrics-listen", "127.0.0.1:0"],
    ) as proc:
        yield proc


def entity(**names: str | None) -> list[dict[str, Any]]:
    return [
        {"entity_type": kind.replace("_", "-"), "entity_name": name} for kind, name in names.items()
    ]


def alter(
    client: RawClient, ent: list[dict[str, Any]], validate_only: bool = False, **ops: float | None
) -> dict[str, Any]:
    """Set (a number) or remove (None) quota keys of one entity; the entry's answer."""
    body = {
        "entries": [
            {
                "entity": ent,
                "ops": [{"key": k, "value": v or 0.0, "remove": v is None} for k, v in ops.items()],
            }
        ],
        "validate_only": validate_only,
    }
    answer: dict[str, Any] = client.call(ALTER, 1, body)["entries"][0]
    return answer


def describe(client: RawClient, strict: bool = False, **names: str | None) -> dict[str, Any]:
    components = [
        {
            "entity_type": kind.replace("_", "-"),
            "match_type": 1 if name is None else 0,
            "match": name,
        }
        for kind, name in names.items()
    ]
    return client.call(DESCRIBE, 1, {"components": components, "strict": strict})


def quotas_of(answer: dict[str, Any]) -> dict[tuple[tuple[str, str | None], ...], dict]:
    assert answer["error_code"] == 0, answer
    return {
        tuple((e["entity_type"], e["entity_name"]) for e in entry["entity"]): {
            v["key"]: v["value"] for v in entry["values"]
        }
        for entry in answer["entries"]
    }


def test_alter_and_describe_over_the_wire_with_kafkas_errors(broker: BrokerProcess) -> None:
    client = RawClient(broker.bootstrap)
    try:
        ent = entity(user="wire-user", client_id=None)
        assert alter(client, ent, producer_byte_rate=4096, request_percentage=50.5) == {
            "error_code": 0,
            "error_message": None,
            "entity": ent,
        }
        found = quotas_of(describe(client, user="wire-user"))
        assert found == {
            (("client-id", None), ("user", "wire-user")): {
                "producer_byte_rate": 4096.0,
                "request_percentage": 50.5,
            }
        }
        # strict: only entities with exactly the named types.
        assert quotas_of(describe(client, strict=True, user="wire-user")) == {}
        assert alter(client, ent, validate_only=True, consumer_byte_rate=1)["error_code"] == 0
        bad = alter(client, entity(user="wire-user"), producer_byte_rate=1.5)
        assert bad["error_code"] == ErrorCode.INVALID_REQUEST
        assert bad["error_message"] == "Configuration producer_byte_rate must be a Long value"
        unknown = alter(client, entity(user="wire-user"), not_a_quota=1)
        assert unknown["error_message"] == "Invalid configuration key not_a_quota"
        assert alter(client, ent, producer_byte_rate=None)["error_code"] == 0
        found = quotas_of(describe(client, user="wire-user"))
        assert found == {(("client-id", None), ("user", "wire-user")): {"request_percentage": 50.5}}
        assert alter(client, ent, request_percentage=None)["error_code"] == 0
        assert quotas_of(describe(client, user="wire-user")) == {}
        dup = describe(client, user="a") | {}
        assert dup["error_code"] == 0
        twice = client.call(
            DESCRIBE,
            1,
            {
                "components": [
                    {"entity_type": "user", "match_type": 0, "match": "a"},
                    {"entity_type": "user", "match_type": 1, "match": None},
                ],
                "strict": False,
            },
        )
        assert twice["error_code"] == ErrorCode.INVALID_REQUEST and twice["entries"] is None
        assert (
            twice["error_message"] == "Entity type user cannot appear more than once in the filter."
        )
        group = client.call(
            DESCRIBE,
            1,
            {"components": [{"entity_type": "group", "match_type": 2, "match": None}]},
        )
        assert group["error_code"] == ErrorCode.UNSUPPORTED_VERSION
    finally:
        client.close()


class ThrottleStats:
    """Sums librdkafka's per-broker ``throttle`` windows over every stats callback."""

    def __init__(self) -> None:
        self.sum_ms = 0
        self.count = 0
        self.max_ms = 0
        self.callbacks = 0

    def __call__(self, raw: str) -> None:
        stats = json.loads(raw)
        self.callbacks += 1
        for broker in stats["brokers"].values():
            if broker.get("nodeid", -1) < 0:
                continue
            window = broker["throttle"]
            self.sum_ms += window["sum"]
            self.count += window["cnt"]
            self.max_ms = max(self.max_ms, window["max"])

    def settle(self, client: Producer | Consumer) -> None:
        """One more full stats interval, so the last window is reported."""
        seen = self.callbacks
        deadline = time.monotonic() + 10
        while self.callbacks < seen + 2 and time.monotonic() < deadline:
            client.poll(0.1)


def throttle_totals(broker: BrokerProcess) -> tuple[float, float]:
    samples = scrape(endpoint_url(broker, "metrics"))
    totals = [
        value(samples, "samsa_client_throttle_time_ms_total", quota_type=q)
        for q in ("producer_byte_rate", "consumer_byte_rate", "request_percentage")
    ]
    return totals[0], totals[1]


def test_librdkafka_reports_the_throttle_time_the_broker_sent(
    broker: BrokerProcess, topic_name: str
) -> None:
    client = RawClient(broker.bootstrap)
    try:
        assert alter(client, entity(client_id="slow-producer"), producer_byte_rate=100_000) == {
            "error_code": 0,
            "error_message": None,
            "entity": entity(client_id="slow-producer"),
        }
    finally:
        client.close()
    produced_before, _ = throttle_totals(broker)
    stats = ThrottleStats()
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "client.id": "slow-producer",
            "linger.ms": 5,
            "batch.size": 20_000,  # many requests, each measured
            "statistics.interval.ms": 200,
            "stats_cb": stats,
        }
    )
    started = time.monotonic()
    payload = b"x" * 1000
    for _ in range(400):  # 400 KB at 100 KB/s
        while True:
            try:
                producer.produce(topic_name, payload)
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(60) == 0
    elapsed = time.monotonic() - started
    stats.settle(producer)
    produced_after, _ = throttle_totals(broker)
    sent_ms = produced_after - produced_before
    assert sent_ms > 0 and stats.count > 0
    # Every throttle_time_ms the broker put in a response is in librdkafka's windows.
    assert stats.sum_ms == sent_ms, (stats.sum_ms, sent_ms, stats.count)
    # 400 KB at 100 KB/s, one window of burst allowed: at least ~2 s.
    assert elapsed >= 2.0, elapsed


def produce_all(bootstrap: str, topic: str, count: int, size: int, **config: Any) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **config})
    payload = b"y" * size
    for _ in range(count):
        while True:
            try:
                producer.produce(topic, payload)
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(60) == 0
    return producer


def test_a_consumer_over_its_quota_gets_bounded_fetches_and_is_throttled(
    broker: BrokerProcess, topic_name: str
) -> None:
    # Small batches: a fetch always carries its first batch whole, as Kafka's does.
    produce_all(broker.bootstrap, topic_name, 600, 1000, **{"batch.size": 20_000})
    client = RawClient(broker.bootstrap)
    try:
        assert (
            alter(client, entity(client_id="slow-consumer"), consumer_byte_rate=200_000)[
                "error_code"
            ]
            == 0
        )
    finally:
        client.close()
    _, fetched_before = throttle_totals(broker)
    stats = ThrottleStats()
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "client.id": "slow-consumer",
            "group.id": f"g-{topic_name}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "statistics.interval.ms": 200,
            "stats_cb": stats,
        }
    )
    try:
        consumer.subscribe([topic_name])
        received = 0
        first_at: float | None = None
        deadline = time.monotonic() + 60
        while received < 600 and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None or message.error():
                continue
            if first_at is None:
                first_at = time.monotonic()
            received += 1
        assert received == 600
        assert first_at is not None
        elapsed = time.monotonic() - first_at
        stats.settle(consumer)
    finally:
        consumer.close()
    _, fetched_after = throttle_totals(broker)
    # ~600 KB at 200 KB/s with one window of burst: each fetch carries at most
    # 200 KB, and the rest waits for the throttle.
    assert elapsed >= 1.5, elapsed
    assert fetched_after - fetched_before > 0
    assert stats.sum_ms == fetched_after - fetched_before


def test_quotas_survive_a_restart(tmp_path: Any, topic_name: str) -> None:
    proc = BrokerProcess(tmp_path / "data", SMALL_WINDOWS)
    proc.start()
    try:
        client = RawClient(proc.bootstrap)
        try:
            ent = entity(user=None, client_id="kept")
            assert alter(client, ent, producer_byte_rate=10_000)["error_code"] == 0
        finally:
            client.close()
        assert proc.stop() == 0
        proc.start()
        client = RawClient(proc.bootstrap)
        try:
            assert quotas_of(describe(client, client_id="kept")) == {
                (("client-id", "kept"), ("user", None)): {"producer_byte_rate": 10_000.0}
            }
        finally:
            client.close()
        stats = ThrottleStats()
        producer = produce_all(
            proc.bootstrap,
            topic_name,
            30,
            1000,
            **{
                "client.id": "kept",
                "batch.size": 5_000,
                "statistics.interval.ms": 200,
                "stats_cb": stats,
            },
        )
        stats.settle(producer)
        assert stats.count > 0, "the restarted broker did not throttle the client"
    finally:
        proc.stop()
        proc.kill()


def stored_bytes(broker: BrokerProcess, topic: str) -> int:
    """Bytes of record batches in a partition's segments: what the produce quota counts."""
    return sum(f.stat().st_size for f in (broker.data_dir / f"{topic}-0").glob("*.log"))


class GreedyProducer(threading.Thread):
    """Produces 1 KB records as fast as the client lets it, until stopped."""

    def __init__(self, bootstrap: str, topic: str, client_id: str) -> None:
        super().__init__(daemon=True)
        self.topic = topic
        self.stop = threading.Event()
        self.producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "client.id": client_id,
                "linger.ms": 5,
                "batch.size": 1_000_000,  # few throttle cycles: each costs a round trip
                "queue.buffering.max.kbytes": 4096,
            }
        )

    def run(self) -> None:
        payload = b"z" * 1000
        while not self.stop.is_set():
            try:
                self.producer.produce(self.topic, payload)
            except BufferError:
                self.producer.poll(0.01)
        # What is still queued is not measured: drop it rather than wait out the quota.
        self.producer.purge(in_queue=True, in_flight=False)
        self.producer.flush(30)


RATE_TEST_S = 30.0
LIMIT = 1_000_000


def test_a_producer_is_held_to_its_quota_while_an_unthrottled_one_keeps_its_rate(
    broker: BrokerProcess, topic_name: str
) -> None:
    """The only long test here: 3 s of the unthrottled producer alone, then both for 30 s.

    Rates are read from the segment files, which hold exactly the batch bytes
    the quota counts.  With a greedy client a sampled-window rate is a sawtooth
    whose period is the whole window (an expired sample frees its bytes at
    once), so a 30 s average of Kafka's 11 x 1 s default swings between 0.75
    and 1.12 of the quota with the phase; this broker's 2 x 1 s windows keep it
    within 0.98-1.03 (both ranges from a simulation of ``SampledRate``)."""
    limited, free = f"{topic_name}-limited", f"{topic_name}-free"
    client = RawClient(broker.bootstrap)
    try:
        ent = entity(client_id="limited-producer")
        assert alter(client, ent, producer_byte_rate=LIMIT)["error_code"] == 0
    finally:
        client.close()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for future in admin.create_topics([NewTopic(limited, 1, 1), NewTopic(free, 1, 1)]).values():
        future.result(10)
    unthrottled = GreedyProducer(broker.bootstrap, free, "free-producer")
    unthrottled.start()
    throttled = GreedyProducer(broker.bootstrap, limited, "limited-producer")
    try:
        time.sleep(1.0)  # warm-up: connections and metadata (not measured)
        free_before, started = stored_bytes(broker, free), time.monotonic()
        time.sleep(3.0)
        alone_rate = (stored_bytes(broker, free) - free_before) / (time.monotonic() - started)
        throttled.start()
        # The quota's windows start with its first append; so does the clock.
        wait_until(lambda: stored_bytes(broker, limited) > 0, 30, "the first throttled append")
        free_before, started = stored_bytes(broker, free), time.monotonic()
        time.sleep(RATE_TEST_S)
        elapsed = time.monotonic() - started
        limited_rate = stored_bytes(broker, limited) / elapsed
        together_rate = (stored_bytes(broker, free) - free_before) / elapsed
    finally:
        throttled.stop.set()
        unthrottled.stop.set()
        throttled.join(60)
        unthrottled.join(60)
    print(
        f"limited {limited_rate / 1e6:.3f} MB/s (quota 1.000); unthrottled alone "
        f"{alone_rate / 1e6:.2f} MB/s, beside it {together_rate / 1e6:.2f} MB/s "
        f"({together_rate / alone_rate:.2f}x)"
    )
    # Never over the quota by more than the windows allow; below it by up to 20 %:
    # the throttled client shares this test process (and the GIL) with a greedy
    # one writing 5+ MB/s on two cores, and one CI run, alone on the machine,
    # measured 0.87 (seven before it 0.925-0.988).
    assert 0.8 * LIMIT <= limited_rate <= 1.1 * LIMIT
    # Not held by the other client's quota.  (Its ratio to its rate alone is printed,
    # not asserted: on a shared machine the neighbours move it more than the broker.)
    assert together_rate >= 5 * LIMIT


def test_a_client_over_its_request_percentage_is_answered_then_muted(
    broker: BrokerProcess,
) -> None:
    """KIP-219: the throttled answer comes at once; the next request on that
    connection is not read until the throttle time has passed."""
    admin = RawClient(broker.bootstrap)
    try:
        ent = entity(client_id="busy-client")
        assert alter(admin, ent, request_percentage=0.01)["error_code"] == 0
    finally:
        admin.close()
    client = RawClient(broker.bootstrap)
    correlation = iter(range(1, 1000))

    def metadata() -> dict[str, Any]:
        corr = next(correlation)
        client.send_raw(encode_request(3, 9, corr, "busy-client", {"topics": []}))
        got, body = decode_response(3, 9, memoryview(client.read_frame()))
        assert got == corr
        return body

    try:
        throttle_ms = 0
        for _ in range(20):  # 0.01% of a second is 0.1 ms of handler time per second
            # Timed from before the throttled request is sent: the broker mutes
            # the connection once it has answered, so time counted from when
            # the answer was read would miss the answer's own way back (6 ms of
            # a 60 ms throttle once, on a loaded CI machine).
            asked = time.monotonic()
            throttle_ms = metadata()["throttle_time_ms"]
            if throttle_ms:
                break
        assert throttle_ms > 0
        metadata()
        assert (time.monotonic() - asked) * 1000 >= throttle_ms * 0.9
    finally:
        client.close()
        admin = RawClient(broker.bootstrap)
        try:
            assert (
                alter(admin, entity(client_id="busy-client"), request_percentage=None)["error_code"]
                == 0
            )
        finally:
            admin.close()
