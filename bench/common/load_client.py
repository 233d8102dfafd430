"""confluent-kafka load generator used by ``broker_vs_peer.py`` (one run per process).

Kept in its own process so that the broker's CPU is measured without the
client's, and each run starts with a fresh librdkafka instance.  Prints one line
``RESULT {json}``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import struct
import threading
import time
import uuid

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        md = admin.list_topics(topic, timeout=10)
        if topic in md.topics and len(md.topics[topic].partitions) == partitions:
            return
        time.sleep(0.05)
    raise RuntimeError(f"topic {topic} did not appear")


PACE_SLICE = 100


def produce(args: argparse.Namespace) -> dict[str, float]:
    create_topic(args.bootstrap, args.topic, args.partitions)
    producer = Producer(
        {
            "bootstrap.servers": args.bootstrap,
            "acks": args.acks,
            "linger.ms": 5,
            "batch.size": 1_000_000,
            "enable.idempotence": False,
            "queue.buffering.max.messages": 2_000_000,
            "queue.buffering.max.kbytes": 2_000_000,
        }
    )
    value = b"x" * args.size
    errors = 0

    def on_delivery(err: object, _msg: object) -> None:
        nonlocal errors
        if err is not None:
            errors += 1

    start = time.perf_counter()
    # --rate: an offered load, not a race.  Every PACE_SLICE records the sender
    # waits (serving delivery callbacks) until its schedule catches up.
    interval = 1 / args.rate if args.rate else 0.0
    for sent in range(args.records):
        if interval and sent % PACE_SLICE == 0:
            while (ahead := start + sent * interval - time.perf_counter()) > 0:
                producer.poll(ahead)
        while True:
            try:
                producer.produce(args.topic, value, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    producer.flush(120)
    secs = time.perf_counter() - start
    if errors:
        raise RuntimeError(f"{errors} delivery errors")
    return {
        "records_per_s": args.records / secs,
        "mb_per_s": args.records * args.size / secs / 1e6,
        "secs": secs,
    }


def consume(args: argparse.Namespace) -> dict[str, float]:
    consumer = Consumer(
        {
            "bootstrap.servers": args.bootstrap,
            "group.id": f"bench-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 100,
            **({"fetch.queue.backoff.ms": args.queue_backoff_ms} if args.queue_backoff_ms else {}),
        }
    )
    consumer.assign([TopicPartition(args.topic, p, 0) for p in range(args.partitions)])
    # Timed from assign(), not from the first message: starting at the first
    # message would let a broker with a slow first fetch have librdkafka
    # prefetch everything untimed.
    count = 0
    nbytes = 0
    start = time.perf_counter()
    deadline = time.monotonic() + 120
    while count < args.records and time.monotonic() < deadline:
        batch = consumer.consume(10000, 1.0)
        for msg in batch:
            if msg.error():
                raise KafkaException(msg.error())
            count += 1
            nbytes += len(msg.value())
    secs = time.perf_counter() - start
    consumer.close()
    if count < args.records:
        raise RuntimeError(f"consumed only {count} of {args.records}")
    return {"records_per_s": count / secs, "mb_per_s": nbytes / secs / 1e6, "secs": secs}


def e2e(args: argparse.Namespace) -> dict[str, float]:
    create_topic(args.bootstrap, args.topic, 1)
    nonce = uuid.uuid4().bytes[:8]
    consumer = Consumer(
        {
            "bootstrap.servers": args.bootstrap,
            "group.id": f"bench-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": args.fetch_wait_ms,
            "fetch.min.bytes": 1,
            "enable.partition.eof": True,
        }
    )
    consumer.assign([TopicPartition(args.topic, 0, 0)])
    producer = Producer({"bootstrap.servers": args.bootstrap, "linger.ms": 0, "acks": 1})
    total = int(args.rate * args.seconds)
    latencies: list[float] = []
    stop = threading.Event()

    def send() -> None:
        interval = 1.0 / args.rate
        next_at = time.perf_counter()
        for _ in range(total):
            next_at += interval
            delay = next_at - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            producer.produce(args.topic, nonce + struct.pack(">d", time.perf_counter()))
            producer.poll(0)
        producer.flush(30)

    # Warm up: the consumer must be fetching before the paced records start, which
    # its first end-of-partition event shows (a fixed wait was too short for a
    # broker whose new topic takes seconds to reach the consumer's metadata).
    fetching_by = time.monotonic() + 60
    while time.monotonic() < fetching_by:
        msg = consumer.poll(0.1)
        if msg is not None and msg.error() and msg.error().code() == KafkaError._PARTITION_EOF:
            break
    sender = threading.Thread(target=send)
    sender.start()
    deadline = time.monotonic() + args.seconds + 30
    while len(latencies) < total and time.monotonic() < deadline and not stop.is_set():
        msg = consumer.poll(0.1)
        if msg is None or msg.error():
            continue
        value = msg.value()
        if value[:8] != nonce:
            continue
        (sent,) = struct.unpack(">d", value[8:16])
        latencies.append((time.perf_counter() - sent) * 1000)
    sender.join()
    consumer.close()
    latencies.sort()

    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))]

    return {
        "records": len(latencies),
        "p50_ms": statistics.median(latencies),
        "p99_ms": pct(0.99),
        "records_per_s": len(latencies) / args.seconds,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("produce")
    p.add_argument("--partitions", type=int, default=1)
    p.add_argument("--records", type=int, default=1_000_000)
    p.add_argument("--size", type=int, default=100)
    p.add_argument("--acks", default="1")
    p.add_argument(
        "--rate", type=float, default=0, help="records/s offered (0: as fast as possible)"
    )
    c = sub.add_parser("consume")
    c.add_argument("--partitions", type=int, default=1)
    c.add_argument("--records", type=int, default=1_000_000)
    # librdkafka (>= 2.4) stops fetching a partition for fetch.queue.backoff.ms
    # (default 1000) once 100k messages are queued for it, so with defaults the
    # consume rate mostly measures that pause; a short backoff measures the broker.
    c.add_argument("--queue-backoff-ms", type=int, default=0)
    e = sub.add_parser("e2e")
    e.add_argument("--rate", type=float, default=1000)
    e.add_argument("--seconds", type=float, default=10)
    e.add_argument("--fetch-wait-ms", type=int, default=500)
    args = ap.parse_args()
    result = {"produce": produce, "consume": consume, "e2e": e2e}[args.cmd](args)
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
