#!/usr/bin/env python3
"""The Raft metadata quorum on real processes: CreateTopics latency, controller
failover, and start-up from a snapshot of 100,000 partitions.

Not a test: every case runs ``samsa broker`` processes on loopback
(``samsa.testing_cluster.LocalCluster``) and prints a markdown table with the
settings it ran with.

* ``latency``: three combined broker+controller nodes; ``--topics`` topics
  (1 partition, RF 3) created one at a time through ``samsa.client.Admin`` and,
  interleaved on the same cluster, through confluent-kafka's ``AdminClient``
  (the reference client).  p50/p99 of each call's wall time per run; a fresh
  cluster per run; medians of ``--runs``.
* ``failover``: SIGKILL of the active controller (``describe_metadata_quorum``)
  to the next CreateTopics that succeeds through a surviving node, ``--kills``
  times per setting (the killed node is restarted and caught up with the quorum
  before the next kill).  Once with fetch/election timeouts 1000/500 ms, once
  with Kafka's defaults 2000/1000 ms.  The election part is read from the new
  active controller's own log line.
* ``snapshot``: one node (broker+controller, a quorum of one) is given 100,000
  partitions through its controller listener (100 registered stand-in brokers,
  100 CreateTopics of 1,000 partitions, RF 3, explicit assignments so the node
  itself hosts no replica and start-up time is the metadata's, not 300,000
  logs').  The node writes the snapshot itself (restarted once with
  ``metadata.log.max.record.bytes.between.snapshots=1``); then each run restarts
  it and times process start -> "loaded snapshot" line -> ready, beside an
  empty node started the same way (the baseline), and reads RSS.  The image's
  own memory is measured with tracemalloc by loading that snapshot file
  in-process through the code the node runs (``DiskRaftLog.load_snapshot``,
  ``decode_entries``, ``MetadataImage.load_snapshot``).

    export PYTHONPATH=$PWD/src
    .venv/bin/python bench/quorum_bench.py                       # all cases
    .venv/bin/python bench/quorum_bench.py --cases latency --runs 3 --topics 200
    .venv/bin/python bench/quorum_bench.py --cases failover --kills 10
    .venv/bin/python bench/quorum_bench.py --cases snapshot --partitions 100000 --runs 3
"""

from __future__ import annotations

import argparse
import gc
import logging
import re
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from _cluster import (
    call,
    effective,
    local_cluster,
    machine_line,
    percentile,
    print_settings,
    rss_mb,
    spread,
    table,
    wait_until,
)
from samsa.client import Admin
from samsa.client.admin.results import NewTopic
from samsa.errors import KafkaError
from samsa.testing_cluster import LocalCluster

CREATE_TOPICS, BROKER_REGISTRATION, BROKER_HEARTBEAT = 19, 62, 63
FAILOVER_SETTINGS = {
    "fast": {
        "controller.quorum.fetch.timeout.ms": "1000",
        "controller.quorum.election.timeout.ms": "500",
    },
    "kafka-defaults": {
        "controller.quorum.fetch.timeout.ms": "2000",
        "controller.quorum.election.timeout.ms": "1000",
    },
}
ACTIVE_LINE = re.compile(r"^(\S+ \S+) .*node (\d+) is the active controller \(epoch (\d+)\)")
LOADED_LINE = re.compile(r"loaded snapshot (\d+)-(\d+) \((\d+) records\) in (\d+) ms")


def admin(bootstrap: str, timeout_ms: int = 10_000) -> Admin:
    return Admin({"bootstrap.servers": bootstrap, "request.timeout.ms": timeout_ms})


def quorum_leader(bootstrap: str) -> tuple[int, int]:
    with admin(bootstrap, 5000) as client:
        info = client.describe_metadata_quorum(timeout=5)
    return info.leader_id, info.leader_epoch


# -- CreateTopics latency ---------------------------------------------------------------


