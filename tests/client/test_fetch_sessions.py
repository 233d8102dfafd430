"""The consumer's incremental fetch sessions (KIP-227) against a real Samsa broker.

An idle consumer of many partitions must send far fewer bytes per fetch once
its session is open, and whatever changes what it fetches (pause, resume,
seek, unassign, a session the broker lost, a restarted or sessionless broker)
must still deliver every record once, in order.  Byte counts come from the
client's own per-api counters (``NetworkClient.request_bytes_sent``).
"""

from __future__ import annotations

import re
import socket
import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from samsa.client import Admin, Consumer, ConsumerRecord, NewTopic, Producer, TopicPartition
from samsa.protocol.api import decode_response, encode_request
from samsa.protocol.fetch_session import FINAL_EPOCH, NO_SESSION
from samsa.testing import BrokerProcess
from samsa.testing.cluster import free_ports
from samsa.testing.kafka import KafkaProcess

pytestmark = pytest.mark.integration

FETCH = 1
IDLE_WAIT_MS = 100  # fetch.max.wait.ms: how long the broker holds an idle fetch


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    broker = BrokerProcess(
        tmp_path_factory.mktemp("csess"),
        {"metrics.listen": "127.0.0.1:0"},
        port=free_ports(1)[0],
    )
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def create_topic(bootstrap: str, topic: str, partitions: int) -> list[TopicPartition]:
    """The topic, once every partition has a leader (Kafka elects them a moment
    after answering), so a consumer's first fetch names them all."""
    with Admin({"bootstrap.servers": bootstrap}) as admin:
        admin.create_topics([NewTopic(topic, partitions, 1)])
        deadline = time.monotonic() + 30
        while True:
            parts = admin.describe_topics([topic])[topic].partitions
            if len(parts) == partitions and all(p.leader >= 0 for p in parts):
                break
            assert time.monotonic() < deadline, f"{topic} has partitions without a leader"
    return [TopicPartition(topic, p) for p in range(partitions)]


def produce(bootstrap: str, tps: Iterable[TopicPartition], count: int, tag: str = "") -> None:
    """``count`` records to each partition, valued ``<partition>-<tag><i>``."""
    with Producer({"bootstrap.servers": bootstrap, "linger.ms": 5}) as producer:
        for i in range(count):
            for tp in tps:
                producer.send(tp.topic, f"{tp.partition}-{tag}{i}".encode(), partition=tp.partition)
        producer.flush(30)


def consumer(bootstrap: str, **conf: object) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "auto.offset.reset": "earliest",
            "fetch.max.wait.ms": IDLE_WAIT_MS,
            **conf,
        }
    )


def fetch_counters(c: Consumer) -> tuple[int, int]:
    """(Fetch requests, Fetch request bytes) the consumer has written."""
    net = c._client.client
    return net.requests_sent.get(FETCH, 0), net.request_bytes_sent.get(FETCH, 0)


def poll_until(
    c: Consumer, done: Callable[[list[ConsumerRecord]], bool], timeout_s: float = 30.0
) -> list[ConsumerRecord]:
    got: list[ConsumerRecord] = []
    deadline = time.monotonic() + timeout_s
    while not done(got):
        assert time.monotonic() < deadline, f"gave up after {len(got)} records"
        got += c.poll(0.05)
    return got


