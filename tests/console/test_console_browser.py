"""The console's pages against one real broker (actions off), in headless Chromium.

Data is produced with confluent-kafka; what the pages show is checked against
what the CLI (``samsa topics describe``, ``samsa groups describe``) reports.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from tests.console.conftest import api, cli_json, snap

from samsa.testing import BrokerProcess

expect = playwright_api.expect


def shown(value: object) -> str:
    """A value as the pages show it (a dash for none)."""
    return "-" if value is None else str(value)


def create(broker: BrokerProcess, name: str, partitions: int, **configs: str) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    topic = NewTopic(name, partitions, 1, config=configs)
    admin.create_topics([topic])[name].result(10)


def produce(broker: BrokerProcess, topic: str, records: list[tuple[Any, ...]]) -> None:
    """``records``: (partition, key, value[, headers])."""
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
    for partition, key, value, *headers in records:
        producer.produce(topic, key=key, value=value, partition=partition, headers=headers or None)
    assert producer.flush(10) == 0


def test_overview_lists_topics_and_groups_and_the_chart_moves(
    broker: BrokerProcess, console_url: str, page: Any
) -> None:
    create(broker, "console-load", 2)
    page.goto(console_url)
    expect(page.locator("body[data-loaded=true]")).to_have_count(1)
    expect(page.locator("#cluster-id")).not_to_have_text("…")
    expect(page.locator("#mode")).to_have_text("read-only")
    row = page.locator('#topics tr[data-topic="console-load"]')
    expect(row.locator("td").nth(1)).to_have_text("2")
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
        expect(page.locator("#rate-in")).not_to_have_text("0", timeout=15_000)
        page.wait_for_function(
            "window.samsaChart.points.filter(p => p.in > 0).length >= 2", timeout=15_000
        )
    finally:
        stop.set()
        worker.join(15)
    page.locator("#topic-filter").fill("console-lo")
    expect(page.locator("#topics tbody tr")).to_have_count(1)
    row.locator("a").click()
    expect(page.locator("#topic-name")).to_have_text("console-load")


def test_message_browser_shows_json_text_and_binary_and_finds_a_record_by_key(
    broker: BrokerProcess, console_url: str, page: Any
) -> None:
    create(broker, "console-orders", 3)
    order = json.dumps({"order": 42, "items": ["tea", "cake"]}).encode()
    produce(
        broker,
        "console-orders",
        [
            (0, b"order-42", order, ("source", b"web")),
            (1, b"greeting", b"hello, world"),
            (2, b"\x00\xffbinary-key", b"\xff\xfe\x00\x01"),
            (1, b"huge", b"y" * 200_000),
            *[(i % 3, b"filler-%d" % i, b"text value %d" % i) for i in range(30)],
        ],
    )
    page.goto(f"{console_url}#/topics/console-orders/messages")
    rows = page.locator("#messages tbody tr")
    expect(rows).to_have_count(34)
    json_row = page.locator("#messages tr", has_text="order-42")
    expect(json_row.locator(".preview.json")).to_have_text('{"order":42,"items":["tea","cake"]}')
    json_row.click()  # a row opens to the whole value, pretty-printed
    expect(json_row.locator("pre.value.json")).to_be_visible()
    expect(json_row.locator("pre.value.json")).to_contain_text('"order": 42')
    expect(json_row).to_contain_text("source=web")
    text_row = page.locator("#messages tr", has_text="greeting")
    expect(text_row.locator("pre.value.text").nth(1)).to_have_text("hello, world")
    binary_row = page.locator('#messages tr[data-partition="2"][data-offset="0"]')
    expect(binary_row.locator("pre.value.hex").first).to_have_text(
        "00 ff 62 69 6e 61 72 79 2d 6b 65 79"
    )
    expect(binary_row.locator("pre.value.hex").nth(1)).to_have_text("ff fe 00 01")
    huge_row = page.locator("#messages tr", has_text="huge")
    expect(huge_row.locator(".size.truncated")).to_contain_text("200,000 bytes")
    # Newest first: each partition's records from its last offset down.
    offsets = page.eval_on_selector_all(
        '#messages tr[data-partition="0"]', "rows => rows.map(r => Number(r.dataset.offset))"
    )
    assert offsets == list(range(10, -1, -1))
    snap(page, "message-browser-newest")

    page.locator("#browse-q").fill("order-42")
    page.locator("#browse button").click()
    expect(page.locator("body[data-search=done]")).to_have_count(1)
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("order-42")
    expect(page.locator("#browse-status")).to_contain_text("1 record matches")
    expect(page.locator("#search-progress")).to_contain_text("34 records scanned")


def test_message_browser_reads_from_an_offset_or_a_time_in_one_partition(
    broker: BrokerProcess, console_url: str, page: Any
) -> None:
    create(broker, "console-history", 2)
    produce(broker, "console-history", [(0, b"early-%d" % i, b"v%d" % i) for i in range(10)])
    time.sleep(0.01)  # the next records' timestamps are after this instant
    boundary = int(time.time() * 1000)
    produce(broker, "console-history", [(0, b"late-%d" % i, b"v%d" % i) for i in range(5)])

    page.goto(
        f"{console_url}#/topics/console-history/messages?partition=0&from=offset&offset=7&limit=3"
    )
    rows = page.locator("#messages tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0)).to_contain_text("early-7")
    expect(rows.nth(2)).to_contain_text("early-9")
    page.locator("#messages-pager a", has_text="newer").click()
    expect(rows.nth(0)).to_contain_text("late-0")
    expect(rows.nth(2)).to_contain_text("late-2")
    page.locator("#messages-pager a", has_text="older").click()
    expect(rows.nth(0)).to_contain_text("early-7")

    page.goto(
        f"{console_url}#/topics/console-history/messages?partition=0&from=timestamp&timestamp={boundary}"
    )
    expect(rows).to_have_count(5)
    expect(rows.first).to_contain_text("late-0")
    expect(page.locator("#browse-from")).to_have_value("timestamp")


def test_topic_page_matches_samsa_topics_describe(
    broker: BrokerProcess, console_url: str, page: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    create(
        broker, "console-described", 4, **{"retention.ms": "3600000", "cleanup.policy": "compact"}
    )
    produce(broker, "console-described", [(i % 4, b"k%d" % i, b"v%d" % i) for i in range(23)])
    described = cli_json(
        capsys, "topics", "describe", "console-described", "--bootstrap", broker.bootstrap
    )[0]

    page.goto(f"{console_url}#/topics/console-described")
    rows = page.locator("#partitions tbody tr")
    expect(rows).to_have_count(4)
    for p in described["partitions"]:
        cells = page.locator(f'#partitions tr[data-partition="{p["partition"]}"] td')
        expect(cells.nth(1)).to_have_text(str(p["leader"]))
        expect(cells.nth(2)).to_have_text(",".join(map(str, p["replicas"])))
        expect(cells.nth(3)).to_have_text(",".join(map(str, p["isr"])))
        expect(cells.nth(4)).to_have_text(str(p["log_start_offset"]))
        expect(cells.nth(5)).to_have_text(str(p["log_end_offset"]))
        expect(cells.nth(7)).to_have_text("ok")
    expect(page.locator("#configs tbody tr")).to_have_count(len(described["configs"]))
    for c in described["configs"]:
        cells = page.locator(f'#configs tr[data-config="{c["name"]}"] td')
        expect(cells.nth(1).locator("code.raw")).to_have_text(
            str(c["value"]) if c["value"] is not None else "-"
        )
        expect(cells.nth(2)).to_have_text(c["source"])
    retention = page.locator('#configs tr[data-config="retention.ms"] td')
    expect(retention.nth(2)).to_have_text("DYNAMIC_TOPIC_CONFIG")
    expect(page.locator("#topic-rates")).to_contain_text("produce")


def test_group_page_lag_matches_samsa_groups_describe(
    broker: BrokerProcess, console_url: str, page: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    create(broker, "console-lag", 2)
    produce(broker, "console-lag", [(i % 2, None, b"v%d" % i) for i in range(50)])
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "console-group",
            "client.id": "lagging-reader",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe(["console-lag"])
    try:
        read = 0
        while read < 20:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                read += 1
                consumer.commit(message=msg, asynchronous=False)
        described = cli_json(
            capsys, "groups", "describe", "console-group", "--bootstrap", broker.bootstrap
        )
        page.goto(f"{console_url}#/groups/console-group")
        expect(page.locator("#group-state")).to_contain_text("Stable")
        expect(page.locator("#group-members")).to_contain_text("lagging-reader")
        expect(page.locator("#group-members")).to_contain_text("console-lag: 0,1")
        for p in described["partitions"]:
            cells = page.locator(
                f'#group-partitions tr[data-partition="console-lag-{p["partition"]}"] td'
            )
            no_offset = p["committed_offset"] is None  # the CLI's "-", as Kafka's tool
            for column, field in ((2, "committed_offset"), (3, "log_end_offset"), (4, "lag")):
                want = "no offset" if no_offset and column != 3 else shown(p[field])
                expect(cells.nth(column)).to_have_text(want)
        total = sum(p["lag"] or 0 for p in described["partitions"])
        uncounted = sum(p["committed_offset"] is None for p in described["partitions"])
        assert total > 0
        expect(page.locator("#group-state")).to_contain_text(f"total lag {total}")
        page.wait_for_function("window.samsaChart.lag['console-group'].length >= 2")
        snap(page, "group-page")
        _, one = api(console_url, "/api/groups/console-group?limit=1&offset=1")
        assert (one["partition_count"], len(one["partitions"]), one["lag"]) == (2, 1, total)
        assert (one["lag_uncounted"], one["no_offset"]) == (uncounted, uncounted)
        assert one["partitions"][0]["partition"] == 1
        page.goto(console_url)
        group_row = page.locator('#groups tr[data-group="console-group"] td')
        expect(group_row.nth(3)).to_have_text(
            f"{total} ({uncounted} uncounted)" if uncounted else str(total)
        )
    finally:
        consumer.close()


def test_bad_input_gets_a_clear_message_and_the_right_status(
    broker: BrokerProcess, console_url: str, page: Any
) -> None:
    create(broker, "console-small", 1)
    produce(broker, "console-small", [(0, b"k", b"v")])
    for path, status, message in (
        ("/api/topics/no-such-topic", 404, "topic 'no-such-topic' does not exist"),
        ("/api/topics/no-such-topic/messages", 404, "does not exist"),
        ("/api/groups/no-such-group", 404, "group 'no-such-group' does not exist"),
        ("/api/topics/console-small/messages?partition=5", 404, "has no partition 5"),
        (
            "/api/topics/console-small/messages?partition=0&from=offset&offset=9",
            400,
            "out of range",
        ),
        ("/api/topics/console-small/messages?limit=ten", 400, "limit must be an integer"),
        ("/api/topics/console-small/messages?from=yesterday", 400, "from must be one of"),
        ("/api/topics/console-small/messages?from=offset", 400, "needs an offset"),
        ("/api/topics/console-small/messages?max_bytes=99999999999", 400, "max_bytes must be"),
        ("/api/topics?offset=-1", 400, "offset must be at least 0"),
        ("/api/nothing-here", 404, "no such API"),
    ):
        got_status, body = api(console_url, path)
        assert (got_status, set(body)) == (status, {"error", "status"}), path
        assert message in body["error"], (path, body)
        assert "Traceback" not in body["error"]

    page.goto(f"{console_url}#/topics/no-such-topic")
    expect(page.locator("#error")).to_have_text("topic 'no-such-topic' does not exist")
    expect(page.locator("#error")).to_have_attribute("data-status", "404")
    page.goto(f"{console_url}#/topics/console-small/messages?partition=0&from=offset&offset=9")
    expect(page.locator("#error")).to_contain_text("offset 9 is out of range for console-small-0")
    page.goto(f"{console_url}#/groups/no-such-group")
    expect(page.locator("#error")).to_contain_text("group 'no-such-group' does not exist")


def test_actions_are_refused_unless_the_broker_allows_them(
    broker: BrokerProcess, console_url: str, page: Any
) -> None:
    status, body = api(console_url, "/api/actions/create-topic", {"name": "console-refused"})
    assert status == 403
    assert "console.allow.actions=true" in body["error"]
    page.goto(console_url)
    page.locator("details.actions summary").click()
    # Read-only: the form is there, greyed out, and says why.
    expect(page.locator("#create-topic button")).to_be_disabled()
    expect(page.locator("#create-topic input[name=name]")).to_be_disabled()
    expect(page.locator("details.actions .actions-off")).to_be_visible()
    expect(page.locator("details.actions .actions-off")).to_contain_text(
        "console.allow.actions=true"
    )
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    assert "console-refused" not in admin.list_topics(timeout=10).topics


def test_topic_page_shows_open_transactions_and_the_lso_lag(
    broker: BrokerProcess, console_url: str, page: Any
) -> None:
    create(broker, "console-txn", 1)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "console-t"})
    producer.init_transactions(30)
    producer.begin_transaction()
    for i in range(7):
        producer.produce("console-txn", value=b"v%d" % i, partition=0)
    assert producer.flush(10) == 0

    page.goto(f"{console_url}#/topics/console-txn")
    cells = page.locator('#partitions tr[data-partition="0"] td')
    expect(cells.nth(8)).to_have_text("7")  # LSO lag: 7 records read_committed cannot read
    expect(cells.nth(9)).to_have_text("1")  # one open transaction
    status, described = api(console_url, "/api/topics/console-txn")
    assert status == 200
    row = described["partitions"][0]
    assert (row["last_stable_offset"], row["lso_lag"], row["open_transactions"]) == (0, 7, 1)
    snap(page, "topic-open-transaction")

    producer.commit_transaction(30)
    page.reload()
    expect(cells.nth(8)).to_have_text("0")
    expect(cells.nth(9)).to_have_text("0")
    row = api(console_url, "/api/topics/console-txn")[1]["partitions"][0]
    assert (row["last_stable_offset"], row["lso_lag"]) == (row["log_end_offset"], 0)
