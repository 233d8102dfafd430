"""NetworkClient + Sender + RecordAccumulator against a fake broker socket.

Everything runs on the test thread with a manual clock: ``step()`` is one Sender
loop iteration.  The fake broker reads requests one byte at a time and answers
one byte at a time, so framing and the ApiVersions handshake are exercised too.
"""

from __future__ import annotations

from typing import Any

import pytest
from fakes import (
    FakeBrokerSocket,
    FakeSelector,
    ManualClock,
    api_versions_handler,
    metadata_handler,
    produce_reply,
)

from samsa.client.errors import DeliveryTimeoutError
from samsa.client.metadata import Metadata
from samsa.client.network.in_flight import ClientRequest
from samsa.client.network.network_client import NetworkClient
from samsa.client.producer.accumulator import RecordAccumulator
from samsa.client.producer.buffer_pool import BufferPool
from samsa.client.producer.idempotence import TransactionManager
from samsa.client.producer.sender import Sender
from samsa.errors import ErrorCode
from samsa.protocol.batches.record_reader import decode_records


class Harness:
    def __init__(
        self,
        *,
        acks: int = 1,
        max_in_flight: int = 5,
        idempotent: bool = False,
        linger_ms: int = 0,
        batch_size: int = 1024,
        delivery_timeout_ms: int = 120000,
        chunk: int = 1,
        nodes: int = 1,
    ) -> None:
        self.nodes = nodes
        self.socket_by_port: dict[int, FakeBrokerSocket] = {}
        self.clock = ManualClock()
        self.codes: dict[tuple[str, int], list[int]] = {}
        self.offsets: dict[Any, int] = {}
        self.produce_bodies: list[dict[str, Any]] = []
        self.sockets: list[FakeBrokerSocket] = []
        self.chunk = chunk
        self.metadata = Metadata([("fake", 9092)], 300000, 100, self.clock)
        self.selector = FakeSelector()
        self.client = NetworkClient(
            self.metadata,
            max_in_flight=max_in_flight,
            request_timeout_ms=1000,
            selector=self.selector,
            connector=self._connect,
            clock_ms=self.clock,
        )
        self.txn = TransactionManager() if idempotent else None
        self.acc = RecordAccumulator(
            batch_size=batch_size,
            compression=0,
            linger_ms=linger_ms,
            retry_backoff_ms=100,
            retry_backoff_max_ms=100,
            delivery_timeout_ms=delivery_timeout_ms,
            pool=BufferPool(1 << 20, batch_size),
            clock_ms=self.clock,
            transaction_manager=self.txn,
        )
        self.sender = Sender(
            self.client,
            self.metadata,
            self.acc,
            acks=acks,
            retries=10,
            request_timeout_ms=1000,
            max_request_size=1 << 20,
            delivery_timeout_ms=delivery_timeout_ms,
            guarantee_order=max_in_flight == 1,
            transaction_manager=self.txn,
            clock_ms=self.clock,
        )

    def _connect(self, host: str, port: int) -> FakeBrokerSocket:
        sock = FakeBrokerSocket(
            {
                18: api_versions_handler,
                3: metadata_handler(2, nodes=self.nodes),
                0: self._produce,
                22: self._init_pid,
            },
            chunk=self.chunk,
        )
        self.sockets.append(sock)
        self.socket_by_port[port] = sock
        return sock

    def _init_pid(self, version: int, body: dict[str, Any]) -> dict[str, Any]:
        epoch = body.get("producer_epoch", -1) + 1
        return {"throttle_time_ms": 0, "error_code": 0, "producer_id": 7, "producer_epoch": epoch}

    def _produce(self, version: int, body: dict[str, Any]) -> dict[str, Any] | None:
        self.produce_bodies.append(body)
        if body["acks"] == 0:
            return None

        def code_for(topic: str, partition: int) -> int:
            queue = self.codes.get((topic, partition))
            return queue.pop(0) if queue else 0

        return produce_reply(body, code_for, self.offsets)

    def step(self, n: int = 1) -> None:
        for _ in range(n):
            self.sender.run_once()

    def bootstrap_topic(self, topic: str = "t") -> None:
        self.metadata.add_topic(topic)
        for _ in range(20000):
            self.step()
            if self.metadata.cluster.partition_count(topic):
                return
        raise AssertionError("metadata never arrived")

    def append(self, partition: int, value: bytes, topic: str = "t") -> Any:
        return self.acc.append((topic, partition), self.clock.now_ms, None, value, None, None, 1000)


