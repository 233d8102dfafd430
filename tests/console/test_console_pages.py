"""The console as a daily tool (issue 38), on one read-only broker, in Chromium.

Read-only pages grey out their actions and say why; an unknown topic or group
shows its banner and a way back, not empty tables; record rows are one line
until opened; configs put overrides first with units beside raw values; a
group's lag names the partitions it cannot count; the records shown export
as JSON; the security page lists SCRAM users and quotas.  Data is made with
confluent-kafka (and a raw AlterClientQuotas), checked against the CLI.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    NewTopic,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)
from tests.console.conftest import api, cli_json, snap
from tests.console.test_console_browser import produce
from tests.integration.raw_client import RawClient

from samsa.testing import BrokerProcess

expect = playwright_api.expect
ACTION_FORMS = (
    "add-partitions",
    "produce-record",
    "delete-records",
    "alter-config",
    "purge-topic",
    "delete-topic",
)


def create(broker: BrokerProcess, name: str, partitions: int, **configs: str) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1, config=configs)])[name].result(10)


def commit(broker: BrokerProcess, group: str, offsets: dict[tuple[str, int], int]) -> None:
    """Committed offsets of an empty group, as a consumer outside it commits them."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    try:
        parts = [TopicPartition(t, p, o) for (t, p), o in offsets.items()]
        consumer.commit(offsets=parts, asynchronous=False)
    finally:
        consumer.close()


def test_read_only_pages_grey_out_every_action_and_say_why(
    broker: BrokerProcess, console_url: str, page: Any
) -> None:
    create(broker, "ro-topic", 1)
    commit(broker, "ro-group", {("ro-topic", 0): 0})
    page.goto(f"{console_url}#/topics/ro-topic")
    expect(page.locator("#configs tbody tr").first).to_be_visible()
    for form in ACTION_FORMS:
        for button in page.locator(f"#{form} button").all():
            expect(button).to_be_disabled()
        expect(page.locator(f"#{form}")).to_have_attribute("data-off", "read-only")
    for note in page.locator(".actions-off").all():
        expect(note).to_be_visible()
        expect(note).to_contain_text("start it with console.allow.actions=true")
    snap(page, "read-only-topic")
    page.goto(f"{console_url}#/groups/ro-group")
    expect(page.locator("#group-state")).to_contain_text("Empty")
    expect(page.locator("#reset-offsets button")).to_be_disabled()
    expect(page.locator(".actions-off")).to_be_visible()
    page.goto(f"{console_url}#/security")
    expect(page.locator("#create-acl button")).to_be_disabled()
    # The server refuses them all the same.
    status, body = api(
        console_url, "/api/actions/alter-configs", {"topic": "ro-topic", "set": {"a": "1"}}
    )
    assert status == 403 and "console.allow.actions=true" in body["error"]


def test_an_unknown_topic_or_group_shows_only_the_banner_and_a_way_back(
    broker: BrokerProcess, console_url: str, page: Any
) -> None:
    for route, banner in (
        ("#/topics/console-nowhere", "topic 'console-nowhere' does not exist"),
        ("#/topics/console-nowhere/messages", "topic 'console-nowhere' does not exist"),
        ("#/groups/console-nobody", "group 'console-nobody' does not exist"),
        ("#/brokers/99", "broker '99' does not exist"),
    ):
        page.goto(f"{console_url}{route}")
        expect(page.locator("#error")).to_contain_text(banner)
        expect(page.locator("#view")).to_be_hidden()
        expect(page.locator("table:visible, form:visible")).to_have_count(0)
        expect(page.locator("#missing a").last).to_have_text("\u2039 back to the overview")
    snap(page, "unknown-broker")
    page.goto(f"{console_url}#/topics/console-late")
    expect(page.locator("#error")).to_contain_text("does not exist")
    page.locator("#missing a", has_text="overview").click()
    expect(page.locator("#topics")).to_be_visible()
    expect(page.locator("#error")).to_be_hidden()
    # A page left open on a topic that then appears shows it on its next refresh.
    page.goto(f"{console_url}#/topics/console-late")
    expect(page.locator("#view")).to_be_hidden()
    create(broker, "console-late", 2)
    expect(page.locator("#topic-name")).to_have_text("console-late", timeout=10_000)
    expect(page.locator("#view")).to_be_visible()
    expect(page.locator("#missing")).to_be_hidden()


