"""The console's actions on a broker started with ``console.allow.actions=true``.

Each action is done in the page (or, for refusals, also through the API) and
its effect checked the way an operator would: with the ``samsa`` CLI.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from confluent_kafka import Consumer, TopicPartition
from tests.console.conftest import api, cli_json, console_address, console_broker

from samsa.testing import BrokerProcess

expect = playwright_api.expect


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    data = tmp_path_factory.mktemp("console-actions") / "data"
    with console_broker(data, {"console.allow.actions": "true"}) as proc:
        yield proc


@pytest.fixture(scope="module")
def console_url(broker: BrokerProcess) -> str:
    return console_address(broker)


def describe(capsys: pytest.CaptureFixture[str], broker: BrokerProcess, topic: str) -> Any:
    return cli_json(capsys, "topics", "describe", topic, "--bootstrap", broker.bootstrap)[0]


def test_create_topic_add_partitions_produce_and_delete_records(
    broker: BrokerProcess, console_url: str, page: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    page.goto(console_url)
    expect(page.locator("#mode")).to_have_text("actions enabled")
    page.locator("details.actions summary").click()
    form = page.locator("#create-topic")
    form.locator("input[name=name]").fill("console-made")
    form.locator("input[name=partitions]").fill("2")
    form.locator("button").click()
    expect(page.locator("#topic-name")).to_have_text("console-made")
    assert len(describe(capsys, broker, "console-made")["partitions"]) == 2

    page.locator("#add-partitions input[name=count]").fill("5")
    page.locator("#add-partitions button").click()
    expect(page.locator("#action-result")).to_contain_text("done")
    expect(page.locator("#partitions tbody tr")).to_have_count(5)
    assert len(describe(capsys, broker, "console-made")["partitions"]) == 5

    produce = page.locator("#produce-record")
    for i in range(3):
        produce.locator("input[name=partition]").fill("4")
        produce.locator("input[name=key]").fill(f"test-key-{i}")
        produce.locator("textarea[name=value]").fill(f'{{"n": {i}}}')
        produce.locator("button").click()
        expect(page.locator("#action-result")).to_contain_text(f"offset={i}")
    ends = {
        p["partition"]: p["log_end_offset"]
        for p in describe(capsys, broker, "console-made")["partitions"]
    }
    assert ends == {0: 0, 1: 0, 2: 0, 3: 0, 4: 3}
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "console-check"})
    try:
        consumer.assign([TopicPartition("console-made", 4, 0)])
        got: list[Any] = []
        while len(got) < 3:
            got += [m for m in consumer.consume(3, 1.0) if m.error() is None]
        assert [(m.key(), m.value()) for m in got] == [
            (b"test-key-%d" % i, b'{"n": %d}' % i) for i in range(3)
        ]
    finally:
        consumer.close()

    delete = page.locator("#delete-records")
    delete.locator("input[name=partition]").fill("4")
    delete.locator("input[name=offset]").fill("2")
    delete.locator("button").click()
    expect(page.locator("#action-result")).to_contain_text("low_watermark=2")
    starts = {
        p["partition"]: p["log_start_offset"]
        for p in describe(capsys, broker, "console-made")["partitions"]
    }
    assert starts[4] == 2
    expect(page.locator('#partitions tr[data-partition="4"] td').nth(4)).to_have_text("2")

    delete.locator("input[name=offset]").fill("99")
    delete.locator("button").click()
    expect(page.locator("#action-result")).to_contain_text("OFFSET_OUT_OF_RANGE")


def test_reset_offsets_only_of_an_empty_group(
    broker: BrokerProcess, console_url: str, page: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _ = api(
        console_url, "/api/actions/create-topic", {"name": "console-reset", "partitions": 1}
    )
    assert status == 200
    for i in range(10):
        status, _ = api(
            console_url, "/api/actions/produce", {"topic": "console-reset", "value": f"v{i}"}
        )
        assert status == 200
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "console-resettable",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe(["console-reset"])
    try:
        read = 0
        while read < 10:
            read += len([m for m in consumer.consume(10, 1.0) if m.error() is None])
        consumer.commit(asynchronous=False)
        # While the consumer is a member, the reset is refused.
        status, body = api(
            console_url,
            "/api/actions/reset-offsets",
            {"group": "console-resettable", "topic": "console-reset", "to": "earliest"},
        )
        assert status == 409
        assert "only be reset while the group is empty" in body["error"]
    finally:
        consumer.close()

    page.goto(f"{console_url}#/groups/console-resettable")
    expect(page.locator("#group-state")).to_contain_text("Empty")
    form = page.locator("#reset-offsets")
    form.locator("input[name=topic]").fill("console-reset")
    form.locator("select[name=to]").select_option("offset")
    form.locator("input[name=offset]").fill("4")
    form.locator("button").click()
    expect(page.locator("#action-result")).to_contain_text("done")
    expect(
        page.locator('#group-partitions tr[data-partition="console-reset-0"] td').nth(4)
    ).to_have_text("6")
    described = cli_json(
        capsys, "groups", "describe", "console-resettable", "--bootstrap", broker.bootstrap
    )
    assert [(p["committed_offset"], p["lag"]) for p in described["partitions"]] == [(4, 6)]


def test_bad_actions_get_a_clear_message_and_status(
    broker: BrokerProcess, console_url: str
) -> None:
    assert api(console_url, "/api/actions/create-topic", {"name": "console-twice"})[0] == 200
    for action, body, status, message in (
        ("create-topic", {"name": "console-twice"}, 409, "TOPIC_ALREADY_EXISTS"),
        ("create-topic", {"name": "bad/name"}, 400, "INVALID_TOPIC_EXCEPTION"),
        ("create-topic", {"partitions": 3}, 400, "name is required"),
        ("add-partitions", {"topic": "console-twice", "count": 1}, 400, "INVALID_PARTITIONS"),
        ("add-partitions", {"topic": "nope", "count": 3}, 404, "topic 'nope' does not exist"),
        (
            "produce",
            {"topic": "console-twice", "partition": 7, "value": "x"},
            404,
            "UNKNOWN_TOPIC_OR_PARTITION",
        ),
        ("produce", {"topic": "console-twice", "value": 5}, 400, "must be strings"),
        (
            "delete-records",
            {"topic": "console-twice", "partition": "0", "offset": 1},
            400,
            "partition must be an integer",
        ),
        (
            "reset-offsets",
            {"group": "nobody", "topic": "console-twice", "to": "earliest"},
            404,
            "group 'nobody' does not exist",
        ),
        ("no-such-action", {}, 404, "no action 'no-such-action'"),
    ):
        got, answer = api(console_url, f"/api/actions/{action}", body)
        assert (got, message in answer["error"]) == (status, True), (action, body, answer)
