"""The web console in headless Chromium (Debian's), driven by Playwright.

Each test saves a screenshot under ``test-artifacts/`` at the repository root,
so a person can look at what the page showed.  Waits are on what the page
displays (Playwright's auto-waiting expectations), never sleeps.
"""

from __future__ import annotations

import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import playwright.sync_api as playwright_api
import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.testing import BrokerProcess

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    proc = BrokerProcess(
        tmp_path_factory.mktemp("console") / "data", args=["--console-listen", "127.0.0.1:0"]
    )
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()
        proc.kill()


@pytest.fixture(scope="module")
def console_url(broker: BrokerProcess) -> str:
    assert broker.wait_for_log("console listening on http://")
    found = re.search(r"console listening on (http://\S+/)", broker.log_text())
    assert found is not None
    return found.group(1)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    with playwright_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1280, "height": 1000},
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser: object, request: pytest.FixtureRequest) -> Iterator[object]:
    page = browser.new_page()  # type: ignore[attr-defined]
    try:
        yield page
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"console-{request.node.name}.png"), full_page=True)
        page.close()


def produce(bootstrap: str, topic: str, count: int, partitions: int = 1) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, key=b"key-%d" % i, value=b"value-%d" % i, partition=i % partitions)
    assert producer.flush(10) == 0


def test_console_shows_a_topic_with_partitions_offsets_and_records(
    broker: BrokerProcess, console_url: str, page: object
) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("console-orders", 3, 1)])["console-orders"].result(10)
    produce(broker.bootstrap, "console-orders", 30, partitions=3)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    producer.produce("console-orders", key=b"bin", value=b"\xff\xfe\x00", partition=0)
    assert producer.flush(10) == 0

    expect = playwright_api.expect
    page.goto(console_url)  # type: ignore[attr-defined]
    expect(page.locator("body[data-loaded=true]")).to_have_count(1)  # type: ignore[attr-defined]
    cluster_id = page.locator("#cluster-id")  # type: ignore[attr-defined]
    expect(cluster_id).not_to_have_text("…")
    row = page.locator('#topics tr[data-topic="console-orders"]')  # type: ignore[attr-defined]
    expect(row).to_contain_text("3")
    row.click()
    partitions = page.locator("#partitions tbody tr")  # type: ignore[attr-defined]
    expect(partitions).to_have_count(3)
    expect(page.locator('#partitions tr[data-partition="0"]')).to_contain_text("11")  # type: ignore[attr-defined]
    expect(page.locator('#partitions tr[data-partition="1"] td').nth(5)).to_have_text("10")  # type: ignore[attr-defined]
    records = page.locator("#records tbody tr")  # type: ignore[attr-defined]
    expect(records.first).to_be_visible()
    expect(page.locator("#records")).to_contain_text("value-29")  # type: ignore[attr-defined]
    expect(page.locator("#records .binary").first).to_have_text("ff fe 00")  # type: ignore[attr-defined]


def test_console_shows_a_group_with_its_lag(
    broker: BrokerProcess, console_url: str, page: object
) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("console-lag", 1, 1)])["console-lag"].result(10)
    produce(broker.bootstrap, "console-lag", 50)
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "console-group",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe(["console-lag"])
    read = 0
    try:
        while read < 20:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                read += 1
        consumer.commit(message=msg, asynchronous=False)  # committed offset 20
        expect = playwright_api.expect
        page.goto(console_url)  # type: ignore[attr-defined]
        group_row = page.locator('#groups tr[data-group="console-group"]')  # type: ignore[attr-defined]
        expect(group_row).to_contain_text("Stable")
        expect(group_row.locator("td").nth(3)).to_have_text("30")
        group_row.click()
        detail = page.locator("#group-partitions tbody tr")  # type: ignore[attr-defined]
        expect(detail).to_have_count(1)
        expect(detail.first.locator("td").nth(2)).to_have_text("20")
        expect(detail.first.locator("td").nth(4)).to_have_text("30")
        expect(page.locator("#group-members")).to_contain_text("console-lag:0")  # type: ignore[attr-defined]
    finally:
        consumer.close()


def test_records_chart_moves_while_a_producer_runs(
    broker: BrokerProcess, console_url: str, page: object
) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("console-load", 1, 1)])["console-load"].result(10)
    page.goto(console_url)  # type: ignore[attr-defined]
    expect = playwright_api.expect
    expect(page.locator("body[data-loaded=true]")).to_have_count(1)  # type: ignore[attr-defined]

    stop = threading.Event()

    def load() -> None:
        producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
        while not stop.is_set():
            for _ in range(200):
                producer.produce("console-load", value=b"x" * 100)
            producer.poll(0.05)
        producer.flush(10)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    try:
        expect(page.locator("#rate-in")).not_to_have_text("0", timeout=15_000)  # type: ignore[attr-defined]
        page.wait_for_function(  # type: ignore[attr-defined]
            "window.samsaChart.points.filter(p => p.in > 0).length >= 2", timeout=15_000
        )
    finally:
        stop.set()
        worker.join(15)
