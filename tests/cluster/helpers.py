"""What the cluster tests share: asking one node directly, and bounded waits.

A test of a cluster must know what each node believes, not what some node
answered, so ``node_metadata`` opens a connection to exactly one node.  Every
wait is bounded and ends the moment the observed condition holds (an answer
from the cluster), never after a fixed sleep.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Callable
from typing import Any, TypeVar

from samsa.client import Admin
from samsa.protocol.api import decode_response, encode_request
from samsa.testing_cluster import LocalCluster

T = TypeVar("T")
POLL_S = 0.05


def wait_until(
    probe: Callable[[], T | None],
    timeout: float,
    what: str,
    *,
    errors: tuple[type[BaseException], ...] = (Exception,),
) -> T:
    """Call ``probe`` until it returns something truthy; fail after ``timeout`` seconds
    with ``what`` and the last error seen."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while True:
        try:
            value = probe()
        except errors as exc:
            last, value = exc, None
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"timed out after {timeout}s waiting for {what} (last error: {last!r})"
            )
        time.sleep(POLL_S)


def call(address: str, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
    """One request to one node over a fresh connection."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(encode_request(api_key, version, 1, "cluster-test", body))
        size = struct.unpack(">i", _read(sock, 4))[0]
        _, response = decode_response(api_key, version, memoryview(_read(sock, size)))
        return response


def _read(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("closed by the node")
        out += chunk
    return out


def node_metadata(cluster: LocalCluster, node_id: int) -> dict[str, Any]:
    """Metadata v12 for every topic, as ``node_id`` sees it."""
    body = {
        "topics": None,
        "allow_auto_topic_creation": False,
        "include_topic_authorized_operations": False,
    }
    return call(f"127.0.0.1:{cluster.client_ports[node_id]}", 3, 12, body)


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
