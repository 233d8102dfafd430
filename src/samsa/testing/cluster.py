"""A cluster of real Samsa processes on loopback, for tests and benchmarks.

Each node is a ``samsa broker`` process (``samsa.testing.BrokerProcess``) with
its own data dir and ports, configured the way an operator would configure
Kafka: ``node.id``, ``process.roles``, ``listeners`` with a separate
CONTROLLER listener, ``controller.quorum.voters``.  Faults are signals:
``kill`` (SIGKILL), ``pause``/``resume`` (SIGSTOP/SIGCONT), ``stop`` (SIGTERM,
a controlled shutdown).  The nodes are launched together and then waited for,
since none is ready before a quorum of controllers runs.

Timeouts are short (``FAST_SETTINGS``) so failover in a test takes about a
second, not Kafka's default ten; a test that measures Kafka's defaults passes
its own settings.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TypeVar

from samsa.protocol.api import decode_response, encode_request
from samsa.server.metadata.meta_properties import random_cluster_id
from samsa.testing import BrokerProcess
from samsa.testing.process import NodeGroup

T = TypeVar("T")
POLL_S = 0.02

FAST_SETTINGS = {
    "controller.quorum.election.timeout.ms": "500",
    "controller.quorum.fetch.timeout.ms": "1000",
    "controller.quorum.election.backoff.max.ms": "500",
    "controller.quorum.request.timeout.ms": "1000",
    "broker.heartbeat.interval.ms": "250",
    "broker.session.timeout.ms": "1500",
    "replica.lag.time.max.ms": "2000",
    "replica.fetch.backoff.ms": "100",
    "replica.fetch.wait.max.ms": "200",
}


def free_ports(count: int) -> list[int]:
    """Ports nothing listens on right now (all bound at once, so they differ)."""
    with ExitStack() as stack:
        socks = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket())
            sock.bind(("127.0.0.1", 0))
            socks.append(sock)
        return [sock.getsockname()[1] for sock in socks]


class LocalCluster(NodeGroup[BrokerProcess]):
    def __init__(
        self,
        base_dir: Path,
        *,
        controllers: int = 3,
        brokers: int = 0,
        settings: dict[str, str] | None = None,
        fast: bool = True,
        hosts: dict[int, str] | None = None,
        command_prefix: Callable[[int], list[str]] | None = None,
        shared_listeners: bool = False,
    ) -> None:
        """``controllers`` combined broker+controller nodes (ids 1..n) and
        ``brokers`` broker-only nodes (ids n+1..).  ``hosts`` gives a node its
        own address instead of 127.0.0.1, and ``command_prefix`` what to run it
        under (a network namespace of that address, for faults between hosts).
        ``shared_listeners``: one listener per node that serves the quorum and
        clients alike (no ``controller.listener.names``), as a single node has."""
        self.base_dir = Path(base_dir)
        self.controller_ids = list(range(1, controllers + 1))
        self.broker_only_ids = list(range(controllers + 1, controllers + brokers + 1))
        ids = self.controller_ids + self.broker_only_ids
        self.hosts = {node_id: (hosts or {}).get(node_id, "127.0.0.1") for node_id in ids}
        ports = free_ports(2 * len(ids))
        self.client_ports = {node_id: ports[2 * i] for i, node_id in enumerate(ids)}
        self.controller_ports = {node_id: ports[2 * i + 1] for i, node_id in enumerate(ids)}
        if shared_listeners:
            self.controller_ports = self.client_ports
        voters = ",".join(
            f"{node_id}@{self.hosts[node_id]}:{self.controller_ports[node_id]}"
            for node_id in self.controller_ids
        )
        common = {
            **(FAST_SETTINGS if fast else {}),
            "controller.quorum.voters": voters,
            "controller.listener.names": "" if shared_listeners else "CONTROLLER",
            "offsets.topic.replication.factor": str(min(3, len(ids))),
            "cluster.id": random_cluster_id(),
            **(settings or {}),
        }
        self.nodes: dict[int, BrokerProcess] = {}
        for node_id in ids:
            is_controller = node_id in self.controller_ids
            host = self.hosts[node_id]
            listeners = f"PLAINTEXT://{host}:{self.client_ports[node_id]}"
            if is_controller and not shared_listeners:
                listeners += f",CONTROLLER://{host}:{self.controller_ports[node_id]}"
            node_settings = {
                **common,
                "node.id": str(node_id),
                "process.roles": "broker,controller" if is_controller else "broker",
                "listeners": listeners,
            }
            self.nodes[node_id] = BrokerProcess(
                self.base_dir / f"node-{node_id}",
                node_settings,
                port=None,
                command_prefix=command_prefix(node_id) if command_prefix else None,
            )

    @property
    def bootstrap(self) -> str:
        return self.bootstrap_of(sorted(self.nodes))

    def bootstrap_of(self, node_ids: Iterable[int]) -> str:
        return ",".join(self.client_address(i) for i in node_ids)

    def client_address(self, node_id: int) -> str:
        return f"{self.hosts[node_id]}:{self.client_ports[node_id]}"

    def start(self, node_ids: Iterable[int] | None = None, timeout: float = 60.0) -> None:
        """Launch the given nodes (default: all) together and wait until each is ready."""
        chosen = sorted(self.nodes) if node_ids is None else list(node_ids)
        events = {node_id: self.nodes[node_id].launch() for node_id in chosen}
        for node_id, ready in events.items():
            self.nodes[node_id].wait_ready(ready, timeout)


def wait_until(
    probe: Callable[[], T | None],
    timeout: float,
    what: str,
    *,
    errors: tuple[type[BaseException], ...] = (Exception,),
) -> T:
    """Call ``probe`` until it returns something truthy and return that; after
    ``timeout`` seconds raise TimeoutError naming ``what`` and the last error
    ``probe`` raised (one of ``errors``), so a stuck cluster says what it missed."""
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
            raise TimeoutError(
                f"timed out after {timeout}s waiting for {what} (last error: {last!r})"
            )
        time.sleep(POLL_S)


def call(
    address: str, api_key: int, version: int, body: dict[str, Any], timeout: float = 10.0
) -> Any:
    """One request to exactly one node over a fresh connection: what *that* node
    believes, where a client would have asked whichever node it liked."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(encode_request(api_key, version, 1, "samsa-testing", body))
        size = struct.unpack(">i", _read(sock, 4))[0]
        _, response = decode_response(api_key, version, memoryview(_read(sock, size)))
        return response


def _read(sock: socket.socket, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("closed by the node")
        out += chunk
    return bytes(out)


def node_metadata(cluster: LocalCluster, node_id: int, topics: list[str] | None = None) -> Any:
    """Metadata v12 as ``node_id`` sees it (``topics=None``: every topic)."""
    body = {
        "topics": None
        if topics is None
        else [{"topic_id": b"\x00" * 16, "name": t} for t in topics],
        "allow_auto_topic_creation": False,
        "include_topic_authorized_operations": False,
    }
    return call(cluster.client_address(node_id), 3, 12, body)
