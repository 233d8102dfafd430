"""The cluster page of a three-node cluster while one broker is killed.

The killed broker must show as fenced, and the partitions it held as
under-replicated, within the session timeout (``broker.session.timeout.ms``,
1.5 s in the test cluster's fast settings; waited for with a generous bound).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from tests.console.conftest import api, console_address, snap

from samsa.testing.cluster import LocalCluster

expect = playwright_api.expect


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path, controllers=3, settings={"console.listen": "127.0.0.1:0"}) as c:
        c.start()
        yield c


def test_a_killed_broker_shows_as_fenced_and_its_partitions_under_replicated(
    cluster: LocalCluster, page: Any
) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic("console-replicated", 6, 3)])["console-replicated"].result(30)
    urls = {node_id: console_address(node) for node_id, node in cluster.nodes.items()}
    _, before = api(urls[1], "/api/cluster")
    controller = before["controller_id"]
    victim = next(n for n in (3, 2, 1) if n != controller)
    watcher = next(n for n in (1, 2, 3) if n != victim)

    page.goto(f"{urls[watcher]}#/cluster")
    brokers = page.locator("#cluster-brokers tbody tr")
    expect(brokers).to_have_count(3)
    for node_id in (1, 2, 3):
        expect(
            page.locator(f'#cluster-brokers tr[data-broker="{node_id}"] td').nth(3)
        ).to_have_text("active")
    expect(page.locator("#quorum tbody tr")).to_have_count(3)
    under = page.locator('#partition-health tr[data-count="under-replicated"] td').nth(1)
    expect(under).to_have_text("0", timeout=30_000)
    snap(page, "cluster-healthy")

    cluster.kill(victim)
    state = page.locator(f'#cluster-brokers tr[data-broker="{victim}"] td').nth(3)
    expect(state).to_have_text("fenced", timeout=15_000)
    expect(under).not_to_have_text("0", timeout=15_000)
    expect(page.locator(f'#cluster-brokers tr[data-broker="{victim}"] td').nth(4)).to_have_text("0")
    snap(page, "cluster-broker-killed")

    page.goto(f"{urls[watcher]}#/topics/console-replicated")
    expect(page.locator("#partitions tbody tr")).to_have_count(6)
    flags = page.locator("#partitions tbody tr td:nth-child(8)")
    expect(flags.first).to_have_text("under-replicated", timeout=15_000)
    _, topic = api(urls[watcher], "/api/topics/console-replicated")
    assert topic["counts"]["under_replicated"] == 6
    assert all(victim not in p["isr"] for p in topic["partitions"])

    # Records are served by leaders: the watcher's browser reads its own and says
    # where the others are.
    _, browsed = api(urls[watcher], "/api/topics/console-replicated/messages")
    led_here = sum(1 for p in topic["partitions"] if p["leader"] == watcher)
    elsewhere = {e["leader"]: e["partitions"] for e in browsed["elsewhere"]}
    assert watcher not in elsewhere and victim not in elsewhere
    assert led_here + sum(elsewhere.values()) == 6
    if elsewhere:
        page.goto(f"{urls[watcher]}#/topics/console-replicated/messages")
        expect(page.locator("#browse-status")).to_contain_text("browse them on its console")
