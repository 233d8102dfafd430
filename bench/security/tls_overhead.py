"""Produce and consume over SSL as a ratio of PLAINTEXT, on one broker, in one run.

One Samsa broker serves a PLAINTEXT and an SSL listener (a self-signed
certificate made with ``openssl`` for the run); the same confluent-kafka
producer and consumer settings run against each listener in turn, alternating
the order per run.  Reported: medians of records/s for produce and consume,
the broker's CPU seconds per GB moved, and SSL/PLAINTEXT ratios (targets from
issue 22: >= 0.6 produce, >= 0.5 consume).  On TLS listeners fetch data is
read and encrypted instead of sent with ``sendfile``; this is what that costs.

    .venv/bin/python -m bench.security.tls_overhead --runs 3 --records 1000000
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.testing import BrokerProcess

VALUE = b"x" * 100


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100


def self_signed(directory: Path) -> tuple[Path, Path]:
    key, cert = directory / "key.pem", directory / "cert.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ],
        check=True, capture_output=True,
    )  # fmt: skip
    both = directory / "keystore.pem"
    both.write_text(key.read_text() + cert.read_text())
    return both, cert


def produce(conf: dict[str, str], topic: str, records: int) -> float:
    producer = Producer({**conf, "linger.ms": 5, "batch.size": 1_000_000, "acks": 1})
    started = time.perf_counter()
    for _ in range(records):
        while True:
            try:
                producer.produce(topic, VALUE)
                break
            except BufferError:
                producer.poll(0.01)
    producer.flush(120)
    return records / (time.perf_counter() - started)


def consume(conf: dict[str, str], topic: str, records: int) -> float:
    consumer = Consumer({**conf, "group.id": f"bench-{topic}", "enable.auto.commit": False,
                         "fetch.max.bytes": 52_428_800})  # fmt: skip
    consumer.assign([TopicPartition(topic, 0, 0)])
    got = 0
    started = time.perf_counter()
    while got < records:
        got += sum(1 for m in consumer.consume(10_000, 1.0) if m.error() is None)
    elapsed = time.perf_counter() - started
    consumer.close()
    return records / elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--records", type=int, default=1_000_000)
    args = ap.parse_args()
    gb = args.records * len(VALUE) / 1e9
    results: dict[str, dict[str, list[float]]] = {
        p: {"produce": [], "consume": [], "produce_cpu": [], "consume_cpu": []}
        for p in ("PLAINTEXT", "SSL")
    }
    with tempfile.TemporaryDirectory(prefix="samsa-tls-bench-") as tmp:
        keystore, cert = self_signed(Path(tmp))
        broker = BrokerProcess(
            Path(tmp) / "data",
            {
                "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
                "ssl.keystore.location": str(keystore),
            },
            port=None,
        )
        broker.start()
        try:
            ports = dict(
                re.findall(r"listener (\w+) \(\w+\) bound to [\d.]+:(\d+)", broker.log_text())
            )
            admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{ports['PLAINTEXT']}"})
            assert broker.proc is not None
            pid = broker.proc.pid
            for run in range(args.runs):
                order = ("PLAINTEXT", "SSL") if run % 2 == 0 else ("SSL", "PLAINTEXT")
                for protocol in order:
                    conf = {"bootstrap.servers": f"127.0.0.1:{ports[protocol]}",
                            "security.protocol": protocol}  # fmt: skip
                    if protocol == "SSL":
                        conf["ssl.ca.location"] = str(cert)
                    topic = f"tls-bench-{protocol}-{run}".lower()
                    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
                    cpu0 = cpu_seconds(pid)
                    results[protocol]["produce"].append(produce(conf, topic, args.records))
                    cpu1 = cpu_seconds(pid)
                    results[protocol]["consume"].append(consume(conf, topic, args.records))
                    cpu2 = cpu_seconds(pid)
                    results[protocol]["produce_cpu"].append((cpu1 - cpu0) / gb)
                    results[protocol]["consume_cpu"].append((cpu2 - cpu1) / gb)
                    r = results[protocol]
                    print(f"run {run + 1} {protocol:9}: produce {r['produce'][-1]:,.0f}/s, "
                          f"consume {r['consume'][-1]:,.0f}/s", flush=True)  # fmt: skip
        finally:
            broker.stop()
    med = {p: {k: statistics.median(v) for k, v in m.items()} for p, m in results.items()}
    print(f"\n{args.runs} runs, alternating order; medians. {args.records:,} records of "
          "100 B, one partition, confluent-kafka (linger.ms=5, acks=1).\n")  # fmt: skip
    print("| measure | PLAINTEXT | SSL | SSL/PLAINTEXT | target |")
    print("|---|---|---|---|---|")
    for name, key, target in (
        ("produce records/s", "produce", ">= 0.6"),
        ("consume records/s", "consume", ">= 0.5"),
        ("broker CPU s/GB, produce", "produce_cpu", ""),
        ("broker CPU s/GB, consume", "consume_cpu", ""),
    ):
        plain, tls = med["PLAINTEXT"][key], med["SSL"][key]
        print(f"| {name} | {plain:,.2f} | {tls:,.2f} | {tls / plain:.2f} | {target} |")


if __name__ == "__main__":
    main()
