"""What the cluster tests share: asking one node directly, and bounded waits.

A test of a cluster must know what each node believes, not what some node
answered, so ``node_metadata`` opens a connection to exactly one node.  Every
wait is bounded and ends the moment the observed condition holds (an answer
from the cluster), never after a fixed sleep.
"""

from __future__ import annotations

from typing import Any

from samsa.client import Admin
from samsa.testing.cluster import LocalCluster, call, node_metadata, wait_until

__all__ = ["call", "node_metadata", "wait_until"]


def node_topics(cluster: LocalCluster, node_id: int) -> set[str]:
    return {t["name"] for t in node_metadata(cluster, node_id)["topics"] if not t["error_code"]}


def admin(bootstrap: str) -> Admin:
    return Admin({"bootstrap.servers": bootstrap, "request.timeout.ms": 5000})


def active_controller(bootstrap: str) -> int:
    with admin(bootstrap) as client:
        return client.describe_metadata_quorum(timeout=5).leader_id


def create_topic(
    bootstrap: str,
    name: str,
    partitions: int = 1,
    replication_factor: int = 1,
    configs: dict[str, str] | None = None,
) -> None:
    from samsa.client.admin.results import NewTopic

    with admin(bootstrap) as client:
        client.create_topics(
            [NewTopic(name, partitions, replication_factor, configs or {})], timeout=10
        )


def create_topic_eventually(bootstrap: str, name: str, timeout: float = 20, **kwargs: Any) -> None:
    """Create a topic, retrying while a failover settles (a client may first pick a
    broker that is paused or gone); an earlier attempt that did succeed counts."""
    from samsa.errors import ErrorCode, KafkaError

    def attempt() -> bool:
        try:
            create_topic(bootstrap, name, **kwargs)
        except KafkaError as exc:
            if exc.code != ErrorCode.TOPIC_ALREADY_EXISTS:
                raise
        return True

    wait_until(attempt, timeout, f"creating topic {name}")
