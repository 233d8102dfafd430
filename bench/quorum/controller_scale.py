"""Controller at scale: 100 brokers, 100,000 partitions (RF 3), one broker fenced.

Not a test.  Builds the cluster through the QuorumController itself (registration,
heartbeats, CreateTopics), then measures:

* image memory (tracemalloc, while replaying the snapshot records into a new image)
  and the CPU time of that replay;
* the controller's CPU time (time.process_time) and record count to fence one
  broker whose session expired: every leadership it held moves and it leaves every
  ISR, all in one batch from one ``poll``; then the replay of that batch;
* the same for a controlled shutdown (a heartbeat asking to shut down).

Targets: image <= 200 MB, snapshot replay well under 2 s, fencing under 1 s of CPU.

    .venv/bin/python -m bench.quorum.controller_scale [--brokers 100] [--partitions 100000]
        [--topics 100] [--replication-factor 3] [--seed 1]
"""

from __future__ import annotations

import argparse
import gc
import random
import time
import tracemalloc
import uuid
from typing import Any

from samsa.controller.controller_config import ControllerConfig
from samsa.controller.image.metadata_delta import MetadataDelta
from samsa.controller.image.metadata_image import MetadataImage, images_equal
from samsa.controller.quorum_controller import QuorumController
from samsa.controller.snapshot_records import snapshot_records
from samsa.protocol.metadata_records import MetadataRecord

SESSION_TIMEOUT_MS = 9000


class Node:
    """The controller plus the caller's job: commit each result into the image."""

    def __init__(self, seed: int) -> None:
        self.image = MetadataImage()
        config = ControllerConfig(broker_session_timeout_ms=SESSION_TIMEOUT_MS)
        self.controller = QuorumController(self.image, config, random.Random(seed))
        self.now_ms = 0
        self.controller.activate(self.now_ms)

    def commit(self, records: list[MetadataRecord]) -> MetadataDelta:
        delta = MetadataDelta(self.image)
        for record in records:
            delta.replay(record)
        return delta

    def heartbeat(self, broker_id: int, want_shut_down: bool = False) -> dict[str, Any]:
        request = {
            "broker_id": broker_id,
            "broker_epoch": self.image.brokers[broker_id].epoch,
            "current_metadata_offset": self.image.last_offset,
            "want_fence": False,
            "want_shut_down": want_shut_down,
        }
        result = self.controller.broker_heartbeat(request, self.now_ms)
        self.commit(result.records)
        assert result.response is not None
        return result.response


def build_cluster(brokers: int, partitions: int, topics: int, rf: int, seed: int) -> Node:
    node = Node(seed)
    for broker_id in range(brokers):
        request = {
            "broker_id": broker_id,
            "incarnation_id": uuid.UUID(int=broker_id + 1).bytes,
            "listeners": [
                {"name": "PLAINTEXT", "host": f"b{broker_id}", "port": 9092, "security_protocol": 0}
            ],
            "features": [],
            "rack": f"rack{broker_id % 5}",
        }
        result = node.controller.register_broker(request, node.image.last_offset + 1, node.now_ms)
        node.commit(result.records)
    for broker_id in range(brokers):
        node.heartbeat(broker_id)
    per_topic = partitions // topics
    for t in range(topics):
        count = per_topic if t < topics - 1 else partitions - per_topic * (topics - 1)
        request = {
            "topics": [
                {
                    "name": f"topic-{t:04d}",
                    "num_partitions": count,
                    "replication_factor": rf,
                    "assignments": [],
                    "configs": [],
                }
            ]
        }
        node.commit(node.controller.create_topics(request).records)
    return node


def cpu_time(fn: Any) -> tuple[float, Any]:
    """CPU seconds of ``fn()`` (after a full collection, so earlier garbage is
    not billed to it) and its value."""
    gc.collect()
    start = time.process_time()
    value = fn()
    return time.process_time() - start, value


def add_cluster_args(parser: argparse.ArgumentParser) -> None:
    """The simulated cluster's shape, shared with broker_failure_scale.py."""
    parser.add_argument("--brokers", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--topics", type=int, default=100)
    parser.add_argument("--replication-factor", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_cluster_args(parser)
    args = parser.parse_args(argv)

    rows: list[tuple[str, str, str]] = []
    build_s, node = cpu_time(
        lambda: build_cluster(
            args.brokers, args.partitions, args.topics, args.replication_factor, args.seed
        ),
    )
    image = node.image
    rows.append(("build cluster via CreateTopics", f"{build_s:.2f} s CPU", ""))

    snapshot_s, records = cpu_time(lambda: snapshot_records(image))
    rows.append(
        ("image -> snapshot records", f"{snapshot_s:.2f} s CPU", f"{len(records):,} records")
    )

    def replay() -> MetadataImage:
        fresh = MetadataImage()
        for record in records:
            fresh.replay(record)
        return fresh

    replay_s, rebuilt = cpu_time(replay)
    assert images_equal(image, rebuilt)
    rows.append(("snapshot records -> image", f"{replay_s:.2f} s CPU", "target < 2 s"))
    del rebuilt
    gc.collect()
    tracemalloc.start()
    rebuilt = replay()
    image_bytes, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rows.append(("image memory (tracemalloc)", f"{image_bytes / 1e6:.0f} MB", "target <= 200 MB"))
    del rebuilt

    victim = max(range(args.brokers), key=image.brokers_to_isrs.leader_count)
    leads = image.brokers_to_isrs.leader_count(victim)
    in_isr = image.brokers_to_isrs.isr_count(victim)
    node.now_ms += SESSION_TIMEOUT_MS // 2
    for broker_id in range(args.brokers):
        if broker_id != victim:
            node.heartbeat(broker_id)
    node.now_ms += SESSION_TIMEOUT_MS // 2 + 1
    fence_s, result = cpu_time(lambda: node.controller.poll(node.now_ms))
    rows.append(
        (
            f"fence broker {victim} (led {leads}, in {in_isr} ISRs)",
            f"{fence_s:.3f} s CPU",
            f"{len(result.records):,} records in 1 batch; target < 1 s",
        )
    )
    apply_s, delta = cpu_time(lambda: node.commit(result.records))
    assert image.brokers[victim].fenced
    assert not image.brokers_to_isrs.has_leaderships(victim)
    assert image.brokers_to_isrs.isr_count(victim) == 0
    rows.append(
        (
            "replay that batch (MetadataDelta)",
            f"{apply_s:.3f} s CPU",
            f"{len(delta.partition_changes()):,} partitions changed",
        )
    )

    leaving = max(
        (b for b in range(args.brokers) if b != victim), key=image.brokers_to_isrs.leader_count
    )
    leads = image.brokers_to_isrs.leader_count(leaving)
    shutdown_s, result = cpu_time(
        lambda: node.controller.broker_heartbeat(
            {
                "broker_id": leaving,
                "broker_epoch": image.brokers[leaving].epoch,
                "current_metadata_offset": image.last_offset,
                "want_fence": False,
                "want_shut_down": True,
            },
            node.now_ms,
        ),
    )
    node.commit(result.records)
    assert not image.brokers_to_isrs.has_leaderships(leaving)
    rows.append(
        (
            f"controlled shutdown of broker {leaving} (led {leads})",
            f"{shutdown_s:.3f} s CPU",
            f"{len(result.records):,} records in 1 batch",
        )
    )

    print(
        f"{args.brokers} brokers, {image.partition_count():,} partitions, "
        f"replication factor {args.replication_factor}"
    )
    width = max(len(r[0]) for r in rows)
    for what, value, note in rows:
        print(f"  {what:<{width}}  {value:>14}  {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
