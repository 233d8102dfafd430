"""Fixtures for tests against a real broker process and real Kafka clients."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from samsa.protocol.batches.record_batch import BatchHeader, iter_batches
from samsa.testing import BrokerProcess

_names = itertools.count()


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """One broker shared by a test module (each test uses its own topics)."""
    with BrokerProcess(tmp_path_factory.mktemp("broker") / "data") as proc:
        yield proc


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> str:
    base = "".join(c if c.isalnum() else "-" for c in request.node.name)[:60]
    return f"{base}-{os.getpid()}-{next(_names)}"


def stored_batches(data_dir: Path, topic: str, partition: int = 0) -> list[BatchHeader]:
    """Read the batch headers straight from a partition's segment files."""
    headers: list[BatchHeader] = []
    for segment in sorted((data_dir / f"{topic}-{partition}").glob("*.log")):
        headers.extend(h for _, h in iter_batches(segment.read_bytes()))
    return headers


KIP848_SETTINGS = {
    "group.consumer.heartbeat.interval.ms": "300",
    "group.consumer.session.timeout.ms": "6000",
}
"""KIP-848 groups in tests: heartbeats often enough that reconciling takes well under a second."""


@pytest.fixture(scope="module")
def kip848_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """One broker with KIP848_SETTINGS shared by a test module."""
    with BrokerProcess(tmp_path_factory.mktemp("kip848") / "data", KIP848_SETTINGS) as proc:
        yield proc
