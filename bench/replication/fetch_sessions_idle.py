"""Idle replication cost with and without fetch sessions (KIP-227).

Starts a three-node cluster (Kafka's default timeouts: replica.fetch.wait.max.ms
500), creates ``--partitions`` partitions at replication factor 3 and, once
every ISR is whole, measures over ``--seconds`` of idleness, per broker:
the bytes its replica fetchers sent and received per second
(``samsa_replica_fetch_bytes`` on /metrics) and the CPU seconds its process
used per second (/proc/PID/stat).  Then the same with
``max.incremental.fetch.session.cache.slots=0``, which makes every leader
refuse sessions, so followers send full fetches as before KIP-227.

    .venv/bin/python -m bench.replication.fetch_sessions_idle [--partitions 1000] [--seconds 10]
"""

from __future__ import annotations

import argparse
import os
import re
import time
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from bench.common.cluster import local_cluster, machine_line, node_metadata, table, wait_until
from samsa.client import Admin
from samsa.client.admin.results import NewTopic
from samsa.errors import ErrorCode, KafkaError
from samsa.testing.cluster import LocalCluster

TOPIC = "idle"
KAFKA_CHECKPOINTS = {"log.flush.offset.checkpoint.interval.ms": "60000"}
"""Kafka's default, which the test harness shortens to 1 s: an idle broker of
10,000 partitions would rewrite its recovery-point checkpoint every second."""
TICKS = os.sysconf("SC_CLK_TCK")


def metrics_url(cluster: LocalCluster, node_id: int) -> str:
    node = cluster.nodes[node_id]
    assert node.wait_for_log("metrics listening on http://")
    found = re.search(r"metrics listening on (http://\S+/)", node.log_text())
    assert found is not None
    return found.group(1) + "metrics"


def scrape(url: str) -> dict[str, float]:
    """The few samples this bench reads, by name and direction label."""
    with urllib.request.urlopen(url, timeout=30) as response:
        text = response.read().decode()
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        if family.name in ("samsa_replica_fetch_bytes", "samsa_fetch_sessions", "samsa_partitions"):
            for s in family.samples:
                out[s.name + s.labels.get("direction", "")] = s.value
    return out


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def all_in_sync(cluster: LocalCluster, partitions: int) -> bool:
    [topic] = node_metadata(cluster, 1, [TOPIC])["topics"]
    parts = topic["partitions"]
    return len(parts) == partitions and all(len(p["isr_nodes"]) == 3 for p in parts)


CREATE_STEP = 1000
"""Partitions per CreateTopics/CreatePartitions: one request for 10,000 held the
controller's and every broker's event loop long enough on this 2-core machine
to miss 2 s heartbeats and Raft fetches (brokers fenced, elections)."""


def create(cluster: LocalCluster, partitions: int) -> None:
    urls = [metrics_url(cluster, n) for n in cluster.nodes]
    created = 0
    while created < partitions:
        target = min(partitions, created + CREATE_STEP)

        def attempt(target: int = target, first: bool = created == 0) -> bool:
            """An earlier attempt that timed out on the client may have done it."""
            config = {"bootstrap.servers": cluster.bootstrap, "request.timeout.ms": 60000}
            try:
                with Admin(config) as a:
                    if first:
                        a.create_topics([NewTopic(TOPIC, target, 3, {})], timeout=120)
                    else:
                        a.create_partitions({TOPIC: target}, timeout=120)
            except KafkaError as exc:
                if exc.code not in (ErrorCode.TOPIC_ALREADY_EXISTS, ErrorCode.INVALID_PARTITIONS):
                    raise
            return True

        wait_until(attempt, 180, f"growing the topic to {target} partitions")
        # A new partition's ISR is whole from the start, so wait until every
        # broker hosts them all (it creates their logs off its event loop):
        # before that a follower fetches nothing for them and a produce is refused.
        wait_until(
            lambda target=target: all(scrape(u).get("samsa_partitions", 0) >= target for u in urls),
            1800,
            f"every broker hosting {target} partitions",
        )
        created = target
    wait_until(lambda: all_in_sync(cluster, partitions), 600, "every ISR whole")


def measure(partitions: int, seconds: float, slots: str) -> list[tuple[int, float, float, float]]:
    settings = {
        **KAFKA_CHECKPOINTS,
        "metrics.listen": "127.0.0.1:0",
        "max.incremental.fetch.session.cache.slots": slots,
    }
    with local_cluster(3, settings=settings) as cluster:
        create(cluster, partitions)
        urls = {n: metrics_url(cluster, n) for n in cluster.nodes}
        pids = {n: cluster.nodes[n].proc.pid for n in cluster.nodes}  # type: ignore[union-attr]
        if slots != "0":
            wait_until(
                lambda: all(scrape(u).get("samsa_fetch_sessions", 0) >= 2 for u in urls.values()),
                120,
                "follower sessions on every leader",
            )
        time.sleep(2)  # let the fetchers settle after the last ISR change
        # Each broker's CPU is read after its /metrics was rendered at the start
        # and before it is at the end, so rendering (seconds at 10,000
        # partitions) falls outside the window; per-broker windows, as the
        # renderings follow one another.
        before = {}
        for n, url in urls.items():
            counters = scrape(url)
            before[n] = (counters, cpu_seconds(pids[n]), time.monotonic())
        time.sleep(seconds)  # the measurement window
        rows = []
        for n, url in urls.items():
            cpu, ended = cpu_seconds(pids[n]), time.monotonic()
            after = scrape(url)
            counters, cpu_before, started = before[n]
            elapsed = ended - started
            sent = (
                after["samsa_replica_fetch_bytes_totalsent"]
                - counters["samsa_replica_fetch_bytes_totalsent"]
            )
            received = (
                after["samsa_replica_fetch_bytes_totalreceived"]
                - counters["samsa_replica_fetch_bytes_totalreceived"]
            )
            rows.append((n, sent / elapsed, received / elapsed, (cpu - cpu_before) / elapsed))
        return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    print(machine_line())
    print(
        f"{args.partitions} idle partitions, RF 3, 3 brokers, {args.seconds:.0f} s window",
        flush=True,
    )
    results = {
        "sessions": measure(args.partitions, args.seconds, "1000"),
        "no sessions": measure(args.partitions, args.seconds, "0"),
    }
    rows = []
    for mode, measured in results.items():
        for node_id, sent, received, cpu in measured:
            rows.append(
                [mode, str(node_id), f"{sent:,.0f}", f"{received:,.0f}", f"{cpu * 100:.1f}%"]
            )
    print(table(["mode", "broker", "fetch B/s sent", "fetch B/s received", "CPU"], rows))
    on = sum(s + r for _, s, r, _ in results["sessions"])
    off = sum(s + r for _, s, r, _ in results["no sessions"])
    cpu_on = sum(c for *_, c in results["sessions"])
    cpu_off = sum(c for *_, c in results["no sessions"])
    print(
        f"fetch bytes: {off / max(on, 1):.1f}x less with sessions; CPU {cpu_off / max(cpu_on, 1e-9):.1f}x less"
    )


if __name__ == "__main__":
    main()
