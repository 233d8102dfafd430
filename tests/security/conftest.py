"""One broker with a listener per security protocol, shared by a test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.security.secured_broker import SecuredBroker, start_secured_broker


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredBroker]:
    broker = start_secured_broker(tmp_path_factory.mktemp("secured"))
    try:
        yield broker
    finally:
        broker.broker.stop()
        broker.broker.kill()
