"""Building the ``snapshot`` case's metadata: a node made a dedicated controller,
100 stand-in brokers registered on it that run nowhere, and partitions created
over them, all through the controller listener.

The set-up of ``quorum_bench.py --cases snapshot``, kept apart from its
measurement in ``_quorum_snapshot``.
"""

from __future__ import annotations

import uuid
from typing import Any

from bench.common.cluster import call
from samsa.testing.cluster import LocalCluster

CREATE_TOPICS, BROKER_REGISTRATION, BROKER_HEARTBEAT = 19, 62, 63
STAND_INS = 100
FIRST_STAND_IN = 101
SNAPSHOT_SETTINGS = {
    # The stand-in brokers never heartbeat again: without this the controller
    # would fence all 100 and rewrite every partition's leader and ISR.
    "broker.session.timeout.ms": "86400000",
}


def controller_only(cluster: LocalCluster) -> None:
    """Make node 1 a dedicated controller (``process.roles=controller``).

    A controller replays the same snapshot a combined node does, and is ready
    without registering as a broker: a combined node's restart waits out
    ``broker.session.timeout.ms`` before its registration is accepted (see the
    report), which would hide the replay behind a timeout.
    """
    node = cluster.nodes[1]
    node.settings["process.roles"] = "controller"
    node.settings["listeners"] = f"CONTROLLER://127.0.0.1:{cluster.controller_ports[1]}"


def controller_address(cluster: LocalCluster) -> str:
    return f"127.0.0.1:{cluster.controller_ports[1]}"


def register_stand_ins(cluster: LocalCluster, cluster_id: str) -> None:
    """100 brokers in the metadata, registered and unfenced, that run nowhere."""
    address = controller_address(cluster)
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


def create_topic(address: str, name: str, count: int, first_index: int) -> Any:
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


def create_partitions(cluster: LocalCluster, partitions: int, per_topic: int) -> None:
    address = controller_address(cluster)
    for t in range(-(-partitions // per_topic)):
        count = min(per_topic, partitions - t * per_topic)
        result = create_topic(address, f"snap-{t:04d}", count, t * per_topic)
        assert result["error_code"] == 0, result
