"""The console's new actions (issue 38) on a broker with ``console.allow.actions=true``:
editing a topic's configs (IncrementalAlterConfigs), producing with headers,
purging a topic (DeleteRecords to every high watermark) and deleting it
(DeleteTopics), the last two only once the topic's name is typed.

Each is done in Chromium and checked the way an operator would, with the
``samsa`` CLI and confluent-kafka; each is logged with who did it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource
from tests.console.conftest import api, cli_json, console_address, console_broker, snap
from tests.console.test_console_browser import create, produce

from samsa.testing import BrokerProcess

expect = playwright_api.expect


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    data = tmp_path_factory.mktemp("console-admin") / "data"
    with console_broker(data, {"console.allow.actions": "true"}) as proc:
        yield proc


@pytest.fixture(scope="module")
def console_url(broker: BrokerProcess) -> str:
    return console_address(broker)


def topic_config(broker: BrokerProcess, topic: str, name: str) -> tuple[str, str]:
    """(value, source) of one topic config, as confluent-kafka's describe_configs reads it."""
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    entry = admin.describe_configs([resource])[resource].result(10)[name]
    return entry.value, ConfigSource(entry.source).name


def logged(broker: BrokerProcess, pattern: str) -> bool:
    return any(re.search(pattern, line) for line in broker.log_lines)


def test_a_topics_configs_are_edited_in_the_page(
    broker: BrokerProcess, console_url: str, page: Any
) -> None:
    create(broker, "console-tuned", 1)
    page.goto(f"{console_url}#/topics/console-tuned")
    page.locator('#configs tr[data-config="retention.ms"]').click()  # a row fills the form
    form = page.locator("#alter-config")
    expect(form.locator("input[name=name]")).to_have_value("retention.ms")
    expect(form.locator("input[name=value]")).to_have_value("604800000")
    form.locator("input[name=value]").fill("86400000")
    form.locator("button[value=set]").click()
    expect(page.locator("#config-result")).to_contain_text("done")
    row = page.locator('#configs tr[data-config="retention.ms"]')
    expect(row.locator(".human")).to_have_text("1 d")
    expect(row).to_have_class("override")
    expect(page.locator("#configs tbody tr").first).to_have_attribute("data-config", "retention.ms")
    assert topic_config(broker, "console-tuned", "retention.ms") == (
        "86400000",
        "DYNAMIC_TOPIC_CONFIG",
    )
    assert logged(
        broker, r"console action alter-configs topic='console-tuned' set=\['retention.ms'\] by "
    )
    snap(page, "config-edited")

    form.locator("input[name=value]").fill("soon")
    form.locator("button[value=set]").click()
    expect(page.locator("#config-result")).to_contain_text("INVALID_CONFIG")
    form.locator("button[value=delete]").click()
    expect(row.locator(".source")).to_have_text("DEFAULT_CONFIG")
    expect(row.locator(".human")).to_have_text("7 d")
    assert topic_config(broker, "console-tuned", "retention.ms")[0] == "604800000"

    status, body = api(
        console_url,
        "/api/actions/alter-configs",
        {"topic": "console-tuned", "set": {"cleanup.policy": "compact"}, "delete": ["segment.ms"]},
    )
    assert status == 200 and body["set"] == {"cleanup.policy": "compact"}
    assert topic_config(broker, "console-tuned", "cleanup.policy")[0] == "compact"
    for bad, message in (
        ({"topic": "console-tuned"}, "nothing to change"),
        ({"topic": "console-tuned", "set": ["a"]}, "set must be an object"),
        ({"topic": "nowhere", "set": {"a": "1"}}, "topic 'nowhere' does not exist"),
    ):
        got, answer = api(console_url, "/api/actions/alter-configs", bad)
        assert got in (400, 404) and message in answer["error"], answer


