"""Fixtures for Kafka's own command-line tools and Java clients against Samsa.

Each tool is run by its main class in a JVM of its own (``KafkaTools.run``), so
a test pays one JVM start-up (1-3 s here) per call: tests group their checks so
that every call's output is checked for content, not only its exit code.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.kafka_tools.tool_classes import main_class_of, property_flag

from samsa.testing import BrokerProcess
from samsa.testing.cluster import LocalCluster
from samsa.testing.kafka_reference import KafkaReference
from samsa.testing.kafka_reference import kafka_reference as kafka_reference

TOOL_TIMEOUT_S = 180.0
STARTUP_TIMEOUT_S = 120.0
"""Samsa starts in about a second; JVMs beside it on a loaded machine slow it down."""
TEST_TIMEOUT_S = 900
"""A test runs several JVMs; on a loaded machine each takes 10 s or more to start."""


class KafkaTools:
    """Runs Kafka's tools against one bootstrap address."""

    def __init__(self, reference: KafkaReference, bootstrap: str) -> None:
        self.reference = reference
        self.bootstrap = bootstrap

    def run(self, main_class: str, *args: str, stdin: str | None = None, check: bool = True) -> str:
        """The tool's stdout; a non-zero exit fails the test with its stderr."""
        main_class = main_class_of(main_class, self.reference.kafka_version)
        argv = self.reference.java_command(main_class, *args, quick_start=True)
        done = subprocess.run(
            argv, input=stdin, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"{main_class} {' '.join(args)} exited {done.returncode}:\n"
                f"{done.stdout}\n{done.stderr[-4000:]}"
            )
        return done.stdout

    def props(self, tool: str, *properties: str) -> list[str]:
        """A console tool's ``key=value`` properties, each behind the flag this
        Kafka version spells them with."""
        flag = property_flag(tool, self.reference.kafka_version)
        return [arg for prop in properties for arg in (flag, prop)]

    def admin(self, main_class: str, *args: str, stdin: str | None = None) -> str:
        """A tool taking ``--bootstrap-server`` first, as all of Kafka's admin tools do."""
        return self.run(main_class, "--bootstrap-server", self.bootstrap, *args, stdin=stdin)


@pytest.fixture(scope="module")
def samsa_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """One single-node Samsa shared by a module (each test uses its own topics)."""
    proc = BrokerProcess(tmp_path_factory.mktemp("samsa") / "data")
    proc.start(timeout=STARTUP_TIMEOUT_S)
    try:
        yield proc
    finally:
        proc.stop()
        proc.kill()


@pytest.fixture(scope="module")
def samsa_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """Three combined broker+controller nodes shared by a module."""
    with LocalCluster(tmp_path_factory.mktemp("cluster")) as cluster:
        cluster.start(timeout=STARTUP_TIMEOUT_S)
        yield cluster


@pytest.fixture(scope="module")
def node_tools(kafka_reference: KafkaReference, samsa_node: BrokerProcess) -> KafkaTools:
    return KafkaTools(kafka_reference, samsa_node.bootstrap)


@pytest.fixture(scope="module")
def cluster_tools(kafka_reference: KafkaReference, samsa_cluster: LocalCluster) -> KafkaTools:
    return KafkaTools(kafka_reference, samsa_cluster.bootstrap)


def write_json(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def compile_java(
    reference: KafkaReference, source: Path, out_dir: Path, jar_prefixes: tuple[str, ...]
) -> Path:
    """javac against only the jars the program imports (faster than all of Kafka's)."""
    jars = [str(j) for j in reference.kafka_libs.glob("*.jar") if j.name.startswith(jar_prefixes)]
    javac = shutil.which("javac")
    if javac is None:
        pytest.fail("javac not found: the Java client tests need a JDK")
    subprocess.run(
        [javac, "-d", str(out_dir), "-cp", ":".join(jars), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return out_dir
