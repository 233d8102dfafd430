"""An idle consumer's fetch traffic with and without fetch sessions (KIP-227).

One broker, one ``--partitions`` topic, no records: a Samsa consumer assigned
every partition long-polls it with the default ``fetch.max.wait.ms`` (500).
Over ``--seconds`` after the first fetches it counts, from the client's own
per-api counters (``NetworkClient.request_bytes_sent`` /
``response_bytes_received``), the Fetch bytes it sent and received per second.
Then the same with the Samsa-only ``fetch.sessions.enable=false``, which sends
the full request every time, as before KIP-227 (Kafka's Java client has no
such switch).  ``--brokers`` picks the brokers (``samsa``, ``kafka``, ...).

    .venv/bin/python -m bench.clients.fetch_sessions_consumer [--partitions 1000] [--seconds 10]
"""

from __future__ import annotations

import argparse
import time

from bench.common.brokers import broker
from bench.common.cluster import machine_line, table
from samsa.client import Admin, Consumer, NewTopic, TopicPartition

TOPIC = "idle-consumer"
FETCH = 1


def measure(bootstrap: str, partitions: int, seconds: float, sessions: bool) -> tuple[float, ...]:
    """(fetches/s, request B/s, response B/s) of an idle consumer."""
    conf = {"bootstrap.servers": bootstrap, "fetch.sessions.enable": sessions}
    with Consumer({**conf, "auto.offset.reset": "earliest"}) as consumer:
        tps = [TopicPartition(TOPIC, p) for p in range(partitions)]
        consumer.assign(tps)
        for tp in tps:  # every partition in the first fetch (Kafka elects leaders lazily)
            consumer.position(tp, timeout=120)
        net = consumer._client.client
        deadline = time.monotonic() + 60
        while net.requests_sent.get(FETCH, 0) < 3:  # past the first, full fetch
            assert time.monotonic() < deadline, "the consumer never fetched"
            consumer.poll(0.1)
        before = (net.requests_sent[FETCH], net.request_bytes_sent[FETCH])
        received = net.response_bytes_received.get(FETCH, 0)
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            assert consumer.poll(0.1) == []
        elapsed = time.monotonic() - started
        return (
            (net.requests_sent[FETCH] - before[0]) / elapsed,
            (net.request_bytes_sent[FETCH] - before[1]) / elapsed,
            (net.response_bytes_received.get(FETCH, 0) - received) / elapsed,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--brokers", default="samsa")
    args = parser.parse_args()
    print(machine_line())
    print(f"{args.partitions} idle partitions, one consumer, {args.seconds:.0f} s window")
    rows = []
    for name in args.brokers.split(","):
        with broker(name) as bootstrap:
            with Admin({"bootstrap.servers": bootstrap, "request.timeout.ms": 120000}) as admin:
                admin.create_topics([NewTopic(TOPIC, args.partitions, 1)], timeout=120)
            on = measure(bootstrap, args.partitions, args.seconds, True)
            off = measure(bootstrap, args.partitions, args.seconds, False)
        for mode, (rate, sent, got) in (("sessions", on), ("no sessions", off)):
            rows.append([name, mode, f"{rate:.1f}", f"{sent:,.0f}", f"{got:,.0f}"])
        ratio = (off[1] + off[2]) / max(on[1] + on[2], 1)
        rows.append([name, "ratio", "", f"{off[1] / max(on[1], 1):.0f}x", f"{ratio:.0f}x (both)"])
    print(table(["broker", "mode", "fetches/s", "request B/s", "response B/s"], rows))


if __name__ == "__main__":
    main()