def test_message_rows_are_one_line_and_open_on_a_click(
    broker: BrokerProcess, console_url: str, page: Any
) -> None:
    create(broker, "console-rows", 1)
    orders = [
        json.dumps({"order": i, "items": ["tea", "cake", "jam"], "address": {"city": "Prague"}})
        for i in range(60)
    ]
    produce(broker, "console-rows", [(0, b"k%d" % i, v.encode()) for i, v in enumerate(orders)])
    page.goto(f"{console_url}#/topics/console-rows/messages")
    rows = page.locator("#messages tbody tr")
    expect(rows).to_have_count(50)
    heights = page.eval_on_selector_all(
        "#messages tbody tr", "rows => rows.map(r => r.getBoundingClientRect().height)"
    )
    assert max(heights) < 32, heights  # one line each, pretty-printed JSON or not
    on_screen = page.eval_on_selector_all(
        "#messages tbody tr",
        "rows => rows.filter(r => r.getBoundingClientRect().bottom <= 1000).length",
    )
    assert on_screen >= 25  # (about 4 when JSON values were pretty-printed in full)
    first = page.locator('#messages tr[data-offset="59"]')
    expect(first.locator(".preview.json")).to_have_text(
        '{"order":59,"items":["tea","cake","jam"],"address":{"city":"Prague"}}'
    )
    expect(first.locator("pre.value.json")).to_be_hidden()
    first.click()
    expect(first).to_have_class("record open")
    expect(first.locator("pre.value.json")).to_be_visible()
    expect(first.locator("pre.value.json")).to_contain_text('"city": "Prague"')
    expect(first.locator(".size").last).to_have_text(f"{len(orders[59])} bytes · json")
    assert first.bounding_box()["height"] > 100
    snap(page, "message-row-open")
    first.locator("td").first.click()  # (a click inside the value selects, not closes)
    expect(first.locator("pre.value.json")).to_be_hidden()


