"""Bad input closes only the offending connection; duplicates are not stored twice."""

from __future__ import annotations

import select
import struct
import threading
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from tests.integration.conftest import stored_batches
from tests.integration.raw_client import RawClient

from samsa.errors import ErrorCode
from samsa.protocol.api import decode_response, encode_request
from samsa.protocol.batches.record_builder import RecordBatchBuilder
from samsa.testing import BrokerProcess


def test_garbage_frame_closes_only_that_connection(broker: BrokerProcess, topic_name: str) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 1})
    stop = threading.Event()
    produced = 0

    def stream() -> None:
        nonlocal produced
        while not stop.is_set():
            producer.produce(topic_name, value=b"steady-%d" % produced)
            produced += 1
            producer.poll(0)
            time.sleep(0.001)

    producer.produce(topic_name, value=b"warmup")
    assert producer.flush(10) == 0
    thread = threading.Thread(target=stream)
    thread.start()
    try:
        bad = [RawClient(broker.bootstrap) for _ in range(4)]
        bad[0].send_raw(struct.pack(">i", 12) + b"\xff" * 12)  # garbage header
        bad[1].send_raw(struct.pack(">i", 2**30))  # over socket.request.max.bytes
        bad[2].send_raw(struct.pack(">i", 10) + struct.pack(">hhih", 9999, 0, 1, -1))  # unknown api
        bad[3].send_raw(
            struct.pack(">i", 14) + struct.pack(">hhih", 3, 5, 1, -1) + b"\x00\x00\x00\x05"
        )  # truncated body
        for client in bad:
            assert client.is_closed_by_peer()
            client.close()
    finally:
        stop.set()
        thread.join()
    assert producer.flush(10) == 0
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "g"})
    _low, high = consumer.get_watermark_offsets(TopicPartition(topic_name, 0), timeout=10)
    consumer.close()
    assert high == produced + 1
    assert broker.wait_for_log("closing connection")


def test_api_versions_of_unknown_version_answers_v0(broker: BrokerProcess) -> None:
    client = RawClient(broker.bootstrap)
    request = struct.pack(">hhih", 18, 99, 7, 3) + b"raw" + b"\x00"
    client.send_raw(struct.pack(">i", len(request)) + request)
    corr, body = decode_response(18, 0, memoryview(client.read_frame()))
    assert corr == 7
    assert body["error_code"] == ErrorCode.UNSUPPORTED_VERSION
    assert any(k["api_key"] == 18 for k in body["api_keys"])
    client.close()


def test_old_produce_versions_refused(broker: BrokerProcess, topic_name: str) -> None:
    client = RawClient(broker.bootstrap)
    body = {
        "acks": 1,
        "timeout_ms": 1000,
        "topic_data": [{"name": topic_name, "partition_data": [{"index": 0, "records": b""}]}],
    }
    response = client.call(0, 2, body)
    code = response["responses"][0]["partition_responses"][0]["error_code"]
    assert code == ErrorCode.UNSUPPORTED_VERSION
    client.close()


def test_identical_idempotent_produce_is_stored_once(
    broker: BrokerProcess, topic_name: str
) -> None:
    client = RawClient(broker.bootstrap)
    client.call(3, 9, {"topics": [{"name": topic_name}], "allow_auto_topic_creation": True})
    init = client.call(
        22,
        4,
        {
            "transactional_id": None,
            "transaction_timeout_ms": 60000,
            "producer_id": -1,
            "producer_epoch": -1,
        },
    )
    assert init["error_code"] == 0
    pid, epoch = init["producer_id"], init["producer_epoch"]

    def produce(seq: int, values: list[bytes]) -> dict:
        builder = RecordBatchBuilder(producer_id=pid, producer_epoch=epoch, base_sequence=seq)
        for v in values:
            builder.append(int(time.time() * 1000), None, v)
        body = {
            "transactional_id": None,
            "acks": -1,
            "timeout_ms": 5000,
            "topic_data": [
                {"name": topic_name, "partition_data": [{"index": 0, "records": builder.build()}]}
            ],
        }
        return client.call(0, 9, body)["responses"][0]["partition_responses"][0]

    first = produce(0, [b"a", b"b", b"c"])
    again = produce(0, [b"a", b"b", b"c"])
    assert first["error_code"] == 0 and again["error_code"] == 0
    assert again["base_offset"] == first["base_offset"] == 0
    gap = produce(10, [b"x"])
    assert gap["error_code"] == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    nxt = produce(3, [b"d"])
    assert nxt["error_code"] == 0 and nxt["base_offset"] == 3
    batches = stored_batches(broker.data_dir, topic_name)
    assert [(h.base_offset, h.records_count) for h in batches] == [(0, 3), (3, 1)]
    client.close()


