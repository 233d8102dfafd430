"""Kafka's own load tools as the load client, against Samsa and the peer broker.

``broker_vs_peer.py`` loads both brokers with Python and librdkafka; here the
client is Apache Kafka's Java client as Kafka's performance tools drive it
(``kafka-producer-perf-test``, ``kafka-consumer-perf-test``,
``kafka-e2e-latency``, run by their main classes from ``.kafka-reference``),
so neither Python nor librdkafka is in the loop. Both brokers run at once;
each case runs against each in turn, alternating which goes first. Broker CPU
is /proc/PID/stat around each tool run, RSS is RssAnon after the runs.
CreateTopics latency is timed with librdkafka's admin client.

Both brokers first get the same un-counted warm-up (one producer-perf and one
consumer-perf run of ``--warmup-records``), which the JVM's JIT needs.

    .venv/bin/python -m bench.broker.kafka_tools_vs_peer [--peer kafka] [--records 1000000] [--runs 1]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path

from confluent_kafka.admin import AdminClient, NewTopic

from bench.broker.broker_vs_peer import Broker, cpu_seconds, rss_anon_mb, start_samsa
from bench.common.peers import add_peer_argument, peer_broker
from samsa.testing.kafka_reference import KafkaReference, load_reference

TOOL_HEAP = "512m"
RECORD_SIZE = 100
PRODUCED = re.compile(r"(\d+) records sent, ([\d.]+) records/sec .*?, ([\d.]+) ms avg latency")


def tool(
    reference: KafkaReference, broker: Broker, main_class: str, *args: str
) -> tuple[str, float]:
    """Run one of Kafka's tools to completion; returns its stdout and the
    broker's CPU seconds spent meanwhile."""
    cpu0 = cpu_seconds(broker.pid)
    done = subprocess.run(
        reference.java_command(main_class, *args, heap=TOOL_HEAP),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    cpu = cpu_seconds(broker.pid) - cpu0
    if done.returncode != 0:
        raise RuntimeError(f"{main_class} against {broker.name} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")  # fmt: skip
    return done.stdout, cpu


def create_topic(bootstrap: str, topic: str, partitions: int) -> float:
    """CreateTopics round trip (s), through librdkafka's admin client."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    started = time.monotonic()
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(60)
    return time.monotonic() - started


def produce(ref: KafkaReference, broker: Broker, topic: str, records: int, acks: str) -> dict[str, float]:  # fmt: skip
    out, cpu = tool(
        ref, broker, "org.apache.kafka.tools.ProducerPerformance",
        "--topic", topic, "--num-records", str(records), "--record-size", str(RECORD_SIZE),
        "--throughput", "-1",
        "--producer-props", f"bootstrap.servers={broker.bootstrap}", f"acks={acks}",
    )  # fmt: skip
    match = PRODUCED.findall(out)
    if not match:
        raise RuntimeError(f"no summary from ProducerPerformance:\n{out[-2000:]}")
    sent, rate, avg_ms = match[-1]
    assert int(sent) == records, out[-500:]
    return {"records_per_s": float(rate), "avg_ms": float(avg_ms), "cpu_s": cpu}


def consume(ref: KafkaReference, broker: Broker, topic: str, records: int) -> dict[str, float]:
    out, cpu = tool(
        ref, broker, "org.apache.kafka.tools.ConsumerPerformance",
        "--bootstrap-server", broker.bootstrap, "--topic", topic,
        "--messages", str(records), "--timeout", "60000",
        "--group", f"perf-{uuid.uuid4().hex[:8]}",
    )  # fmt: skip
    lines = [line for line in out.splitlines() if line.strip()]
    header = next(i for i, line in enumerate(lines) if line.startswith("start.time"))
    stats = dict(
        zip(
            (h.strip() for h in lines[header].split(",")),
            (v.strip() for v in lines[header + 1].split(",")),
            strict=False,
        )
    )
    consumed = int(stats["data.consumed.in.nMsg"])
    assert consumed >= records, f"consumed {consumed} of {records}"
    return {
        "records_per_s": float(stats["nMsg.sec"]),
        "fetch_records_per_s": float(stats["fetch.nMsg.sec"]),
        "cpu_s": cpu,
    }


def e2e(ref: KafkaReference, broker: Broker, records: int) -> dict[str, float]:
    topic = f"e2e-{uuid.uuid4().hex[:8]}"
    create_topic(broker.bootstrap, topic, 1)
    out, _ = tool(
        ref, broker, "org.apache.kafka.tools.EndToEndLatency",
        broker.bootstrap, topic, str(records), "1", str(RECORD_SIZE),
    )  # fmt: skip
    found = re.search(r"50th = (\d+), 99th = (\d+), 99.9th = (\d+)", out)
    avg = re.search(r"Avg latency: ([\d.]+) ms", out)
    if not found or not avg:
        raise RuntimeError(f"no percentiles from EndToEndLatency:\n{out[-2000:]}")
    return {"avg_ms": float(avg.group(1)), "p50_ms": float(found.group(1)), "p99_ms": float(found.group(2))}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--warmup-records", type=int, default=200_000)
    ap.add_argument("--e2e-records", type=int, default=2000)
    ap.add_argument("--create-topics", type=int, default=20, help="CreateTopics timed per broker")
    add_peer_argument(ap)
    ap.set_defaults(peer="kafka")
    args = ap.parse_args()
    ref = load_reference()

    results: dict[str, dict[str, list[dict[str, float]]]] = {}
    # The brokers stop (the stack) before their data dirs are removed.
    with tempfile.TemporaryDirectory(prefix="samsa-tools-bench-") as tmp, ExitStack() as stack:
        samsa, _ = start_samsa(Path(tmp))
        stack.callback(samsa.stop)
        peer_proc = stack.enter_context(peer_broker(args.peer))
        peer = Broker(args.peer, peer_proc.pid, peer_proc.bootstrap, lambda: None)
        brokers = [samsa, peer]
        for broker in brokers:
            results[broker.name] = {}
            topic = f"warmup-{uuid.uuid4().hex[:8]}"
            create_topic(broker.bootstrap, topic, 1)
            produce(ref, broker, topic, args.warmup_records, "1")
            consume(ref, broker, topic, args.warmup_records)

        def record(broker: Broker, case: str, value: dict[str, float]) -> None:
            results[broker.name].setdefault(case, []).append(value)
            print(f"{broker.name:6} {case}: {value}", file=sys.stderr, flush=True)

        for run in range(args.runs):
            order = brokers if run % 2 == 0 else brokers[::-1]
            for partitions in (1, 6):
                for acks in ("1", "all"):
                    for broker in order:
                        topic = f"perf-{uuid.uuid4().hex[:8]}"
                        create_topic(broker.bootstrap, topic, partitions)
                        record(broker, f"produce p={partitions} acks={acks}", produce(ref, broker, topic, args.records, acks))  # fmt: skip
                        record(broker, f"consume p={partitions}", consume(ref, broker, topic, args.records))  # fmt: skip
            for broker in order:
                record(broker, "e2e (EndToEndLatency, acks=1)", e2e(ref, broker, args.e2e_records))
                times = [create_topic(broker.bootstrap, f"ct-{uuid.uuid4().hex[:8]}", 1) for _ in range(args.create_topics)]  # fmt: skip
                record(broker, "CreateTopics 1 partition", {"p50_ms": statistics.median(times) * 1000})  # fmt: skip
        rss = {broker.name: rss_anon_mb(broker.pid) for broker in brokers}

    name = args.peer
    mb = args.records * RECORD_SIZE / 1e6

    def med(who: str, case: str, key: str) -> float:
        return statistics.median(r[key] for r in results[who][case])

    print(f"\nKafka's own load tools (Kafka {ref.kafka_version}'s Java client) against both brokers, side by side;")  # fmt: skip
    print(f"{args.runs} run(s), medians, {args.records:,} records of {RECORD_SIZE} B. Warm-up, the same on both")  # fmt: skip
    print(f"sides and not counted: {args.warmup_records:,} records through producer-perf and consumer-perf.\n")  # fmt: skip
    print(f"| case | Samsa | {name} | Samsa/{name} |")
    print("|---|---|---|---|")
    for case in results["samsa"]:
        keys = ("p50_ms", "p99_ms") if case.startswith("e2e") else ("records_per_s",)
        keys = ("p50_ms",) if case.startswith("CreateTopics") else keys
        for key in keys:
            s, p = med("samsa", case, key), med(name, case, key)
            print(f"| {case} {key} | {s:,.1f} | {p:,.1f} | {s / p if p else float('inf'):.2f} |")
        if "cpu_s" in results["samsa"][case][0]:
            s, p = (med(who, case, "cpu_s") / mb * 1000 for who in ("samsa", name))
            print(f"| {case} broker CPU s/GB | {s:.1f} | {p:.1f} | {s / p if p else float('inf'):.2f} |")  # fmt: skip
    print(f"| RssAnon after the runs (MB) | {rss['samsa']:.0f} | {rss[name]:.0f} | {rss['samsa'] / rss[name]:.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