def run_until(h: Harness, cond: Any, steps: int = 20000) -> None:
    for _ in range(steps):
        if cond():
            return
        h.step()
    raise AssertionError("condition not reached")


def test_handshake_and_metadata_over_one_byte_reads() -> None:
    h = Harness()
    h.bootstrap_topic()
    assert h.client.api_version(1, 0) == 9 or h.client.api_version(-1, 0) == 9
    assert h.metadata.cluster.partition_count("t") == 2


def test_produce_completes_futures_with_offsets() -> None:
    h = Harness()
    h.bootstrap_topic()
    futures = [h.append(i % 2, b"v%d" % i) for i in range(10)]
    run_until(h, lambda: all(f.done() for f in futures))
    offsets = sorted((f.result(0).partition, f.result(0).offset) for f in futures)
    assert offsets == [(0, o) for o in range(5)] + [(1, o) for o in range(5)]


def test_retriable_error_reenqueues_at_head_and_keeps_order() -> None:
    h = Harness(max_in_flight=1, batch_size=100)
    h.bootstrap_topic()
    h.codes[("t", 0)] = [ErrorCode.NOT_LEADER_OR_FOLLOWER]
    futures = [h.append(0, b"x" * 30) for _ in range(6)]  # several batches
    run_until(h, lambda: h.produce_bodies)
    # The failed batch waits out its backoff, then goes first again.
    run_until(h, lambda: len(h.produce_bodies) >= 1 and not h.client.has_in_flight())
    h.clock.now_ms += 200
    run_until(h, lambda: all(f.done() for f in futures))
    offsets = [f.result(0).offset for f in futures]
    assert offsets == sorted(offsets) == list(range(6))


def test_in_flight_limit_is_respected() -> None:
    h = Harness(max_in_flight=2, batch_size=100)
    h.bootstrap_topic()
    warm = h.append(0, b"w")  # connect to the partition leader first
    run_until(h, warm.done)
    for sock in h.sockets:
        sock.hold = True
    for _ in range(10):
        h.append(0, b"y" * 60)
    h.step(500)
    assert h.client.in_flight_count() == 2
    assert len(h.produce_bodies) == 1 + 2
    for sock in h.sockets:
        sock.hold = False
    run_until(h, lambda: len(h.produce_bodies) == 11 and not h.client.has_in_flight())


def test_batches_expire_after_delivery_timeout() -> None:
    h = Harness(delivery_timeout_ms=5000)
    fut = h.append(0, b"z")  # no metadata for "t": nothing can be sent
    h.metadata.add_topic("other")
    h.clock.now_ms += 6000
    h.step()
    with pytest.raises(DeliveryTimeoutError, match=r"delivery\.timeout\.ms"):
        fut.result(0)
    assert h.acc.pool.available_memory() == 1 << 20