def by_partition(records: list[ConsumerRecord]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for r in records:
        out.setdefault(r.partition, []).append(r.offset)
    return out


def assert_exactly(records: list[ConsumerRecord], expected: dict[int, range]) -> None:
    """Every expected offset once, in order per partition, and nothing else."""
    assert by_partition(records) == {p: list(offsets) for p, offsets in expected.items()}
    for r in records:
        assert r.value.decode().split("-")[0] == str(r.partition)


def assign_resolved(c: Consumer, tps: list[TopicPartition]) -> None:
    """Assign and look up every position before the first fetch, so that
    fetch names every partition (a partition whose offset lookup failed at
    first would join the session later, as a change)."""
    c.assign(tps)
    for tp in tps:
        c.position(tp)


def fetches_done(c: Consumer, count: int, timeout_s: float = 30.0) -> None:
    """Poll (receiving nothing) until ``count`` Fetch requests have gone out."""
    deadline = time.monotonic() + timeout_s
    while fetch_counters(c)[0] < count:
        assert time.monotonic() < deadline, f"only {fetch_counters(c)[0]} fetches sent"
        assert c.poll(0.005) == []


def test_an_idle_consumer_of_200_partitions_sends_small_fetches_and_gets_every_record(
    node: BrokerProcess,
) -> None:
    tps = create_topic(node.bootstrap, "idle-two-hundred", 200)
    with consumer(node.bootstrap) as c:
        assign_resolved(c, tps)
        fetches_done(c, 1)  # the broker holds an idle fetch, so this is the first alone
        _, full_bytes = fetch_counters(c)
        fetches_done(c, 11)
        requests, total = fetch_counters(c)
        idle_bytes = (total - full_bytes) / (requests - 1)
        assert full_bytes >= 10 * idle_bytes, (full_bytes, idle_bytes)

        produce(node.bootstrap, tps, 3)
        got = poll_until(c, lambda got: len(got) >= 600)
        assert_exactly(got, {p: range(3) for p in range(200)})
        # Records moved 200 fetch offsets; once drained the fetches are small again.
        before = fetch_counters(c)
        fetches_done(c, before[0] + 5)
        after = fetch_counters(c)
        assert (after[1] - before[1]) / (after[0] - before[0]) < full_bytes / 5


def test_pause_resume_seek_and_unassign_change_what_the_session_fetches(
    node: BrokerProcess,
) -> None:
    tps = create_topic(node.bootstrap, "pause-seek", 4)
    produce(node.bootstrap, tps, 10)
    with consumer(node.bootstrap) as c:
        c.assign(tps)
        got = poll_until(c, lambda got: len(got) >= 40)
        assert_exactly(got, {p: range(10) for p in range(4)})

        c.pause([tps[0]])
        produce(node.bootstrap, tps, 5, "b")
        got = poll_until(c, lambda got: len(got) >= 15)
        fetches_done(c, fetch_counters(c)[0] + 3)  # p0's records had time to show up
        got += c.poll(0)
        assert_exactly(got, {p: range(10, 15) for p in (1, 2, 3)})

        c.resume([tps[0]])
        got = poll_until(c, lambda got: len(got) >= 5)
        assert_exactly(got, {0: range(10, 15)})

        c.seek(tps[1], 3)
        got = poll_until(c, lambda got: len(got) >= 12)
        assert_exactly(got, {1: range(3, 15)})

        c.assign([tps[0], tps[1], tps[3]])  # p2 leaves the session
        produce(node.bootstrap, tps, 2, "c")
        got = poll_until(c, lambda got: len(got) >= 6)
        fetches_done(c, fetch_counters(c)[0] + 3)
        got += c.poll(0)
        assert_exactly(got, {p: range(15, 17) for p in (0, 1, 3)})


def test_a_rebalance_moves_partitions_out_of_one_session_into_another(
    node: BrokerProcess,
) -> None:
    """A loses half its partitions to B: they leave A's session, join B's, and
    the records produced afterwards reach their new owner once each."""
    tps = create_topic(node.bootstrap, "rebalance", 6)
    produce(node.bootstrap, tps, 3)
    group = {"group.id": "csess-rebalance", "enable.auto.commit": False}
    group |= {"session.timeout.ms": 6000, "heartbeat.interval.ms": 200}
    with consumer(node.bootstrap, **group) as a, consumer(node.bootstrap, **group) as b:
        a.subscribe(["rebalance"])
        got = poll_until(a, lambda got: len(got) >= 18)
        assert_exactly(got, {p: range(3) for p in range(6)})
        a.commit()
        b.subscribe(["rebalance"])
        deadline = time.monotonic() + 30
        while not (a.assignment() and b.assignment() and len(a.assignment() | b.assignment()) == 6):
            assert time.monotonic() < deadline, (a.assignment(), b.assignment())
            assert a.poll(0.05) == [] and b.poll(0.05) == []
        assert not a.assignment() & b.assignment()
        (a_session,) = a._fetcher.requests.sessions.values()
        fetches_done(a, fetch_counters(a)[0] + 2)
        assert set(a_session.partitions) == a.assignment()

        produce(node.bootstrap, tps, 2, "b")
        got_a: list[ConsumerRecord] = []
        got_b: list[ConsumerRecord] = []
        deadline = time.monotonic() + 30
        while len(got_a) + len(got_b) < 12:
            assert time.monotonic() < deadline, (len(got_a), len(got_b))
            got_a += a.poll(0.05)
            got_b += b.poll(0.05)
        owned = {tp.partition for tp in a.assignment()}
        assert_exactly(got_a, {p: range(3, 5) for p in owned})
        assert_exactly(got_b, {p: range(3, 5) for p in range(6) if p not in owned})


def close_session_elsewhere(bootstrap: str, session_id: int) -> None:
    """End a session from another connection with a FINAL_EPOCH fetch, as a
    broker evicting it would: its owner's next fetch gets FETCH_SESSION_ID_NOT_FOUND."""
    host, port = bootstrap.rsplit(":", 1)
    body = {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "session_id": session_id,
        "session_epoch": FINAL_EPOCH,
        "topics": [],
        "forgotten_topics_data": [],
    }
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(encode_request(FETCH, 12, 1, "session-thief", body))
        size = int.from_bytes(recv_exactly(sock, 4), "big")
        _, resp = decode_response(FETCH, 12, memoryview(recv_exactly(sock, size)))
    assert resp["error_code"] == 0


def recv_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        assert chunk, "broker closed the connection"
        data += chunk
    return data


def test_a_session_the_broker_lost_falls_back_to_a_full_fetch(node: BrokerProcess) -> None:
    tps = create_topic(node.bootstrap, "lost-session", 20)
    produce(node.bootstrap, tps, 4)
    with consumer(node.bootstrap) as c:
        c.assign(tps)
        got = poll_until(c, lambda got: len(got) >= 80)
        fetches_done(c, fetch_counters(c)[0] + 2)
        (session,) = c._fetcher.requests.sessions.values()
        lost = session.session_id
        assert lost != NO_SESSION

        close_session_elsewhere(node.bootstrap, lost)
        produce(node.bootstrap, tps, 4, "b")
        got += poll_until(c, lambda new: len(new) >= 80)
        assert_exactly(got, {p: range(8) for p in range(20)})
        fetches_done(c, fetch_counters(c)[0] + 2)
        assert session.session_id not in (NO_SESSION, lost)  # a new session took over


def open_sessions(broker: BrokerProcess) -> int:
    """The broker's ``samsa_fetch_sessions`` gauge, from its /metrics."""
    found = re.search(r"metrics listening on (http://\S+/)", broker.log_text())
    assert found is not None
    with urllib.request.urlopen(found.group(1) + "metrics", timeout=10) as response:
        text = response.read().decode()
    [value] = re.findall(r"^samsa_fetch_sessions (\S+)$", text, re.MULTILINE)
    return int(float(value))


def test_close_frees_the_session_slot_when_no_fetch_is_parked(node: BrokerProcess) -> None:
    tps = create_topic(node.bootstrap, "close-final", 5)
    before = open_sessions(node)
    c = consumer(node.bootstrap)
    try:
        assign_resolved(c, tps)
        fetches_done(c, 2)
        assert open_sessions(node) == before + 1
        c.pause(tps)  # nothing left to fetch: the parked fetch returns, none follows
        deadline = time.monotonic() + 30
        while c._fetcher.in_flight():
            assert time.monotonic() < deadline
            assert c.poll(0.05) == []
    finally:
        c.close()
    assert open_sessions(node) == before


def test_a_restarted_sessionless_broker_gets_full_fetches_and_loses_nothing(
    tmp_path: Path,
) -> None:
    """The restart drops the connection and every session (the consumer must
    open a new one), and the restarted broker has no slots: it answers the
    request for a session with session id 0, so every fetch stays full."""
    own = BrokerProcess(tmp_path / "data", port=free_ports(1)[0])
    own.start()
    try:
        tps = create_topic(own.bootstrap, "restarts", 30)
        produce(own.bootstrap, tps, 3)
        with consumer(own.bootstrap, **{"reconnect.backoff.max.ms": 200}) as c:
            c.assign(tps)
            got = poll_until(c, lambda new: len(new) >= 90)
            fetches_done(c, fetch_counters(c)[0] + 2)
            (session,) = c._fetcher.requests.sessions.values()
            assert session.session_id != NO_SESSION and session.next_epoch > 1

            own.stop()
            own.settings["max.incremental.fetch.session.cache.slots"] = "0"
            own.start()
            produce(own.bootstrap, tps, 3, "b")
            got += poll_until(c, lambda new: len(new) >= 90)
            before = fetch_counters(c)
            fetches_done(c, before[0] + 3)
            after = fetch_counters(c)
            assert session.session_id == NO_SESSION
            per_fetch = (after[1] - before[1]) / (after[0] - before[0])
            assert per_fetch > 30 * 20, per_fetch  # every partition named every time
            assert_exactly(got, {p: range(6) for p in range(30)})
    finally:
        own.stop()


def test_apache_kafka_opens_a_session_for_the_consumer_and_it_gets_every_record(
    kafka_broker: KafkaProcess,
) -> None:
    bootstrap = kafka_broker.bootstrap
    tps = create_topic(bootstrap, "kafka-sessions", 50)
    with consumer(bootstrap) as c:
        assign_resolved(c, tps)
        fetches_done(c, 1)
        _, full_bytes = fetch_counters(c)
        fetches_done(c, 6)
        requests, total = fetch_counters(c)
        assert full_bytes >= 10 * (total - full_bytes) / (requests - 1)
        (session,) = c._fetcher.requests.sessions.values()
        assert session.session_id != NO_SESSION

        produce(bootstrap, tps, 4)
        got = poll_until(c, lambda got: len(got) >= 200)
        c.pause(tps[:10])
        produce(bootstrap, tps, 2, "b")
        got += poll_until(c, lambda new: len(new) >= 80)
        c.resume(tps[:10])
        got += poll_until(c, lambda new: len(new) >= 20)
        assert_exactly(got, {p: range(6) for p in range(50)})
