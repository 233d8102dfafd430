"""Group membership with every real client: the scenarios of ``test_groups_common``.

Members run in child processes (see ``test_groups_common``); each scenario runs
for confluent-kafka, kafka-python and aiokafka against a real Samsa broker.
"""

from __future__ import annotations

import pytest

from samsa.testing import BrokerProcess

from .test_groups_common import (
    scenario_killed_member_expires,
    scenario_split_then_leave,
    scenario_static_restart,
)

pytestmark = pytest.mark.serial  # asserts takeover times: not beside another xdist worker

KINDS = ["confluent", "kafka-python", "aiokafka"]


@pytest.mark.parametrize("kind", KINDS)
def test_split_then_leave(broker: BrokerProcess, topic_name: str, kind: str) -> None:
    took = scenario_split_then_leave(kind, broker.bootstrap, topic_name)
    print(f"takeover after LeaveGroup: {took:.2f}s")


@pytest.mark.parametrize("kind", KINDS)
def test_killed_member_expires(broker: BrokerProcess, topic_name: str, kind: str) -> None:
    took = scenario_killed_member_expires(kind, broker.bootstrap, topic_name)
    print(f"takeover after SIGKILL (session 1.5s): {took:.2f}s")


@pytest.mark.parametrize("kind", KINDS)
def test_static_member_restart_without_rebalance(
    broker: BrokerProcess, topic_name: str, kind: str
) -> None:
    scenario_static_restart(kind, broker.bootstrap, topic_name)
