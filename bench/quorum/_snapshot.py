"""The quorum benchmark's ``snapshot`` case: start-up of a controller from a
snapshot of many partitions beside an empty one, and the image's own memory
loaded in-process.

Run by ``quorum_bench.py --cases snapshot``; the metadata it loads is built by
``_quorum_snapshot_build``.
"""

from __future__ import annotations

import argparse
import gc
import re
import shutil
import statistics
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path

from bench.common.cluster import (
    effective,
    local_cluster,
    print_settings,
    rss_mb,
    spread,
    table,
    wait_until,
)
from bench.quorum._snapshot_build import (
    SNAPSHOT_SETTINGS,
    STAND_INS,
    controller_address,
    controller_only,
    create_partitions,
    create_topic,
    register_stand_ins,
)
from samsa.testing.cluster import LocalCluster

LOADED_LINE = re.compile(r"loaded snapshot (\d+)-(\d+) \((\d+) records\) in (\d+) ms")


def _timed_start(cluster: LocalCluster, run: int, snapshot: bool = True) -> dict[str, float]:
    """Launch node 1: seconds to its "loaded snapshot" line, to its ready line and to
    the first CreateTopics it commits (a controller that serves writes); RSS then."""
    node = cluster.nodes[1]
    address = controller_address(cluster)
    start = time.perf_counter()
    ready = node.launch()
    loaded_at = float("nan")
    if snapshot and node.wait_for_log("loaded snapshot", timeout=120):
        loaded_at = time.perf_counter() - start
    node.wait_ready(ready, timeout=120)
    ready_at = time.perf_counter() - start

    def created() -> bool:
        return (
            create_topic(address, f"probe-{run}-{uuid.uuid4().hex[:6]}", 1, run)["error_code"] == 0
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
    from samsa.controller.image.metadata_image import MetadataImage
    from samsa.protocol.metadata_records import decode_metadata_record
    from samsa.raft.persistence.disk_log import DiskRaftLog
    from samsa.raft.persistence.entry_codec import decode_entries

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
            controller_only(cluster)
        big.start()
        empty.start()
        register_stand_ins(empty, empty.nodes[1].settings["cluster.id"])
        assert empty.stop(1) == 0
        build = time.perf_counter()
        register_stand_ins(big, big.nodes[1].settings["cluster.id"])
        create_partitions(big, args.partitions, args.partitions_per_topic)
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
