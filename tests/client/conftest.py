"""Fixtures for the client tests.

``bootstrap`` is a generic broker address: today a tansu peer broker started for
the session (tests/client/_tansu.py); Samsa's own broker (``samsa.testing``)
can be added as a second parametrisation without touching the tests.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from _tansu import TANSU, Tansu


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
def bootstrap(tansu_broker: Tansu) -> str:
    return tansu_broker.bootstrap


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