def test_an_expired_in_flight_batch_does_not_lend_its_buffer_to_the_next() -> None:
    """Requests are written from the batch buffers; one still queued must keep its bytes."""
    h = Harness(batch_size=32768, delivery_timeout_ms=5000, nodes=2)
    h.bootstrap_topic()  # partition 0 is led by node 1 (port 9092), partition 1 by node 2
    for node in (1, 2):
        run_until(h, lambda node=node: h.client.ready(node, h.clock.now_ms))
    h.socket_by_port[9092].block_writes = True
    first = h.append(0, b"x" * 20000)
    h.clock.now_ms += 4500  # the batch waited before it could be sent...
    run_until(h, lambda: h.client.in_flight_count(1) > 0)
    h.clock.now_ms += 600  # ...so it expires in flight, before its request times out
    h.step()
    with pytest.raises(DeliveryTimeoutError):
        first.result(0)
    # Another node takes the next batch at once: encoded now, into a pooled buffer.
    second = h.append(1, b"y" * 20000)
    run_until(h, second.done)
    h.socket_by_port[9092].block_writes = False
    run_until(h, lambda: len(h.produce_bodies) == 2)
    sent = {
        p["index"]: [r.value for _, records in decode_records(p["records"]) for r in records]
        for body in h.produce_bodies
        for p in body["topic_data"][0]["partition_data"]
    }
    assert sent == {0: [b"x" * 20000], 1: [b"y" * 20000]}


def test_acks_zero_completes_when_written() -> None:
    h = Harness(acks=0)
    h.bootstrap_topic()
    fut = h.append(1, b"fire-and-forget")
    run_until(h, fut.done)
    assert fut.result(0).offset == -1


METADATA_ALL: dict[str, Any] = {
    "topics": [],
    "allow_auto_topic_creation": False,
    "include_cluster_authorized_operations": False,
    "include_topic_authorized_operations": False,
}


def _held_node(h: Harness) -> int:
    """A connected node whose socket then stops answering."""
    h.bootstrap_topic()
    node = next(iter(h.metadata.cluster.nodes))
    run_until(h, lambda: h.client.ready(node, h.clock.now_ms))
    for sock in h.sockets:
        sock.hold = True
    return node


def test_request_timeout_closes_connection_and_refreshes_metadata() -> None:
    h = Harness()
    node = _held_node(h)
    seen: list[Any] = []
    req = ClientRequest(node, 3, METADATA_ALL, callback=seen.append)
    h.client.send(req, h.clock.now_ms)
    h.clock.now_ms += 1500
    h.client.poll(0, h.clock.now_ms)
    assert seen and seen[0].disconnected and seen[0].timed_out
    assert h.metadata.update_requested


def test_a_request_may_carry_its_own_timeout() -> None:
    # JoinGroup is parked by the coordinator for up to the rebalance timeout, so
    # it carries a longer timeout than request.timeout.ms; the shorter default
    # still applies to the requests queued behind it on the same connection.
    h = Harness()
    node = _held_node(h)
    body = METADATA_ALL
    seen: list[Any] = []
    h.client.send(
        ClientRequest(node, 3, body, callback=seen.append, timeout_ms=5000), h.clock.now_ms
    )
    h.clock.now_ms += 1500
    h.client.poll(0, h.clock.now_ms)
    assert not seen, "the long timeout has not run out"
    h.client.send(ClientRequest(node, 3, body, callback=seen.append), h.clock.now_ms)
    h.clock.now_ms += 1500
    h.client.poll(0, h.clock.now_ms)
    assert len(seen) == 2 and all(r.timed_out for r in seen), "the default one expired"


def test_idempotent_retry_keeps_sequences() -> None:
    h = Harness(idempotent=True, batch_size=100, max_in_flight=5)
    h.bootstrap_topic()
    run_until(h, lambda: h.txn is not None and h.txn.has_producer_id)
    h.codes[("t", 0)] = [ErrorCode.NOT_ENOUGH_REPLICAS]
    futures = [h.append(0, b"s" * 30) for _ in range(6)]
    for _ in range(400):  # retries wait out their backoff on the manual clock
        if all(f.done() for f in futures):
            break
        h.step(50)
        h.clock.now_ms += 50
    seqs = []
    for body in h.produce_bodies:
        for t in body["topic_data"]:
            for p in t["partition_data"]:
                seqs.append(int.from_bytes(bytes(p["records"])[53:57], "big"))
    assert seqs[0] == 0 and 0 in seqs[1:]  # first batch resent with its sequence
    assert [f.result(0).offset for f in futures] == list(range(6))