def create_latency(args: argparse.Namespace) -> list[list[str]]:
    """p50/p99 of one-at-a-time CreateTopics, samsa Admin and confluent side by side."""
    from confluent_kafka.admin import AdminClient
    from confluent_kafka.admin import NewTopic as CNewTopic

    settings: dict[str, str] = {}
    print_settings("latency: 3 combined nodes", effective(settings))
    per_client: dict[str, dict[str, list[float]]] = {
        c: {"p50": [], "p99": [], "max": []} for c in ("samsa", "confluent")
    }
    for run in range(args.runs):
        with local_cluster(3, settings=settings) as cluster:
            samsa_admin = admin(cluster.bootstrap)
            peer = AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 0})

            def samsa_create(name: str, samsa_admin: Admin = samsa_admin) -> None:
                samsa_admin.create_topics([NewTopic(name, 1, 3)], timeout=30)

            def confluent_create(name: str, peer: AdminClient = peer) -> None:
                peer.create_topics([CNewTopic(name, 1, 3)], request_timeout=30)[name].result(30)

            creators: dict[str, Callable[[str], None]] = {
                "samsa": samsa_create,
                "confluent": confluent_create,
            }
            for name, create in creators.items():  # connections and metadata, not timed
                create(f"warm-{name}")
            times: dict[str, list[float]] = {name: [] for name in creators}
            for i in range(args.topics):
                order = list(creators) if i % 2 == 0 else list(reversed(creators))
                for name in order:
                    start = time.perf_counter()
                    creators[name](f"lat-{name}-{i:04d}")
                    times[name].append((time.perf_counter() - start) * 1000)
            expected = len(creators) * args.topics

            def all_visible(client: Admin = samsa_admin, expected: int = expected) -> bool:
                # A broker learns the last commits up to a Raft fetch wait later.
                return sum(t.startswith("lat-") for t in client.list_topics()) == expected

            wait_until(all_visible, 10, f"all {expected} topics in the metadata")
            samsa_admin.close()
        for name, values in times.items():
            p50, p99 = percentile(values, 50), percentile(values, 99)
            per_client[name]["p50"].append(p50)
            per_client[name]["p99"].append(p99)
            per_client[name]["max"].append(max(values))
            print(
                f"[latency] run {run + 1} {name:9s} p50 {p50:6.1f} ms  p99 {p99:6.1f} ms  "
                f"max {max(values):6.1f} ms  ({len(values)} topics)",
                flush=True,
            )
    rows = []
    for name, stats in per_client.items():
        rows.append(
            [
                f"CreateTopics, {name} Admin (1 partition, RF 3)",
                spread(stats["p50"], "{:.1f}"),
                spread(stats["p99"], "{:.1f}"),
                spread(stats["max"], "{:.1f}"),
                f"{args.topics} topics x {args.runs} runs",
            ]
        )
    print()
    print(table(["case", "p50 ms (min / median / max of runs)", "p99 ms", "max ms", "n"], rows))
    return rows


# -- controller failover ----------------------------------------------------------------


