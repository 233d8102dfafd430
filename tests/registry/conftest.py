"""One broker serving the registry, shared by the registry's process tests of this package
(``test_serving``, ``test_clients``); the core's tests need no broker and never start it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from tests.registry.served import registry_broker, registry_url

from samsa.testing import BrokerProcess


@dataclass
class Served:
    broker: BrokerProcess
    url: str


@pytest.fixture(scope="package")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with registry_broker(tmp_path_factory.mktemp("registry") / "data") as proc:
        yield Served(proc, registry_url(proc))
