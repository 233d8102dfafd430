"""Fixtures for the client tests.

``bootstrap`` is a generic broker address, parametrised over two brokers
started once per session: the peer broker (tansu, tests/client/_tansu.py) and
Samsa's own broker (``samsa.testing.BrokerProcess`` in a temporary data dir).
Every integration test taking ``bootstrap`` thus runs against both; a test
that hits a known tansu bug calls ``xfail_on_tansu(reason)``.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from _tansu import TANSU, Tansu

from samsa.testing import BrokerProcess

BROKERS = ("tansu", "samsa")


@pytest.fixture(scope="session")
def tansu_broker() -> Iterator[Tansu]:
    if not TANSU.exists():
        pytest.skip(f"tansu binary not installed at {TANSU}")
    broker = Tansu()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def samsa_session_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    broker = BrokerProcess(tmp_path_factory.mktemp("samsa-broker"))
    broker.start()
    try:
        yield broker
    finally:
        if broker.proc is not None and broker.proc.poll() is None:
            broker.stop()
        broker.kill()


@pytest.fixture(scope="session", params=BROKERS)
def broker_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def bootstrap(request: pytest.FixtureRequest, broker_kind: str) -> str:
    if broker_kind == "tansu":
        return str(request.getfixturevalue("tansu_broker").bootstrap)
    return str(request.getfixturevalue("samsa_session_broker").bootstrap)


class BrokerAddress(NamedTuple):
    bootstrap: str

    @property
    def port(self) -> int:
        return int(self.bootstrap.rsplit(":", 1)[1])


@pytest.fixture
def broker(bootstrap: str) -> BrokerAddress:
    """The broker under test (each of ``BROKERS`` in turn), for tests that take an object."""
    return BrokerAddress(bootstrap)


@pytest.fixture
def xfail_on_tansu(request: pytest.FixtureRequest, broker_kind: str) -> Callable[[str], None]:
    """Mark the running case an expected failure when the broker is tansu (it still runs)."""

    def mark(reason: str) -> None:
        if broker_kind == "tansu":
            request.node.add_marker(pytest.mark.xfail(reason=f"tansu bug: {reason}"))

    return mark


@pytest.fixture
def topic_factory(bootstrap: str):  # type: ignore[no-untyped-def]
    """Create a fresh topic with N partitions through confluent-kafka's admin client."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})

    def make(partitions: int = 1) -> str:
        name = f"t-{uuid.uuid4().hex[:10]}"
        admin.create_topics([NewTopic(name, partitions, 1)])[name].result(15)
        return name

    return make