def test_corrupt_batch_gets_corrupt_message(broker: BrokerProcess, topic_name: str) -> None:
    client = RawClient(broker.bootstrap)
    client.call(3, 9, {"topics": [{"name": topic_name}], "allow_auto_topic_creation": True})
    builder = RecordBatchBuilder()
    builder.append(0, b"k", b"v")
    data = bytearray(builder.build())
    data[-1] ^= 0x55
    body = {
        "transactional_id": None,
        "acks": 1,
        "timeout_ms": 5000,
        "topic_data": [
            {
                "name": topic_name,
                "partition_data": [
                    {"index": 0, "records": bytes(data)},
                    {"index": 7, "records": builder.build()},
                ],
            }
        ],
    }
    parts = client.call(0, 9, body)["responses"][0]["partition_responses"]
    assert parts[0]["error_code"] == ErrorCode.CORRUPT_MESSAGE
    assert parts[1]["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    bad_name = client.call(
        3, 9, {"topics": [{"name": "bad name!"}], "allow_auto_topic_creation": True}
    )
    assert bad_name["topics"][0]["error_code"] == ErrorCode.INVALID_TOPIC_EXCEPTION
    client.close()


def test_idle_connections_are_closed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    broker = BrokerProcess(tmp_path / "data", {"connections.max.idle.ms": "300"})
    broker.start()
    try:
        client = RawClient(broker.bootstrap)
        client.call(18, 0, {})
        client.sock.settimeout(10)
        started = time.monotonic()
        assert client.is_closed_by_peer()
        assert time.monotonic() - started < 5
        assert broker.wait_for_log("idle longer than connections.max.idle.ms")
    finally:
        broker.kill()


def test_long_poll_fetch_answers_when_data_arrives(broker: BrokerProcess, topic_name: str) -> None:
    """A fetch waiting up to 10 s must be answered as soon as a record is appended."""
    setup = RawClient(broker.bootstrap)
    setup.call(3, 9, {"topics": [{"name": topic_name}], "allow_auto_topic_creation": True})
    waiting = RawClient(broker.bootstrap)
    body = {
        "replica_id": -1,
        "max_wait_ms": 10_000,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic": topic_name,
                "partitions": [
                    {
                        "partition": 0,
                        "current_leader_epoch": -1,
                        "fetch_offset": 0,
                        "log_start_offset": -1,
                        "partition_max_bytes": 1 << 20,
                    }
                ],
            }
        ],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    waiting.correlation += 1
    waiting.send_raw(encode_request(1, 11, waiting.correlation, "raw", body))
    readable, _, _ = select.select([waiting.sock], [], [], 0.2)
    assert not readable, "with no data the fetch must be parked, not answered"
    builder = RecordBatchBuilder()
    builder.append(0, None, b"wake up")
    produce = {
        "transactional_id": None,
        "acks": 1,
        "timeout_ms": 5000,
        "topic_data": [
            {"name": topic_name, "partition_data": [{"index": 0, "records": builder.build()}]}
        ],
    }
    sent_at = time.monotonic()
    setup.call(0, 9, produce)
    _, response = decode_response(1, 11, memoryview(waiting.read_frame()))
    woke_after = time.monotonic() - sent_at
    part = response["responses"][0]["partitions"][0]
    assert part["high_watermark"] == 1 and len(part["records"]) > 0
    assert woke_after < 1.0, "the parked fetch must wake on append, not at max_wait_ms"
    setup.close()
    waiting.close()
