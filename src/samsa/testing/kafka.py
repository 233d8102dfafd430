"""Apache Kafka itself on loopback, beside Samsa, for tests and benchmarks.

``KafkaProcess`` is one KRaft node with combined roles, started the way an
operator starts Kafka: ``kafka-storage format`` on a properties file, then
``kafka.Kafka`` on the same file, with ``kafka-server-start.sh``'s 1 GB heap and
``kafka-run-class.sh``'s JVM flags (so a benchmark measures Kafka as shipped).
It is ready when the node logs "Kafka Server started", which KRaft logs only
after the broker is registered and unfenced; its log is kept in memory (quoted
when start-up fails) and in ``<data_dir>.log`` (kept after the test).

``KafkaCluster`` is three such nodes sharing a static voter set, with the shape
of ``samsa.testing.cluster.LocalCluster``. The jars come from
``scripts/kafka-reference.sh`` (``samsa.testing.kafka_reference``).
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from samsa.testing.cluster import free_ports
from samsa.testing.kafka_reference import KafkaReference, load_reference
from samsa.testing.process import LoggedProcess, NodeGroup

READY_TEXT = "Kafka Server started"
KAFKA_HEAP = "1g"
# kafka-run-class.sh's defaults for the broker (KAFKA_JVM_PERFORMANCE_OPTS), plus
# kafka-server-start.sh's -Xms equal to -Xmx.
KAFKA_JVM_OPTIONS = (
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-Djava.awt.headless=true",
)
# Root at WARN keeps the pipe quiet; the one INFO logger is the readiness line's.
_LOG4J = """Configuration:
  Appenders:
    Console:
      name: STDOUT
      target: SYSTEM_OUT
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Logger:
      - name: kafka.server.KafkaRaftServer
        level: INFO
    Root:
      level: WARN
      AppenderRef:
        - ref: STDOUT
