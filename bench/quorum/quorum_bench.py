#!/usr/bin/env python3
"""The Raft metadata quorum on real processes: CreateTopics latency, controller
failover, and start-up from a snapshot of 100,000 partitions.

Not a test: every case runs ``samsa broker`` processes on loopback
(``samsa.testing.cluster.LocalCluster``) and prints a markdown table with the
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

    .venv/bin/python -m bench.quorum.quorum_bench                       # all cases
    .venv/bin/python -m bench.quorum.quorum_bench --cases latency --runs 3 --topics 200
    .venv/bin/python -m bench.quorum.quorum_bench --cases failover --kills 10
    .venv/bin/python -m bench.quorum.quorum_bench --cases snapshot --partitions 100000 --runs 3
    .venv/bin/python -m bench.quorum.quorum_bench --cases latency --peer kafka --runs 1 --topics 100

``--peer kafka`` runs the ``latency`` case on three Samsa nodes beside three Apache
Kafka nodes (KRaft, combined roles), both at once, through confluent-kafka's
AdminClient (``_quorum_kafka_peer``).
"""

from __future__ import annotations

import argparse
import logging
import sys

from bench.common.cluster import machine_line
from bench.quorum._failover import controller_failover
from bench.quorum._kafka_peer import create_latency_vs_kafka
from bench.quorum._latency import create_latency
from bench.quorum._snapshot import snapshot_startup


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
    ap.add_argument("--peer", choices=("none", "kafka"), default="none")
    args = ap.parse_args()
    # The clients' connection warnings during a kill are expected; the tables say what happened.
    logging.getLogger("samsa.client").setLevel(logging.ERROR)
    print(machine_line())
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    runners = {"latency": create_latency, "failover": controller_failover, "snapshot": snapshot_startup}  # fmt: skip
    if args.peer == "kafka":
        runners = {"latency": create_latency_vs_kafka}
    for case in cases:
        if case not in runners:
            print(f"[{case}] not built for --peer {args.peer} yet: skipped")
            continue
        runners[case](args)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