def test_configs_show_overrides_first_highlighted_with_units(
    broker: BrokerProcess, console_url: str, page: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    overrides = {
        "retention.ms": "604800000",
        "segment.bytes": "1073741824",
        "retention.bytes": "-1",
    }
    create(broker, "console-units", 1, **overrides)
    status, topic = api(console_url, "/api/topics/console-units")
    assert status == 200
    by_name = {c["name"]: c for c in topic["configs"]}
    assert {n for n, c in by_name.items() if c["override"]} == set(overrides)
    assert by_name["retention.ms"]["human"] == "7 d"
    assert by_name["segment.bytes"]["human"] == "1 GiB"
    assert by_name["retention.bytes"]["human"] == "unlimited"
    assert by_name["flush.ms"] == {
        "name": "flush.ms",
        "value": "9223372036854775807",
        "source": "DEFAULT_CONFIG",
        "read_only": False,
        "override": False,
        "human": "unlimited",
    }
    described = cli_json(
        capsys, "topics", "describe", "console-units", "--bootstrap", broker.bootstrap
    )
    assert {c["name"]: c["value"] for c in described[0]["configs"]} == {
        n: c["value"] for n, c in by_name.items()
    }

    page.goto(f"{console_url}#/topics/console-units")
    rows = page.locator("#configs tbody tr")
    expect(rows.first).to_be_visible()
    names = page.eval_on_selector_all(
        "#configs tbody tr", "rows => rows.map(r => r.dataset.config)"
    )
    assert names[:3] == sorted(overrides)  # overrides first
    for i in range(3):
        expect(rows.nth(i)).to_have_class("override")
    expect(rows.nth(3)).not_to_have_class("override")
    shade = rows.first.locator("td").first.evaluate("td => getComputedStyle(td).backgroundColor")
    assert shade not in ("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)")
    expect(page.locator("#override-count")).to_have_text("(3 overridden)")
    for name, raw, human in (
        ("retention.ms", "604800000", "7 d"),
        ("segment.ms", "604800000", "7 d"),
        ("segment.bytes", "1073741824", "1 GiB"),
        ("flush.ms", "9223372036854775807", "unlimited"),
        ("retention.bytes", "-1", "unlimited"),
        ("max.message.bytes", "1048588", "1.0 MiB"),
    ):
        cell = page.locator(f'#configs tr[data-config="{name}"] td').nth(1)
        expect(cell.locator("code.raw")).to_have_text(raw)
        expect(cell.locator(".human")).to_have_text(human)
    expect(page.locator('#configs tr[data-config="cleanup.policy"] .human')).to_have_count(0)


def test_group_lag_shows_partitions_without_an_offset_and_says_they_are_not_counted(
    broker: BrokerProcess, console_url: str, page: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    create(broker, "console-half", 2)
    produce(broker, "console-half", [(i % 2, None, b"v%d" % i) for i in range(40)])
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "console-half-reader",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe(["console-half"])
    try:
        read = 0
        while read < 5:  # commit five records of partition 0, nothing of partition 1
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None and msg.partition() == 0:
                read += 1
                consumer.commit(message=msg, asynchronous=False)
        described = cli_json(
            capsys, "groups", "describe", "console-half-reader", "--bootstrap", broker.bootstrap
        )
        by_partition = {p["partition"]: p for p in described["partitions"]}
        assert by_partition[1]["committed_offset"] is None and by_partition[1]["lag"] is None
        lag = by_partition[0]["lag"]
        assert lag == 15
        status, group = api(console_url, "/api/groups/console-half-reader")
        assert status == 200
        assert (group["lag"], group["lag_uncounted"], group["no_offset"]) == (lag, 1, 1)

        page.goto(f"{console_url}#/groups/console-half-reader")
        cells = page.locator('#group-partitions tr[data-partition="console-half-1"] td')
        expect(cells.nth(2)).to_have_text("no offset")
        expect(cells.nth(4)).to_have_text("no offset")
        expect(page.locator("#group-state .lag")).to_have_text(f"total lag {lag}")
        expect(page.locator("#group-state .uncounted")).to_have_text(
            "not counted: 1 partition (1 with no committed offset)"
        )
        snap(page, "group-no-offset")
        page.goto(console_url)
        expect(page.locator('#groups tr[data-group="console-half-reader"] td').nth(3)).to_have_text(
            f"{lag} (1 uncounted)"
        )
    finally:
        consumer.close()


def test_the_records_shown_export_as_a_json_download(
    broker: BrokerProcess, console_url: str, page: Any, tmp_path: Path
) -> None:
    create(broker, "console-export", 1)
    produce(
        broker,
        "console-export",
        [(0, b"k%d" % i, b'{"n": %d}' % i, ("trace", b"t%d" % i)) for i in range(7)],
    )
    page.goto(f"{console_url}#/topics/console-export/messages?from=oldest&limit=5")
    expect(page.locator("#messages tbody tr")).to_have_count(5)
    with page.expect_download() as download:
        page.locator("#export").click()
    assert download.value.suggested_filename == "console-export-messages.json"
    target = tmp_path / "export.json"
    download.value.save_as(target)
    exported = json.loads(target.read_text())
    assert exported["topic"] == "console-export"
    assert exported["query"] == {"from": "oldest", "limit": "5"}
    assert [(r["offset"], r["key"]["text"], r["value"]["text"]) for r in exported["records"]] == [
        (i, f"k{i}", f'{{\n  "n": {i}\n}}') for i in range(5)
    ]
    assert exported["records"][0]["headers"] == [
        {"key": "trace", "value": {"encoding": "text", "text": "t0", "size": 2, "truncated": False}}
    ]


def test_the_security_page_lists_scram_users_and_quotas_and_says_acls_are_off(
    broker: BrokerProcess, console_url: str, page: Any
) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096)
    upsert = UserScramCredentialUpsertion("dora", info, b"dora-secret")
    admin.alter_user_scram_credentials([upsert])["dora"].result(10)
    quota = {
        "entries": [
            {
                "entity": [{"entity_type": "user", "entity_name": "dora"}],
                "ops": [{"key": "producer_byte_rate", "value": 1048576.0, "remove": False}],
            }
        ],
        "validate_only": False,
    }
    assert RawClient(broker.bootstrap).call(49, 1, quota)["entries"][0]["error_code"] == 0

    assert api(console_url, "/api/acls")[1]["enabled"] is False
    users = api(console_url, "/api/users")[1]
    assert users["users"] == [
        {"user": "dora", "mechanisms": [{"mechanism": "SCRAM-SHA-256", "iterations": 4096}]}
    ]
    quotas = api(console_url, "/api/quotas")[1]["quotas"]
    assert quotas == [{"entity": {"user": "dora"}, "values": {"producer_byte_rate": 1048576.0}}]

    page.goto(f"{console_url}#/security")
    expect(page.locator("#acls-note")).to_contain_text("No authorizer on this broker")
    expect(page.locator('#scram-users tr[data-user="dora"]')).to_contain_text(
        "SCRAM-SHA-256 (4,096)"
    )
    expect(page.locator('#quotas tr[data-entity="user dora"]')).to_contain_text(
        "producer_byte_rate=1048576"
    )