"""

# Single-node and test-speed settings, the Kafka twins of samsa.testing.TEST_SETTINGS.
TEST_SETTINGS = {
    "group.initial.rebalance.delay.ms": "0",
    "group.streams.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "500",
    "offsets.topic.num.partitions": "4",
    "num.partitions": "1",
    "auto.create.topics.enable": "true",
}


class KafkaProcess(LoggedProcess):
    """One combined broker+controller Kafka node. ``settings`` override the
    defaults; ``voters``/ports are given by ``KafkaCluster`` and chosen here
    for a lone node."""

    kill_wait_s = 30.0  # a JVM with a 1 GB heap takes longer to reap

    def __init__(
        self,
        data_dir: Path,
        settings: dict[str, str] | None = None,
        *,
        reference: KafkaReference | None = None,
        node_id: int = 1,
        client_port: int = 0,
        controller_port: int = 0,
        voters: str = "",
        heap: str = KAFKA_HEAP,
    ) -> None:
        super().__init__()
        self.data_dir = Path(data_dir)
        self.reference = reference or load_reference()
        self.node_id = node_id
        if not client_port or not controller_port:
            client_port, controller_port = free_ports(2)
        self.port = client_port
        self.controller_port = controller_port
        self.bootstrap = f"127.0.0.1:{client_port}"
        self.heap = heap
        single = not voters
        self.settings = {
            **TEST_SETTINGS,
            **(_single_node_settings() if single else {}),
            "node.id": str(node_id),
            "process.roles": "broker,controller",
            "listeners": (
                f"PLAINTEXT://127.0.0.1:{client_port},CONTROLLER://127.0.0.1:{controller_port}"
            ),
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{client_port}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name": "PLAINTEXT",
            "controller.listener.names": "CONTROLLER",
            "controller.quorum.voters": voters or f"{node_id}@127.0.0.1:{controller_port}",
            "log.dirs": str(self.data_dir / "logs"),
            **(settings or {}),
        }
        self.log_path = self.data_dir.with_name(self.data_dir.name + ".log")

    @property
    def properties_path(self) -> Path:
        return self.data_dir / "server.properties"

    def format(self, cluster_id: str, timeout: float = 120.0) -> None:
        """``kafka-storage format``: write meta.properties and the bootstrap
        checkpoint, as Kafka requires before its first start."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.properties_path.write_text(
            "".join(f"{key}={value}\n" for key, value in self.settings.items())
        )
        (self.data_dir / "log4j2.yaml").write_text(_LOG4J)
        done = subprocess.run(
            self.reference.java_command(
                "kafka.tools.StorageTool",
                "format",
                "-t",
                cluster_id,
                "-c",
                str(self.properties_path),
            ),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0:
            raise RuntimeError(f"kafka-storage format failed:\n{done.stdout}\n{done.stderr}")

    def launch(self) -> threading.Event:
        """Start ``kafka.Kafka`` on the formatted dir; the event is set once the
        node is ready (or has exited)."""
        command = self.reference.java_command(
            "kafka.Kafka",
            str(self.properties_path),
            heap=self.heap,
            jvm_options=(
                f"-Xms{self.heap}",
                *KAFKA_JVM_OPTIONS,
                f"-Dlog4j2.configurationFile={self.data_dir / 'log4j2.yaml'}",
            ),
        )
        self.proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        ready = threading.Event()
        self._ready_seen = False
        threading.Thread(target=self._pump, args=(ready,), daemon=True).start()
        return ready

    def start(self, timeout: float = 120.0, cluster_id: str | None = None) -> str:
        """Format (first start only) and start; returns the bootstrap address."""
        if not (self.data_dir / "logs" / "meta.properties").exists():
            self.format(cluster_id or random_kafka_cluster_id(self.reference))
        return self.wait_ready(self.launch(), timeout)

    def wait_ready(self, ready: threading.Event, timeout: float = 120.0) -> str:
        if not ready.wait(timeout):
            self.kill()
            raise RuntimeError(f"Kafka did not become ready in {timeout} s:\n{self._tail()}")
        if not self._ready_seen:
            raise RuntimeError(f"Kafka exited during start:\n{self._tail()}")
        return self.bootstrap

    def _pump(self, ready: threading.Event) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        with self.log_path.open("a") as log_file:
            for line in self.proc.stdout:
                log_file.write(line)
                log_file.flush()
                line = line.rstrip("\n")
                self._add_log_line(line)
                if READY_TEXT in line:
                    self._ready_seen = True
                    ready.set()
        ready.set()

    def _tail(self) -> str:
        return "\n".join(self.log_lines[-40:]) + f"\n(full log: {self.log_path})"

    def stop(self, timeout: float = 60.0) -> int:
        """SIGTERM, Kafka's controlled shutdown, and wait for the exit."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise RuntimeError(
                f"Kafka did not exit within {timeout} s of SIGTERM:\n{self._tail()}"
            ) from None


def _single_node_settings() -> dict[str, str]:
    """A lone node cannot hold three replicas of Kafka's internal topics."""
    return {
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
    }


def random_kafka_cluster_id(reference: KafkaReference) -> str:
    """A cluster id from ``kafka-storage random-uuid``, Kafka's own generator."""
    done = subprocess.run(
        reference.java_command("kafka.tools.StorageTool", "random-uuid"),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


class KafkaCluster(NodeGroup[KafkaProcess]):
    """Three (``nodes``) combined-role Kafka nodes with a static voter set:
    ids 1..n, the same fault verbs as ``samsa.testing.cluster.LocalCluster``."""

    def __init__(
        self,
        base_dir: Path,
        *,
        nodes: int = 3,
        settings: dict[str, str] | None = None,
        reference: KafkaReference | None = None,
    ) -> None:
        self.base_dir = Path(base_dir)
        self.reference = reference or load_reference()
        ids = list(range(1, nodes + 1))
        ports = free_ports(2 * nodes)
        self.client_ports = {node_id: ports[2 * i] for i, node_id in enumerate(ids)}
        self.controller_ports = {node_id: ports[2 * i + 1] for i, node_id in enumerate(ids)}
        voters = ",".join(f"{i}@127.0.0.1:{self.controller_ports[i]}" for i in ids)
        common = {
            "offsets.topic.replication.factor": str(min(3, nodes)),
            "transaction.state.log.replication.factor": str(min(3, nodes)),
            "transaction.state.log.min.isr": str(min(2, nodes)),
            **(settings or {}),
        }
        self.nodes = {
            node_id: KafkaProcess(
                self.base_dir / f"node-{node_id}",
                common,
                reference=self.reference,
                node_id=node_id,
                client_port=self.client_ports[node_id],
                controller_port=self.controller_ports[node_id],
                voters=voters,
            )
            for node_id in ids
        }
        self._formatted = False

    @property
    def bootstrap(self) -> str:
        return self.bootstrap_of(sorted(self.nodes))

    def bootstrap_of(self, node_ids: Iterable[int]) -> str:
        return ",".join(f"127.0.0.1:{self.client_ports[i]}" for i in node_ids)

    def format(self) -> None:
        """Format every node with one cluster id, in parallel (each is a JVM start)."""
        cluster_id = random_kafka_cluster_id(self.reference)
        threads = [
            threading.Thread(target=node.format, args=(cluster_id,)) for node in self.nodes.values()
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        missing = [
            node_id
            for node_id, node in self.nodes.items()
            if not (node.data_dir / "logs" / "meta.properties").exists()
        ]
        if missing:
            raise RuntimeError(f"kafka-storage format failed on nodes {missing}")
        self._formatted = True

    def start(self, node_ids: Iterable[int] | None = None, timeout: float = 180.0) -> None:
        """Launch the given nodes (default: all) together and wait for each: no
        node is ready before a quorum of them runs."""
        if not self._formatted:
            self.format()
        chosen = sorted(self.nodes) if node_ids is None else list(node_ids)
        events = {node_id: self.nodes[node_id].launch() for node_id in chosen}
        deadline = time.monotonic() + timeout
        for node_id, ready in events.items():
            self.nodes[node_id].wait_ready(ready, max(1.0, deadline - time.monotonic()))


@pytest.fixture
def kafka_broker(tmp_path: Path, kafka_reference: KafkaReference) -> Iterator[KafkaProcess]:
    """A fresh single Kafka node in a temporary dir (``.bootstrap``)."""
    node = KafkaProcess(tmp_path / "kafka-data", reference=kafka_reference)
    node.start()
    try:
        yield node
    finally:
        node.kill()


@pytest.fixture
def kafka_cluster(tmp_path: Path, kafka_reference: KafkaReference) -> Iterator[KafkaCluster]:
    """Three fresh Kafka nodes, RF 3 internal topics (``.bootstrap``)."""
    with KafkaCluster(tmp_path / "kafka-cluster", reference=kafka_reference) as cluster:
        cluster.start()
        yield cluster
