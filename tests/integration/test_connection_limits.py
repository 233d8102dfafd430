"""Connection limits of a real broker: a listener's max.connections makes a new
connection wait (accepted, not read) until one closes; a per-ip override set at
runtime closes the connection over it.  Each leaves a log line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.integration.test_bad_input import RawClient
from tests.integration.test_dynamic_broker_configs import alter_raw

from samsa.testing import BrokerProcess
from samsa.testing.cluster import wait_until

API_VERSIONS = 18


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(
        tmp_path_factory.mktemp("limits") / "data",
        {"listener.name.plaintext.max.connections": "2"},
    ) as proc:
        yield proc


def _answers(client: RawClient) -> bool:
    return bool(client.call(API_VERSIONS, 0, {})["error_code"] == 0)


def test_over_the_listener_limit_a_connection_waits_for_a_slot(broker: BrokerProcess) -> None:
    first, second = RawClient(broker.bootstrap), RawClient(broker.bootstrap)
    assert _answers(first) and _answers(second)
    third = RawClient(broker.bootstrap)  # TCP accepts it; the broker reads nothing yet
    assert broker.wait_for_log("waits: max.connections (or the listener's) reached")
    third.sock.settimeout(30)
    first.close()
    assert _answers(third)  # its request was held, not lost
    second.close()
    third.close()


def test_a_per_ip_override_set_at_runtime_closes_the_next_connection(
    broker: BrokerProcess, tmp_path: Path
) -> None:
    answer = alter_raw(broker.bootstrap, "", "max.connections.per.ip.overrides", "127.0.0.1:1")
    assert answer["error_code"] == 0

    def refused() -> bool:
        held = RawClient(broker.bootstrap)
        try:
            extra = RawClient(broker.bootstrap)
            try:
                extra.call(API_VERSIONS, 0, {})
                return False
            except (ConnectionError, OSError):
                return True
            finally:
                extra.sock.close()
        finally:
            held.close()

    wait_until(refused, 20, "the override to close a second connection from 127.0.0.1")
    assert broker.wait_for_log("max.connections.per.ip is 1")
    assert (
        alter_raw(broker.bootstrap, "", "max.connections.per.ip.overrides", None)["error_code"] == 0
    )
