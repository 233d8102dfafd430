"""One broker fails in a 100-broker, 100,000-partition cluster: the whole metadata path.

Not a test.  ``bench/quorum/controller_scale.py`` measures the controller alone; this
reuses its cluster (built through the QuorumController) and follows the failure
to the brokers, as the real node does it:

1. the active controller's ``poll`` finds the broker's session expired and
   computes the records that move every leadership it held and take it out of
   every ISR (CPU time, record count);
2. the records are encoded as metadata records and laid out as Raft batches
   (``entry_codec.encode_payloads``, KRaft's 8 KiB batches): bytes and batches;
3. a broker's ``MetadataLoader`` (the real one, over an in-memory Raft log holding
   those entries) decodes and replays them into its image through
   ``MetadataDelta``s (one per 4096 entries read, as the loader reads), and its
   publisher computes ``local_changes`` for the broker that takes over the most
   leaderships (CPU time, partitions to make leader / follower).

Target: under 1 s of CPU for steps 1-3 together, records batched.

    .venv/bin/python -m bench.quorum.broker_failure_scale [--brokers 100] [--partitions 100000]
        [--topics 100] [--replication-factor 3] [--seed 1]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from bench.quorum.controller_scale import (
    SESSION_TIMEOUT_MS,
    add_cluster_args,
    build_cluster,
    cpu_time,
)
from samsa.controller.image.metadata_delta import LocalReplicaChanges, MetadataDelta
from samsa.controller.image.metadata_image import MetadataImage, images_equal
from samsa.controller.snapshot_records import snapshot_records
from samsa.protocol.batches.record_batch import iter_batches
from samsa.protocol.metadata_records import encode_metadata_record
from samsa.raft import MemoryRaftLog
from samsa.raft.persistence.entry_codec import DEFAULT_MAX_BATCH_BYTES, encode_payloads
from samsa.server.metadata.loader import MetadataLoader


class LocalChangesPublisher:
    """A broker's publisher: what each committed delta means for ``broker_id``."""

    def __init__(self, broker_id: int) -> None:
        self.broker_id = broker_id
        self.deltas = 0
        self.changes: list[LocalReplicaChanges] = []
        self.seconds = 0.0

    def on_delta(self, delta: MetadataDelta) -> None:
        start = time.process_time()
        self.changes.append(delta.local_changes(self.broker_id))
        self.seconds += time.process_time() - start
        self.deltas += 1

    def on_image(self, image: MetadataImage) -> None:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_cluster_args(parser)
    args = parser.parse_args(argv)

    node = build_cluster(
        args.brokers, args.partitions, args.topics, args.replication_factor, args.seed
    )
    image = node.image
    victim = max(range(args.brokers), key=image.brokers_to_isrs.leader_count)
    leads = image.brokers_to_isrs.leader_count(victim)
    in_isr = image.brokers_to_isrs.isr_count(victim)

    # A broker's copy of the metadata, as it stands before the failure.
    broker_image_records = snapshot_records(image)

    node.now_ms += SESSION_TIMEOUT_MS // 2
    for broker_id in range(args.brokers):
        if broker_id != victim:
            node.heartbeat(broker_id)
    node.now_ms += SESSION_TIMEOUT_MS // 2 + 1

    rows: list[tuple[str, float | None, str]] = []
    controller_s, result = cpu_time(lambda: node.controller.poll(node.now_ms))
    records = result.records
    rows.append(
        (
            f"controller: fence broker {victim} (led {leads:,}, in {in_isr:,} ISRs)",
            controller_s,
            f"{len(records):,} records",
        )
    )

    encode_s, payloads = cpu_time(lambda: [encode_metadata_record(r) for r in records])
    batch_s, batches = cpu_time(
        lambda: encode_payloads(payloads, base_offset=0, epoch=1, timestamp_ms=0)
    )
    batch_count = sum(1 for _ in iter_batches(memoryview(batches)))
    rows.append(
        (
            "encode the records, lay them out as Raft batches",
            encode_s + batch_s,
            f"{sum(len(p) for p in payloads):,} bytes of records in {batch_count:,} batches "
            f"of <= {DEFAULT_MAX_BATCH_BYTES // 1024} KiB",
        )
    )

    # The broker's side: the real loader over a Raft log holding the entries.
    raft_log = MemoryRaftLog()
    raft_log.append_as_leader(payloads, 1)
    loader = MetadataLoader(raft_log, snapshot_bytes=1 << 62, snapshot_interval_ms=0)
    loader.image.replay_all(broker_image_records)
    node.commit(records)  # the controller's own image, for the comparison below
    taker = _biggest_taker(image, records)
    publisher = LocalChangesPublisher(taker)
    loader.add_publisher(publisher)
    replay_s, _ = cpu_time(lambda: loader.handle_commit(raft_log.end_offset))
    assert images_equal(loader.image, image)
    leaders = sum(len(c.leaders) for c in publisher.changes)
    followers = sum(len(c.followers) for c in publisher.changes)
    rows.append(
        (
            "broker: decode + replay through MetadataDelta",
            replay_s - publisher.seconds,
            f"{publisher.deltas} delta(s) of <= 4096 entries",
        )
    )
    rows.append(
        (
            f"broker {taker}: local_changes",
            publisher.seconds,
            f"{leaders:,} partitions to lead, {followers:,} to follow anew",
        )
    )
    total = controller_s + encode_s + batch_s + replay_s
    rows.append(("total", total, "target < 1 s of CPU"))

    print(
        f"{args.brokers} brokers, {image.partition_count():,} partitions, "
        f"replication factor {args.replication_factor}: broker {victim} fails"
    )
    width = max(len(r[0]) for r in rows)
    for what, seconds, note in rows:
        value = "" if seconds is None else f"{seconds:.3f} s CPU"
        print(f"  {what:<{width}}  {value:>12}  {note}")
    return 0


def _biggest_taker(image: MetadataImage, records: list[Any]) -> int:
    """The broker that the records make leader of the most partitions."""
    counts: dict[int, int] = {}
    for record in records:
        leader = record.body.get("leader", -2) if record.name == "PartitionChangeRecord" else -2
        if leader is not None and leader >= 0:
            counts[leader] = counts.get(leader, 0) + 1
    return max(sorted(counts), key=lambda b: counts[b]) if counts else 0


if __name__ == "__main__":
    raise SystemExit(main())
