"""Kafka's scale of partitions: 10,000 per broker on three brokers, in one run.

Three nodes (controller+broker each) with Kafka's defaults except a 500/2000 ms
broker heartbeat/session; one topic of ``--partitions`` partitions at RF 3,
so each broker hosts all of them and leads about a third; idle except for
``--busy`` partitions a paced producer writes to.  Printed, in order:

1. follower fetch bytes and broker CPU per second while idle, with fetch
   sessions (the default) and without (``max.incremental.fetch.session.cache.slots=0``
   on a second cluster), as bench/replication/fetch_sessions_idle.py does;
2. produce latency (p50/p99/max, acks=all) on the busy partitions while a
   topic of ``--create`` more partitions is created (target: none over 100 ms);
3. start-up to serving after SIGKILL and after a clean stop of one broker
   (targets 10 s and 3 s);
4. failover of a broker leading all ``--partitions``: a broker that is not the
   active controller is made the first replica of every partition of the topic
   (a reassignment that only reorders the replicas) and preferred leader (an
   election), then SIGKILLed; timed until no partition names it as leader
   (target 5 s); then, once it is back, the active controller, leading what it
   leads by then (a Raft election and the new controller's fresh broker
   sessions come first);
5. RSS per broker (target 1 GB).

    .venv/bin/python -m bench.scale.scale_10k [--partitions 10000] [--create 1000]

``--create-runs 3 --skip-idle --skip-restarts --skip-failover`` times three
creations in one cluster; with ``SAMSA_SLOW_CALLBACK_MS=20`` in the
environment the brokers log every loop callback that held their loop 20 ms
or more (``samsa.server.observability.slow_callbacks``), with its CPU time.

The machine is shared: quote the load beside the figures.
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from confluent_kafka import Producer

from bench.common.cluster import (
    cache_broker_bytecode,
    local_cluster,
    machine_line,
    node_metadata,
    percentile,
    rss_mb,
    wait_until,
)
from bench.replication.fetch_sessions_idle import (
    KAFKA_CHECKPOINTS,
    all_in_sync,
    create,
    measure,
    metrics_url,
    scrape,
)
from bench.scale.leader_probe import LeaderProbe
from samsa.client import Admin, TopicPartition
from samsa.client.admin import ElectionType
from samsa.client.admin.results import NewTopic
from samsa.testing.cluster import LocalCluster

TOPIC = "idle"
NO_LEADER = -1
SCRAPE_INTERVAL_S = 0.5
SETTINGS = {"broker.heartbeat.interval.ms": "500", "broker.session.timeout.ms": "2000"}


def leaders(cluster: LocalCluster, via: int) -> list[int]:
    [topic] = node_metadata(cluster, via, [TOPIC])["topics"]
    return [p["leader_id"] for p in topic["partitions"]]


PROFILE_FORMAT = "raw"
"""py-spy's output: ``raw`` stacks to summarise, or ``speedscope``, whose samples
keep their order, to find which step held a loop and for how long."""


def profiled(
    cluster: LocalCluster, profile: str | None, skip: int | None = None
) -> list[subprocess.Popen[bytes]]:
    """py-spy recording each broker but ``skip`` (stacks per thread), if asked."""
    if profile is None:
        return []
    spy = Path(sys.executable).with_name("py-spy")
    return [
        subprocess.Popen(
            [
                str(spy),
                "record",
                "-r",
                "100",
                "--threads",
                "-f",
                PROFILE_FORMAT,
                "-o",
                f"{profile}-broker{n}.{'txt' if PROFILE_FORMAT == 'raw' else 'json'}",
                "--pid",
                str(node.proc.pid),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for n, node in cluster.nodes.items()
        if node.proc is not None and n != skip
    ]


def produce_while_creating(
    cluster: LocalCluster,
    busy: int,
    more: int,
    profile: str | None = None,
    full_scrapes: bool = False,
    name: str = "more",
) -> tuple[list[float], list[float]]:
    """Latencies of acks=all records to the busy partitions, one in flight,
    for a few seconds before (what creation adds to) and while a topic of
    ``more`` partitions is created."""
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 0})
    latencies: list[float] = []
    stop = threading.Event()

    def run() -> None:
        i = 0
        while not stop.is_set():
            done = threading.Event()
            started = time.monotonic()
            producer.produce(
                TOPIC, b"x" * 100, partition=i % busy, on_delivery=lambda e, m, d=done: d.set()
            )
            while not done.is_set():
                producer.poll(0.005)
            latencies.append(time.monotonic() - started)
            i += 1

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    wait_until(lambda: len(latencies) >= 20, 180, "the first busy records")
    latencies.clear()
    wait_until(lambda: len(latencies) >= 50, 180, "50 records before creating")
    before = latencies[:]
    latencies.clear()
    # A whole scrape of /metrics at this scale costs a broker ~200 ms of CPU
    # (70,000 partition samples): twice a second on three brokers, the bench's
    # own scrapes took half of the machine's two cores from the produce
    # latency it measures.  So it asks for the one gauge it waits for, unless
    # told to scrape everything (what a Prometheus does, 100x less often).
    query = "" if full_scrapes else "?name%5B%5D=samsa_partitions"
    urls = [metrics_url(cluster, n) + query for n in cluster.nodes]
    hosted = min(scrape(u).get("samsa_partitions", 0) for u in urls) + more
    spies = profiled(cluster, profile)
    started = time.monotonic()
    with Admin({"bootstrap.servers": cluster.bootstrap, "request.timeout.ms": 120000}) as admin:
        admin.create_topics([NewTopic(name, more, 3, {})], timeout=300)
    deadline = time.monotonic() + 600
    while not all(scrape(u).get("samsa_partitions", 0) >= hosted for u in urls):
        if time.monotonic() > deadline:
            raise TimeoutError("every broker hosting the new partitions")
        time.sleep(SCRAPE_INTERVAL_S)
    print(f"created {more} partitions on every broker in {time.monotonic() - started:.1f} s")
    stop_spies(spies)
    stop.set()
    thread.join(30)
    return before, latencies


def stop_spies(spies: list[subprocess.Popen[bytes]]) -> None:
    for spy in spies:
        spy.send_signal(signal.SIGINT)
        spy.wait(60)


_last_asked = [0.0]


def settled(cluster: LocalCluster, partitions: int) -> bool:
    """Every ISR whole, asked at most once a second: a Metadata answer of 11,000
    partitions is re-encoded after every ISR change while the cluster settles,
    and asking 50 times a second (wait_until's pace) kept a broker's loop so busy
    that it missed its 2 s session (fenced, thousands of moves, and again)."""
    if time.monotonic() - _last_asked[0] < 1.0:
        return False
    _last_asked[0] = time.monotonic()
    return all_in_sync(cluster, partitions)


def restart_time(cluster: LocalCluster, node_id: int, partitions: int, *, kill: bool) -> float:
    """Seconds from starting ``node_id`` again until it is ready; first the
    cluster settles (every ISR whole, as a rolling restart waits for no
    under-replicated partition), so a restart is not timed while the cluster
    still absorbs the one before."""
    wait_until(lambda: settled(cluster, partitions), 600, "every ISR whole")
    if kill:
        cluster.kill(node_id)
    else:
        cluster.stop(node_id, timeout=300)
    started = time.monotonic()
    cluster.start([node_id], timeout=600)
    return time.monotonic() - started


def active_controller(cluster: LocalCluster) -> int:
    with Admin({"bootstrap.servers": cluster.bootstrap}) as admin:
        return int(admin.describe_metadata_quorum(timeout=30).leader_id)


def lead_all(cluster: LocalCluster, node_id: int) -> None:
    """Make ``node_id`` the leader of every partition of the topic, as the issue's
    failover asks for a broker leading 10,000: first replica everywhere (the
    same replicas reordered), then a preferred election."""
    [topic] = node_metadata(cluster, 1, [TOPIC])["topics"]
    targets = {
        TopicPartition(TOPIC, p["partition_index"]): [
            node_id,
            *(r for r in p["replica_nodes"] if r != node_id),
        ]
        for p in topic["partitions"]
    }
    config = {"bootstrap.servers": cluster.bootstrap, "request.timeout.ms": 120000}
    with Admin(config) as admin:
        admin.alter_partition_reassignments(targets, timeout=120)
        wait_until(lambda: not admin.list_partition_reassignments(timeout=60), 300, "reordered")
        admin.elect_leaders(ElectionType.PREFERRED, targets, timeout=120)

    def leads_all() -> bool:  # asked once a second, as ``settled`` does
        time.sleep(1.0)
        return collections.Counter(leaders(cluster, 1))[node_id] == len(targets)

    wait_until(leads_all, 300, f"broker {node_id} leading all {len(targets)}")
    wait_until(lambda: settled(cluster, len(targets)), 600, "every ISR whole")


def failover_time(
    cluster: LocalCluster, profile: str | None, *, kill_controller: bool = False
) -> tuple[int, int, float]:
    """SIGKILL the broker leading most partitions among those that are not the
    active controller (or the active controller); seconds until no partition
    names it as leader.  The victim is started again afterwards."""
    # After the restarts, wait until every partition is led again (a restarted
    # broker's partitions whose ISR had shrunk to it come back with it).
    wait_until(lambda: NO_LEADER not in leaders(cluster, 1), 300, "every partition led")
    controller = active_controller(cluster)
    if kill_controller:
        victim = controller
    else:
        victim = next(n for n in cluster.nodes if n != controller)
        lead_all(cluster, victim)
    led = collections.Counter(leaders(cluster, 1))[victim]
    survivor = next(n for n in cluster.nodes if n != victim)
    probe = LeaderProbe(cluster.client_address(survivor), TOPIC)  # see leader_probe
    assert probe.led_by(victim) == led
    spies = profiled(cluster, profile, skip=victim)
    cluster.kill(victim)
    started = time.monotonic()
    probe.wait_led_by_none(victim, 120)
    took = time.monotonic() - started
    probe.close()
    stop_spies(spies)
    cluster.start([victim], timeout=600)
    return victim, led, took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--create", type=int, default=1000)
    parser.add_argument("--busy", type=int, default=10)
    parser.add_argument(
        "--create-runs",
        type=int,
        default=1,
        help="create --create partitions this many times (topics more, more1, ...), "
        "timing the produces during each",
    )
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument(
        "--profile",
        help="py-spy each broker while creating (PREFIX-brokerN.txt) and the survivors "
        "during the failover (PREFIX-failover-brokerN.txt)",
    )
    parser.add_argument("--profile-format", choices=("raw", "speedscope"), default="raw")
    parser.add_argument(
        "--kill-controller",
        action="store_true",
        help="only the failover of the active controller (a Raft election comes first); "
        "by default a broker that is not the controller, then the controller",
    )
    parser.add_argument(
        "--skip-restarts", action="store_true", help="skip the start-up times (measurement 3)"
    )
    parser.add_argument(
        "--skip-idle", action="store_true", help="skip the two idle clusters (measurement 1)"
    )
    parser.add_argument(
        "--skip-failover", action="store_true", help="skip the leader failovers (measurement 4)"
    )
    parser.add_argument(
        "--full-scrapes",
        action="store_true",
        help="wait for the created partitions with whole /metrics scrapes (2/s per broker)",
    )
    args = parser.parse_args()
    global PROFILE_FORMAT
    PROFILE_FORMAT = args.profile_format
    print(machine_line())
    print(cache_broker_bytecode(), flush=True)
    print(f"{args.partitions} partitions at RF 3 on 3 brokers, {args.busy} busy", flush=True)

    for mode, slots in () if args.skip_idle else (("sessions", "1000"), ("no sessions", "0")):
        for node_id, sent, received, cpu in measure(args.partitions, args.seconds, slots):
            print(
                f"idle, {mode}: broker {node_id} fetch {sent:,.0f} B/s sent "
                f"{received:,.0f} B/s received, CPU {cpu * 100:.1f}%",
                flush=True,
            )

    settings: dict[str, Any] = {**SETTINGS, **KAFKA_CHECKPOINTS, "metrics.listen": "127.0.0.1:0"}
    with local_cluster(3, settings=settings) as cluster:
        create(cluster, args.partitions)
        for run in range(args.create_runs):
            before, latencies = produce_while_creating(
                cluster,
                args.busy,
                args.create,
                args.profile,
                args.full_scrapes,
                name=f"more{run}" if run else "more",
            )
            print(
                f"produce before creating: {len(before)} records, p50 "
                f"{percentile(before, 50) * 1000:.0f} ms, max {max(before) * 1000:.0f} ms",
                flush=True,
            )
            print(
                f"produce while creating {args.create} partitions: {len(latencies)} records, "
                f"p50 {percentile(latencies, 50) * 1000:.0f} ms, p99 "
                f"{percentile(latencies, 99) * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms "
                f"(load {os.getloadavg()[0]:.1f})",
                flush=True,
            )
        for node_id, node in cluster.nodes.items():
            assert node.proc is not None
            print(f"RSS broker {node_id}: {rss_mb(node.proc.pid):.0f} MB", flush=True)
        if not args.skip_restarts:
            took = restart_time(cluster, 3, args.partitions, kill=True)
            print(f"ready after SIGKILL: {took:.1f} s", flush=True)
            took = restart_time(cluster, 3, args.partitions, kill=False)
            print(f"ready after clean stop: {took:.1f} s", flush=True)
        failover_profile = None if args.profile is None else f"{args.profile}-failover"
        kinds = [True] if args.kill_controller else [False, True]
        if args.skip_failover:
            kinds = []
        for kill_controller in kinds:
            victim, led, took = failover_time(
                cluster, failover_profile, kill_controller=kill_controller
            )
            who = "the active controller, " if kill_controller else ""
            print(
                f"failover of broker {victim} ({who}leading {led}): "
                f"every partition led in {took:.1f} s",
                flush=True,
            )


if __name__ == "__main__":
    main()