def test_the_produce_form_sends_headers(broker: BrokerProcess, console_url: str, page: Any) -> None:
    create(broker, "console-headers", 1)
    page.goto(f"{console_url}#/topics/console-headers")
    form = page.locator("#produce-record")
    form.locator("input[name=key]").fill("k")
    form.locator("textarea[name=value]").fill("v")
    form.locator("textarea[name=headers]").fill("trace=abc\ntrace=def=ghi\nflag")
    form.locator("button").click()
    expect(page.locator("#action-result")).to_contain_text("offset=0")
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "console-h"})
    try:
        consumer.assign([TopicPartition("console-headers", 0, 0)])
        msg = None
        while msg is None or msg.error() is not None:
            msg = consumer.poll(1.0)
        assert msg.headers() == [("trace", b"abc"), ("trace", b"def=ghi"), ("flag", None)]
    finally:
        consumer.close()
    page.goto(f"{console_url}#/topics/console-headers/messages")
    expect(page.locator("#messages tbody tr .preview").last).to_have_text(
        "trace=abc, trace=def=ghi, flag=null"
    )


def test_purging_a_topic_wants_its_name_typed_and_empties_every_partition(
    broker: BrokerProcess, console_url: str, page: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    create(broker, "console-purged", 3)
    produce(broker, "console-purged", [(i % 3, None, b"v%d" % i) for i in range(30)])
    status, body = api(console_url, "/api/actions/purge-topic", {"topic": "console-purged"})
    assert status == 400 and "confirm set to the topic's name" in body["error"]

    page.goto(f"{console_url}#/topics/console-purged")
    form = page.locator("#purge-topic")
    button = form.locator("button")
    expect(button).to_be_disabled()
    form.locator("input[name=confirm]").fill("console-purge")
    expect(button).to_be_disabled()
    form.locator("input[name=confirm]").fill("console-purged")
    expect(button).to_be_enabled()
    button.click()
    expect(page.locator("#danger-result")).to_contain_text("done")
    expect(page.locator("#danger-result")).to_contain_text('"low_watermark":10')
    expect(form.locator("input[name=confirm]")).to_have_value("")
    expect(button).to_be_disabled()
    described = cli_json(
        capsys, "topics", "describe", "console-purged", "--bootstrap", broker.bootstrap
    )[0]
    assert [(p["log_start_offset"], p["log_end_offset"]) for p in described["partitions"]] == [
        (10, 10)
    ] * 3
    expect(page.locator('#partitions tr[data-partition="2"] td').nth(4)).to_have_text("10")
    assert logged(broker, r"console action purge-topic topic='console-purged' by User:ANONYMOUS")

    create(broker, "console-compacted", 1, **{"cleanup.policy": "compact"})
    status, body = api(
        console_url,
        "/api/actions/purge-topic",
        {"topic": "console-compacted", "confirm": "console-compacted"},
    )
    assert status == 400 and "POLICY_VIOLATION" in body["error"], body


def test_deleting_a_topic_wants_its_name_typed_and_returns_to_the_overview(
    broker: BrokerProcess, console_url: str, page: Any
) -> None:
    create(broker, "console-doomed", 2)
    create(broker, "console-kept", 1)
    page.goto(f"{console_url}#/topics/console-doomed")
    form = page.locator("#delete-topic")
    expect(form.locator("button")).to_be_disabled()
    form.locator("input[name=confirm]").fill("console-doomed")
    snap(page, "delete-topic-confirmed")
    form.locator("button").click()
    expect(page.locator("body[data-page=overview]")).to_have_count(1)
    expect(page.locator('#topics tr[data-topic="console-doomed"]')).to_have_count(0)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    assert "console-doomed" not in admin.list_topics(timeout=10).topics
    assert logged(
        broker,
        r"console action delete-topic topic='console-doomed' by User:ANONYMOUS "
        r"from 127\.0\.0\.1:\d+: done \{'deleted': 'console-doomed'\}",
    )
    for body, status, message in (
        ({"topic": "console-doomed", "confirm": "console-doomed"}, 404, "does not exist"),
        ({"topic": "console-kept", "confirm": "console"}, 400, "confirm set to the topic"),
        ({"topic": "console-kept"}, 400, "confirm set to the topic"),
    ):
        got, answer = api(console_url, "/api/actions/delete-topic", body)
        assert (got, message in answer["error"]) == (status, True), answer
