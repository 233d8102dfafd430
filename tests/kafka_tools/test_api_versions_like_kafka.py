"""Kafka's ``kafka-broker-api-versions`` prints the same for Samsa as for Kafka.

The tool (of the reference release, 4.4.0 by default) asks ApiVersions and
prints every API its client knows with the range the broker advertises, or
UNSUPPORTED.  Run against a real Kafka node and a Samsa node, the two outputs
must agree line for line: the same client-facing APIs (none of the
controller-only ones, which Samsa's default listener also serves to its
quorum peers), the same version ranges, with no exceptions left (issue 36's
must-show 1: Streams groups and AlterReplicaLogDirs were the last APIs built).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.kafka_tools.conftest import STARTUP_TIMEOUT_S, TOOL_TIMEOUT_S
from tests.kafka_tools.tool_classes import BROKER_API_VERSIONS

from samsa.testing import BrokerProcess
from samsa.testing.cluster import LocalCluster
from samsa.testing.kafka import KafkaProcess
from samsa.testing.kafka_reference import DEFAULT_KAFKA_VERSION, KafkaReference

_LINE = re.compile(r"^\s*(\w+\(\d+\)): (.*?),?$")


def api_versions(reference: KafkaReference, bootstrap: str) -> dict[str, str]:
    """The tool's answer: each API (``Name(key)``) and its range (``0 to 13``,
    ``UNSUPPORTED``), without the ``[usable: n]`` its own client adds."""
    done = subprocess.run(
        reference.java_command(
            BROKER_API_VERSIONS, "--bootstrap-server", bootstrap, quick_start=True
        ),
        capture_output=True,
        text=True,
        timeout=TOOL_TIMEOUT_S,
        check=True,
    )
    apis = {}
    for line in done.stdout.splitlines():
        found = _LINE.match(line)
        if found:
            apis[found.group(1)] = re.sub(r"\s*\[usable: \d+\]", "", found.group(2))
    assert apis, done.stdout
    return apis


@pytest.fixture(scope="module")
def kafka_answer(
    kafka_reference: KafkaReference, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, str]]:
    if kafka_reference.kafka_version != DEFAULT_KAFKA_VERSION:
        pytest.skip(f"Samsa advertises Kafka {DEFAULT_KAFKA_VERSION}'s versions")
    node = KafkaProcess(tmp_path_factory.mktemp("kafka") / "data", reference=kafka_reference)
    node.start()
    try:
        yield api_versions(kafka_reference, node.bootstrap)
    finally:
        node.kill()


@pytest.fixture(scope="module")
def samsa_answer(
    kafka_reference: KafkaReference, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, str]]:
    proc = BrokerProcess(Path(tmp_path_factory.mktemp("samsa")) / "data")
    proc.start(timeout=STARTUP_TIMEOUT_S)
    try:
        yield api_versions(kafka_reference, proc.bootstrap)
    finally:
        proc.kill()


def test_same_apis_and_ranges_as_kafka(
    kafka_answer: dict[str, str], samsa_answer: dict[str, str]
) -> None:
    assert set(samsa_answer) == set(kafka_answer)
    differences = {
        api: (kafka_answer[api], samsa_answer[api])
        for api in kafka_answer
        if kafka_answer[api] != samsa_answer[api]
    }
    assert not differences, "\n".join(
        f"{api}: Kafka {theirs}, Samsa {ours}" for api, (theirs, ours) in differences.items()
    )


def test_no_controller_only_api_is_advertised(samsa_answer: dict[str, str]) -> None:
    """The single-node default listener serves the quorum too, but advertises
    only what Kafka's broker listeners do."""
    for api in ("Vote(52)", "BeginQuorumEpoch(53)", "AlterPartition(56)", "BrokerHeartbeat(63)"):
        assert samsa_answer.get(api, "UNSUPPORTED") == "UNSUPPORTED", api


def test_a_cluster_with_controller_listeners_answers_the_same(
    kafka_reference: KafkaReference,
    samsa_answer: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Three nodes with a separate CONTROLLER listener: the client listener
    forwards what the controller answers (UpdateFeatures, UnregisterBroker,
    the quorum's admin calls) and lists the same set as the single node."""
    with LocalCluster(Path(tmp_path_factory.mktemp("cluster"))) as cluster:
        cluster.start(timeout=STARTUP_TIMEOUT_S)
        for node_id in sorted(cluster.nodes):
            answer = api_versions(kafka_reference, cluster.bootstrap_of([node_id]))
            assert answer == samsa_answer, node_id