def _log_time(line: str) -> float:
    """The node's asctime ("2026-01-01 10:00:00,123") as a Unix timestamp."""
    return datetime.strptime(line, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def _election_seconds(cluster: LocalCluster, survivors: list[int], since_wall: float) -> float:
    """Kill -> the first "is the active controller" line a survivor logged after it."""
    best = float("nan")
    for node_id in survivors:
        for line in cluster.nodes[node_id].log_lines:
            match = ACTIVE_LINE.match(line)
            if match:
                at = _log_time(match.group(1)) - since_wall
                if at >= -0.01 and not best <= at:
                    best = at
    return best


def _back_in_quorum(cluster: LocalCluster, node_id: int) -> bool:
    """``node_id`` is a voter with the leader's high watermark again, under a live leader."""
    with admin(cluster.bootstrap, 3000) as client:
        info = client.describe_metadata_quorum(timeout=3)
    if info.leader_id < 0:
        return False
    voter = {v.replica_id: v for v in info.voters}.get(node_id)
    return voter is not None and voter.log_end_offset >= info.high_watermark


def one_failover(cluster: LocalCluster, kill_no: int, attempt_timeout: float) -> dict[str, Any]:
    leader, epoch = quorum_leader(cluster.bootstrap)
    survivors = [n for n in cluster.nodes if n != leader]
    client = admin(cluster.bootstrap_of(survivors), int(attempt_timeout * 1000))
    client.list_topics(timeout=10)  # connected before the clock starts
    attempts, errors = 0, set()
    name = f"after-kill-{kill_no}-{uuid.uuid4().hex[:6]}"
    since_wall = time.time()
    start = time.perf_counter()
    cluster.kill(leader)
    ambiguous = False
    while True:
        attempts += 1
        try:
            client.create_topics([NewTopic(name, 1, 2)], timeout=attempt_timeout)
            break
        except KafkaError as exc:
            if exc.code.name == "TOPIC_ALREADY_EXISTS":
                ambiguous = True  # an earlier attempt committed but its answer was lost
                break
            errors.add(exc.code.name)
        except Exception as exc:  # timeouts, connection errors: retry at once
            errors.add(type(exc).__name__)
        if time.perf_counter() - start > 60:
            raise TimeoutError(f"no CreateTopics succeeded within 60 s of the kill: {errors}")
    took = time.perf_counter() - start
    client.close()
    election = _election_seconds(cluster, survivors, since_wall)
    new_leader, new_epoch = quorum_leader(cluster.bootstrap_of(survivors))
    cluster.start([leader], timeout=120)
    wait_until(lambda: _back_in_quorum(cluster, leader), 60, f"node {leader} back in the quorum")
    return {
        "killed": leader,
        "epoch": epoch,
        "new_leader": new_leader,
        "new_epoch": new_epoch,
        "seconds": took,
        "election": election,
        "attempts": attempts,
        "errors": sorted(errors),
        "ambiguous": ambiguous,
    }


def controller_failover(args: argparse.Namespace) -> list[list[str]]:
    rows = []
    for label in args.failover_settings.split(","):
        settings = FAILOVER_SETTINGS[label]
        print_settings(f"failover {label}: 3 combined nodes", effective(settings))
        print(
            f"after each kill: CreateTopics (1 partition, RF 2) through the survivors, "
            f"attempts of {args.attempt_timeout:g} s each until one succeeds"
        )
        results = []
        with local_cluster(3, settings=settings) as cluster:
            with admin(cluster.bootstrap) as client:
                client.create_topics([NewTopic("warm", 1, 3)], timeout=30)
            for kill_no in range(args.kills):
                result = one_failover(cluster, kill_no, args.attempt_timeout)
                results.append(result)
                print(
                    f"[failover {label}] kill {kill_no + 1}: node {result['killed']} "
                    f"(epoch {result['epoch']}) -> node {result['new_leader']} "
                    f"(epoch {result['new_epoch']}): CreateTopics ok after "
                    f"{result['seconds']:.2f} s (new active controller logged at "
                    f"{result['election']:.2f} s), {result['attempts']} attempts, "
                    f"errors seen {result['errors']}"
                    + (" [ambiguous: already existed]" if result["ambiguous"] else ""),
                    flush=True,
                )
        seconds = [r["seconds"] for r in results]
        elections = [r["election"] for r in results if r["election"] == r["election"]]
        split = sum(1 for r in results if r["new_epoch"] - r["epoch"] > 1)
        p50 = statistics.median(seconds)
        target = (
            " (target <= 2 s: " + ("met" if p50 <= 2 else "NOT met") + ")"
            if label == "fast"
            else ""
        )
        rows.append(
            [
                f"fetch/election timeout {settings['controller.quorum.fetch.timeout.ms']}/"
                f"{settings['controller.quorum.election.timeout.ms']} ms",
                f"{p50:.2f}{target}",
                f"{min(seconds):.2f} / {max(seconds):.2f}",
                f"{statistics.median(elections):.2f}" if elections else "-",
                f"{split} of {len(seconds)}",
            ]
        )
    print()
    print(
        table(
            [
                "SIGKILL of the active controller -> CreateTopics ok",
                "p50 s",
                "min / max s",
                "p50 s to 'active controller' log line",
                "kills needing > 1 election round",
            ],
            rows,
        )
    )
    return rows


# -- start-up from a snapshot -----------------------------------------------------------

STAND_INS = 100
FIRST_STAND_IN = 101
SNAPSHOT_SETTINGS = {
    # The stand-in brokers never heartbeat again: without this the controller
    # would fence all 100 and rewrite every partition's leader and ISR.
    "broker.session.timeout.ms": "86400000",
}


def _controller_only(cluster: LocalCluster) -> None:
    """Make node 1 a dedicated controller (``process.roles=controller``).

    A controller replays the same snapshot a combined node does, and is ready
    without registering as a broker: a combined node's restart waits out
    ``broker.session.timeout.ms`` before its registration is accepted (see the
    report), which would hide the replay behind a timeout.
    """
    node = cluster.nodes[1]
    node.settings["process.roles"] = "controller"
    node.settings["listeners"] = f"CONTROLLER://127.0.0.1:{cluster.controller_ports[1]}"


def _controller_address(cluster: LocalCluster) -> str:
    return f"127.0.0.1:{cluster.controller_ports[1]}"


def _register_stand_ins(cluster: LocalCluster, cluster_id: str) -> None:
    """100 brokers in the metadata, registered and unfenced, that run nowhere."""
    address = _controller_address(cluster)
    for broker_id in range(FIRST_STAND_IN, FIRST_STAND_IN + STAND_INS):
        body = {
            "broker_id": broker_id,
            "cluster_id": cluster_id,
            "incarnation_id": uuid.UUID(int=broker_id).bytes,
            "listeners": [
                {"name": "PLAINTEXT", "host": f"b{broker_id}", "port": 9092, "security_protocol": 0}
            ],
            "features": [],
            "rack": f"rack{broker_id % 5}",
        }
        answer = call(address, BROKER_REGISTRATION, 0, body)
        assert answer["error_code"] == 0, answer
        heartbeat = {
            "broker_id": broker_id,
            "broker_epoch": answer["broker_epoch"],
            "current_metadata_offset": 1 << 40,
            "want_fence": False,
            "want_shut_down": False,
        }
        beat = call(address, BROKER_HEARTBEAT, 0, heartbeat)
        assert beat["error_code"] == 0 and not beat["is_fenced"], beat


def _create_topic(address: str, name: str, count: int, first_index: int) -> Any:
    """CreateTopics v7 to the controller: ``count`` partitions, RF 3 over the stand-ins."""
    assignments = []
    for p in range(count):
        first = (first_index + p) % STAND_INS
        replicas = [FIRST_STAND_IN + (first + k * 33) % STAND_INS for k in range(3)]
        assignments.append({"partition_index": p, "broker_ids": replicas})
    body = {
        "topics": [
            {
                "name": name,
                "num_partitions": -1,
                "replication_factor": -1,
                "assignments": assignments,
                "configs": [],
            }
        ],
        "timeout_ms": 60000,
        "validate_only": False,
    }
    return call(address, CREATE_TOPICS, 7, body, timeout=120)["topics"][0]


def _create_partitions(cluster: LocalCluster, partitions: int, per_topic: int) -> None:
    address = _controller_address(cluster)
    for t in range(-(-partitions // per_topic)):
        count = min(per_topic, partitions - t * per_topic)
        result = _create_topic(address, f"snap-{t:04d}", count, t * per_topic)
        assert result["error_code"] == 0, result


def _timed_start(cluster: LocalCluster, run: int, snapshot: bool = True) -> dict[str, float]:
    """Launch node 1: seconds to its "loaded snapshot" line, to its ready line and to
    the first CreateTopics it commits (a controller that serves writes); RSS then."""
    node = cluster.nodes[1]
    address = _controller_address(cluster)
    start = time.perf_counter()
    ready = node.launch()
    loaded_at = float("nan")
    if snapshot and node.wait_for_log("loaded snapshot", timeout=120):
        loaded_at = time.perf_counter() - start
    node.wait_ready(ready, timeout=120)
    ready_at = time.perf_counter() - start

    def created() -> bool:
        return (
            _create_topic(address, f"probe-{run}-{uuid.uuid4().hex[:6]}", 1, run)["error_code"] == 0
        )

    wait_until(created, 120, "a CreateTopics the restarted controller commits")
    serving_at = time.perf_counter() - start
    assert node.proc is not None
    out = {
        "loaded_s": loaded_at,
        "ready_s": ready_at,
        "serving_s": serving_at,
        "rss_mb": rss_mb(node.proc.pid),
        "replay_ms": float("nan"),
        "records": float("nan"),
    }
    for line in node.log_lines:
        match = LOADED_LINE.search(line)
        if match:
            out["records"] = float(match.group(3))
            out["replay_ms"] = float(match.group(4))
    return out


def _image_memory(data_dir: Path) -> dict[str, float]:
    """Load the newest snapshot in-process as the node does (``MetadataLoader.
    handle_load_snapshot``): CPU seconds per step, MB the image holds and the peak
    during the load (tracemalloc), and its partition count."""
    from samsa.controller.metadata_image import MetadataImage
    from samsa.protocol.metadata_records import decode_metadata_record
    from samsa.raft.disk_log import DiskRaftLog
    from samsa.raft.entry_codec import decode_entries

    with tempfile.TemporaryDirectory(prefix="samsa-bench-snap-") as tmp:
        copy = Path(tmp) / "node"
        shutil.copytree(data_dir, copy)
        raft_log = DiskRaftLog.open(copy)
        snapshot_id = raft_log.latest_snapshot_id
        assert snapshot_id is not None
        gc.collect()
        cpu = time.process_time()
        snapshot = raft_log.load_snapshot(snapshot_id)
        read_s = time.process_time() - cpu
        raft_log.close()
    assert snapshot is not None
    steps: dict[str, float] = {"read + check the file": read_s}

    def load(timed: bool) -> MetadataImage:
        clock = time.process_time()
        entries, _ = decode_entries(snapshot.data)
        if timed:
            steps["decode_entries (batches -> entries)"] = time.process_time() - clock
        clock = time.process_time()
        records = [
            decode_metadata_record(e.payload)
            for e in entries
            if isinstance(e.payload, bytes) and e.payload
        ]
        if timed:
            steps["decode_metadata_record x n"] = time.process_time() - clock
        clock = time.process_time()
        image = MetadataImage()
        image.load_snapshot(records, snapshot_id.offset, snapshot_id.epoch)
        if timed:
            steps["MetadataImage.load_snapshot"] = time.process_time() - clock
        return image

    gc.collect()
    load(timed=True)  # timed without tracemalloc, which slows allocation several times over
    gc.collect()
    tracemalloc.start()
    image = load(timed=False)
    gc.collect()
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        **steps,
        "held_mb": held / 1e6,
        "peak_mb": peak / 1e6,
        "partitions": float(image.partition_count()),
    }


def snapshot_startup(args: argparse.Namespace) -> list[list[str]]:
    settings = dict(SNAPSHOT_SETTINGS)
    print_settings("snapshot: one dedicated controller, a quorum of one", effective(settings))
    with (
        local_cluster(1, settings=settings, start=False) as big,
        local_cluster(1, settings=settings, start=False) as empty,
    ):
        for cluster in (big, empty):
            _controller_only(cluster)
        big.start()
        empty.start()
        _register_stand_ins(empty, empty.nodes[1].settings["cluster.id"])
        assert empty.stop(1) == 0
        build = time.perf_counter()
        _register_stand_ins(big, big.nodes[1].settings["cluster.id"])
        _create_partitions(big, args.partitions, args.partitions_per_topic)
        build = time.perf_counter() - build
        print(f"[snapshot] {args.partitions:,} partitions created in {build:.1f} s", flush=True)
        node = big.nodes[1]
        assert big.stop(1) == 0
        # One start that replays the whole log and writes the snapshot itself.
        node.settings["metadata.log.max.record.bytes.between.snapshots"] = "1"
        node.log_lines.clear()
        from_log = _timed_start(big, -1, snapshot=False)
        wait_until(lambda: node.wait_for_log("wrote a snapshot", 1), 300, "a snapshot")
        wrote = next(line for line in node.log_lines if "wrote a snapshot" in line)
        print(
            f"[snapshot] start-up replaying the log: serving CreateTopics after "
            f"{from_log['serving_s']:.2f} s; {wrote.split(': ', 1)[-1]}",
            flush=True,
        )
        assert big.stop(1) == 0
        del node.settings["metadata.log.max.record.bytes.between.snapshots"]

        samples: dict[str, list[dict[str, float]]] = {"snapshot": [], "empty": []}
        for run in range(args.runs):
            for label, cluster in (("snapshot", big), ("empty", empty)):
                cluster.nodes[1].log_lines.clear()
                sample = _timed_start(cluster, run, snapshot=label == "snapshot")
                samples[label].append(sample)
                print(
                    f"[snapshot] run {run + 1} {label:8s}: 'loaded snapshot' at "
                    f"{sample['loaded_s']:.2f} s (replay {sample['replay_ms']:.0f} ms, "
                    f"{sample['records']:.0f} records), ready line at {sample['ready_s']:.2f} s, "
                    f"first CreateTopics committed at {sample['serving_s']:.2f} s, "
                    f"RSS {sample['rss_mb']:.0f} MB",
                    flush=True,
                )
                assert cluster.stop(1) == 0
        loaded = _image_memory(big.nodes[1].data_dir)
    image_mb, partitions = loaded.pop("held_mb"), int(loaded.pop("partitions"))
    peak_mb = loaded.pop("peak_mb")
    print(
        f"[snapshot] in-process load of the same snapshot: {partitions:,} partitions, "
        f"{image_mb:.0f} MB held, {peak_mb:.0f} MB peak during the load (tracemalloc); CPU: "
        + ", ".join(f"{step} {secs:.2f} s" for step, secs in loaded.items())
    )

    def col(label: str, key: str, fmt: str = "{:.2f}") -> str:
        return spread([s[key] for s in samples[label]], fmt)

    snap = samples["snapshot"]
    empty_rss = statistics.median(s["rss_mb"] for s in samples["empty"])
    replay = statistics.median(s["replay_ms"] for s in snap) / 1000
    rss_delta = [s["rss_mb"] - empty_rss for s in snap]
    rows = [
        ["replay itself (the node's 'loaded snapshot ... in N ms')",
         col("snapshot", "replay_ms", "{:.0f}") + " ms",
         "target <= 2 s: " + ("met" if replay <= 2 else "NOT met")],
        ["process start -> 'loaded snapshot' line", col("snapshot", "loaded_s") + " s", ""],
        [f"process start -> first CreateTopics committed, {partitions:,} partitions",
         col("snapshot", "serving_s") + " s", ""],
        ["process start -> first CreateTopics committed, no topics (baseline)",
         col("empty", "serving_s") + " s", ""],
        [f"RSS serving, {partitions:,} partitions", col("snapshot", "rss_mb", "{:.0f}") + " MB", ""],
        ["RSS serving, no topics (baseline)", col("empty", "rss_mb", "{:.0f}") + " MB", ""],
        ["RSS difference (the image and what loading it left)", spread(rss_delta, "{:.0f}") + " MB",
         "target <= 200 MB: " + ("met" if statistics.median(rss_delta) <= 200 else "NOT met")],
        ["image alone (tracemalloc, in-process load)", f"{image_mb:.0f} MB",
         "target <= 200 MB: " + ("met" if image_mb <= 200 else "NOT met")],
        ["peak while loading (tracemalloc: image + decoded records)", f"{peak_mb:.0f} MB", ""],
        ["in-process replay CPU (" + " + ".join(loaded) + ")",
         " + ".join(f"{v:.2f}" for v in loaded.values()) + f" = {sum(loaded.values()):.2f} s", ""],
        ["start-up replaying the whole log (no snapshot), once",
         f"{from_log['serving_s']:.2f} s", ""],
    ]  # fmt: skip
    print()
    print(
        f"{partitions:,} partitions (RF 3 over {STAND_INS} registered brokers), "
        f"{args.runs} runs; snapshot {snap[0]['records']:.0f} records"
    )
    print(table(["snapshot start-up", "min / **median** / max", "verdict"], rows))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--cases", default="latency,failover,snapshot")
    ap.add_argument("--runs", type=int, default=3, help="latency and snapshot runs")
    ap.add_argument("--topics", type=int, default=200, help="topics per latency run")
    ap.add_argument("--kills", type=int, default=10, help="kills per failover setting")
    ap.add_argument("--failover-settings", default="fast,kafka-defaults")
    ap.add_argument(
        "--attempt-timeout", type=float, default=1.0,
        help="seconds per CreateTopics attempt after a kill (then the next attempt)",
    )  # fmt: skip
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--partitions-per-topic", type=int, default=1000)
    args = ap.parse_args()
    # The clients' connection warnings during a kill are expected; the tables say what happened.
    logging.getLogger("samsa.client").setLevel(logging.ERROR)
    print(machine_line())
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    for case in cases:
        {"latency": create_latency, "failover": controller_failover, "snapshot": snapshot_startup}[
            case
        ](args)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
