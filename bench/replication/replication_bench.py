#!/usr/bin/env python3
"""Replicated partitions on real processes: acks=all throughput, leader failover,
controlled shutdown.

Not a test: every case runs ``samsa broker`` processes on loopback
(``samsa.testing.cluster.LocalCluster``, combined broker+controller nodes) and
prints a markdown table with the settings it ran with.

* ``throughput``: 1M x 100 B records to one partition, replication factor 3 on
  three brokers (``min.insync.replicas=2``, ``acks=all``) as a ratio of one
  broker with replication factor 1 and ``acks=1``: same run (the two
  alternate), same client, a fresh cluster and a fresh producer process per run,
  medians of ``--runs``.  Clients: confluent-kafka and Samsa's own producer,
  both with linger.ms=5, batch.size=1000000, idempotence off.  Each run checks
  the partition's end offset and ISR afterwards.  Broker CPU is the sum of
  utime+stime of every broker process during the run.
* ``failover``: a producer sends 200 records/s (acks=all, linger 0, a short
  ``message.timeout.ms``) to a fresh RF 3 partition led by a broker that is not
  the active controller; SIGKILL of that leader -> the first acknowledged record
  that was produced after the kill (only the new leader can acknowledge it).
  ``--kills`` kills per setting, the killed broker restarted in between.  Once
  with broker.heartbeat.interval.ms/broker.session.timeout.ms 500/2000, once
  with Kafka's 2000/9000.  The fencing part is read from the controller's log.
* ``shutdown``: a broker leading 1,000 partitions (RF 3, explicit assignments,
  min.insync.replicas=2) gets SIGTERM while a producer sends 2,000 records/s
  round-robin over those partitions (acks=all); time to process exit, and every
  record the producer failed to deliver.  Per heartbeat setting, ``--runs`` runs,
  each on a fresh cluster.

    .venv/bin/python -m bench.replication.replication_bench                        # all cases
    .venv/bin/python -m bench.replication.replication_bench --cases throughput --records 1000000 --runs 3
    .venv/bin/python -m bench.replication.replication_bench --cases failover --kills 10
    .venv/bin/python -m bench.replication.replication_bench --cases shutdown --runs 3 --partitions 1000
    .venv/bin/python -m bench.replication.replication_bench --cases throughput --peer kafka

``--peer kafka`` runs the cases as three Samsa nodes against three Apache Kafka
nodes side by side: throughput RF 3 acks=all (``_replication_kafka_peer``), and
failover, which also times the controlled shutdown of a node leading
``--shutdown-partitions`` partitions (``_failover_kafka_peer``), ``--kills``
runs, at Kafka's default timeouts on both sides.
"""

from __future__ import annotations

import argparse
import logging
import sys

from bench.common.cluster import machine_line
from bench.replication._failover import failover
from bench.replication._failover_kafka_peer import failover_vs_kafka
from bench.replication._kafka_peer import throughput_vs_kafka
from bench.replication._shutdown import controlled_shutdown
from bench.replication._throughput import throughput


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--cases", default="throughput,failover,shutdown")
    ap.add_argument("--runs", type=int, default=3, help="throughput and shutdown runs")
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--clients", default="confluent,samsa")
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--heartbeats", default="fast,kafka-defaults")
    ap.add_argument("--delivery-timeout-ms", type=int, default=5000)
    ap.add_argument(
        "--partitions", type=int, default=1000, help="partitions led by the stopped broker"
    )
    # What a 1,000-partition leader sustains with acks=all here: librdkafka sends one
    # partition per request and tops out near 25 records/s (see the report).
    ap.add_argument("--rate-confluent", type=float, default=15, help="records/s (shutdown)")
    ap.add_argument("--rate-samsa", type=float, default=300, help="records/s (shutdown)")
    ap.add_argument("--chunk", type=int, default=100, help="partitions per topic (shutdown)")
    ap.add_argument("--peer", choices=("none", "kafka"), default="none")
    ap.add_argument("--warmup-records", type=int, default=100_000, help="--peer kafka only")
    ap.add_argument("--shutdown-partitions", type=int, default=100, help="--peer kafka only")
    args = ap.parse_args()
    # The clients' connection warnings during a kill are expected; the tables say what happened.
    logging.getLogger("samsa.client").setLevel(logging.ERROR)
    print(machine_line())
    cases = {"throughput": throughput, "failover": failover, "shutdown": controlled_shutdown}
    if args.peer == "kafka":
        cases = {"throughput": throughput_vs_kafka, "failover": failover_vs_kafka}
    for case in (c.strip() for c in args.cases.split(",") if c.strip()):
        if case not in cases:
            print(f"[{case}] not built for --peer {args.peer} yet: skipped")
            continue
        cases[case](args)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
