"""Searching a whole topic, a topic's consumers and this broker's configs (issue 38),
over the JSON API and in Chromium, on one read-only broker.

The haystack: 3,000 records in each of two partitions, one value holding the
needle far behind the newest page (partition 0, offset 3) and one header
holding it near the end (partition 1, offset 2900), so the old page filter
(``messages?q=``, the newest 50) finds nothing while the search finds both.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from tests.console.conftest import api, snap
from tests.console.test_console_browser import create, produce

from samsa.testing import BrokerProcess

expect = playwright_api.expect
PER_PARTITION = 3000


@pytest.fixture(scope="module")
def haystack(broker: BrokerProcess) -> str:
    create(broker, "haystack", 2)
    records: list[tuple[Any, ...]] = []
    for offset in range(PER_PARTITION):
        for partition in (0, 1):
            value = b"hay %d-%d" % (partition, offset)
            if (partition, offset) == (0, 3):
                value = b"a NEEDLE in the value"
            headers = [("trace", b"needle-in-a-header")] if (partition, offset) == (1, 2900) else []
            records.append((partition, b"k%d" % offset, value, *headers))
    records.append((0, b"binary", b"\xff\xfe\x00\x01"))
    produce(broker, "haystack", records)
    return "haystack"


def search(url: str, query: str) -> dict[str, Any]:
    status, answer = api(url, f"/api/topics/haystack/search?{query}")
    assert status == 200, answer
    return dict(answer)


def found(answer: dict[str, Any]) -> list[tuple[int, int]]:
    return [(r["partition"], r["offset"]) for r in answer["records"]]


def test_the_search_reads_the_whole_topic_in_slices_and_says_where_it_got(
    console_url: str, haystack: str
) -> None:
    # The page filter sees only the newest page: nothing there.
    page = api(console_url, "/api/topics/haystack/messages?q=needle")[1]
    assert (page["scanned"], page["matched"]) == (50, 0)

    whole = search(console_url, "q=needle")
    assert sorted(found(whole)) == [(0, 3), (1, 2900)]
    total = 2 * PER_PARTITION + 1
    assert (whole["scanned"], whole["done"], whole["stopped"], whole["continue"]) == (
        total,
        True,
        "end",
        None,
    )
    assert whole["direction"] == "backward"
    assert (whole["positions"], whole["remaining"], whole["partitions_done"]) == ([], 0, 2)

    # Bounded: 1,000 records (500 a partition), then where each stopped.
    first = search(console_url, "q=needle&scan_limit=1000")
    assert found(first) == [(1, 2900)]
    assert (first["scanned"], first["done"], first["stopped"]) == (1000, False, "scan_limit")
    assert first["continue"] == "0:2501,1:2500"
    assert [(p["position"], p["remaining"]) for p in first["positions"]] == [
        (2501, 2501),
        (2500, 2500),
    ]
    # ... and on from there until the end: every record scanned once.
    scanned, matches, positions = first["scanned"], found(first), first["continue"]
    while positions:
        more = search(console_url, f"q=needle&scan_limit=1000&positions={positions}")
        scanned += more["scanned"]
        matches += found(more)
        positions = more["continue"]
    assert (scanned, sorted(matches)) == (total, [(0, 3), (1, 2900)])

    # Forward from the oldest, stopping at the first match, continuing after it.
    one = search(console_url, "q=needle&from=oldest&limit=1")
    assert (found(one), one["stopped"]) == ([(0, 3)], "limit")
    # (partition 1, not reached, is not listed: a next call starts it from the oldest)
    assert [(p["partition"], p["position"]) for p in one["positions"]] == [(0, 4)]
    assert (one["continue"], one["partitions_open"]) == ("0:4", 2)
    rest = search(console_url, f"q=needle&from=oldest&positions={one['continue']}")
    assert found(rest) == [(1, 2900)]
    # Finished partitions are named as such, and stay finished.
    tail = search(console_url, "q=hay&from=offset&offset=2990&scan_limit=20")
    assert (tail["scanned"], tail["continue"], tail["partitions_done"]) == (20, "1:2999,0:done", 1)
    last = search(console_url, f"q=hay&from=offset&offset=2990&positions={tail['continue']}")
    assert (found(last), last["scanned"], last["done"]) == ([(1, 2999)], 1, True)
    # From an offset, in one partition; bytes spelled in hex; any case.
    assert found(search(console_url, "q=Needle&partition=1&from=offset&offset=2991")) == []
    assert found(search(console_url, "q=ff%20fe&partition=0")) == [(0, PER_PARTITION)]

    for query, status, message in (
        ("", 400, "q is required"),
        ("q=x&positions=zero", 400, "positions must be partition:offset"),
        ("q=x&positions=7:0", 400, "not searched here: [7]"),
        ("q=x&partition=7", 404, "has no partition 7"),
        ("q=x&scan_limit=0", 400, "scan_limit must be between 1 and 100000"),
        ("q=x&from=offset", 400, "needs an offset"),
    ):
        got, answer = api(console_url, f"/api/topics/haystack/search?{query}")
        assert (got, message in answer["error"]) == (status, True), (query, answer)
    assert api(console_url, "/api/topics/nowhere/search?q=x")[0] == 404


def test_the_page_searches_with_progress_and_continues_from_where_it_stopped(
    console_url: str, haystack: str, page: Any
) -> None:
    page.goto(f"{console_url}#/topics/haystack/messages")
    expect(page.locator("#messages tbody tr")).to_have_count(50)
    page.locator("#browse-q").fill("needle")
    expect(page.locator("#browse-scan-limit")).to_be_visible()
    page.locator("#browse-scan-limit").fill("2000")
    page.locator("#browse button").click()
    progress = page.locator("#search-progress")
    expect(progress).to_have_attribute("data-state", "done")
    expect(progress).to_contain_text("1 found in 2,000 records scanned")
    expect(progress).to_contain_text("stopped at the scan limit (2,000 records)")
    expect(progress).to_contain_text(
        "reached partition 0 at offset 2,001, partition 1 at offset 2,000"
    )
    expect(page.locator('#messages tr[data-partition="1"][data-offset="2900"]')).to_contain_text(
        "trace=needle-in-a-header"
    )
    snap(page, "search-stopped-at-the-limit")
    # Continuing adds to what was found, 2,000 records a time, up to the end.
    for scanned in ("4,000", "6,000", "6,001"):
        page.locator("#search-progress button", has_text="Continue searching").click()
        expect(progress).to_have_attribute("data-state", "done")
        expect(progress).to_contain_text(f"in {scanned} records scanned")
    expect(progress).to_contain_text("2 found in 6,001 records scanned")
    expect(progress).to_contain_text("searched to the end")
    expect(page.locator("#messages tbody tr")).to_have_count(2)
    expect(page.locator('#messages tr[data-partition="0"][data-offset="3"]')).to_contain_text(
        "a NEEDLE in the value"
    )
    # A link to the position reached opens a search from there.
    page.goto(f"{console_url}#/topics/haystack/messages?q=needle&scan_limit=2000")
    expect(progress).to_have_attribute("data-state", "done")
    page.locator("#search-progress a", has_text="link to this position").click()
    expect(progress).to_have_attribute("data-state", "done")
    expect(progress).to_contain_text("0 found in 2,000 records scanned")
    expect(page.locator("#browse-status")).to_contain_text("0 records match")

    page.goto(f"{console_url}#/topics/haystack/messages?q=needle")
    expect(progress).to_have_attribute("data-state", "done")
    expect(progress).to_contain_text("2 found in 6,001 records scanned")
    expect(progress).to_contain_text("searched to the end")
    expect(page.locator("#messages tbody tr")).to_have_count(2)
    expect(page.locator("#browse-status")).to_contain_text("2 records match “needle”")
    assert page.locator("#search-progress progress").evaluate("p => p.value === p.max")


@pytest.fixture
def readers(broker: BrokerProcess, haystack: str) -> Iterator[None]:
    """``haystack-committed``: an empty group with an offset on partition 0;
    ``haystack-live``: a member assigned both partitions, nothing committed;
    ``elsewhere``: a group of another topic."""
    create(broker, "not-haystack", 1)
    for group, offsets in (
        ("haystack-committed", [("haystack", 0, 1000)]),
        ("elsewhere", [("not-haystack", 0, 0)]),
    ):
        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
        consumer.commit(offsets=[TopicPartition(*o) for o in offsets], asynchronous=False)
        consumer.close()
    live = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "haystack-live",
            "enable.auto.commit": False,
        }
    )
    live.subscribe(["haystack"])
    try:
        while not live.assignment():
            live.poll(0.2)
        yield None
    finally:
        live.close()


def test_a_topics_consumers_are_the_groups_that_read_it(
    console_url: str, readers: None, page: Any
) -> None:
    status, answer = api(console_url, "/api/topics/haystack/consumers")
    assert status == 200
    rows = {g["group"]: g for g in answer["groups"]}
    assert set(rows) == {"haystack-committed", "haystack-live"}
    assert rows["haystack-committed"] == {
        "group": "haystack-committed",
        "state": "Empty",
        "members": 0,
        "partitions": 1,
        "committed_partitions": 1,
        "lag": PER_PARTITION + 1 - 1000,
        "lag_uncounted": 0,
        "no_offset": 0,
    }
    live = rows["haystack-live"]
    assert (live["members"], live["partitions"], live["no_offset"], live["lag"]) == (1, 2, 2, 0)
    assert api(console_url, "/api/topics/nowhere/consumers")[0] == 404

    page.goto(f"{console_url}#/topics/haystack")
    expect(page.locator("#consumer-count")).to_have_text("(2)")
    committed = page.locator('#consumers tr[data-group="haystack-committed"] td')
    expect(committed.nth(4)).to_have_text("2,001")
    expect(page.locator('#consumers tr[data-group="haystack-live"] td').nth(4)).to_have_text(
        "0 (2 without offset)"
    )
    committed.first.locator("a").click()
    expect(page.locator("#group-name")).to_have_text("haystack-committed")


def test_this_brokers_configs_show_overrides_first_with_units(
    broker: BrokerProcess, console_url: str, page: Any
) -> None:
    node = api(console_url, "/api/brokers")[1]["node_id"]
    status, answer = api(console_url, f"/api/brokers/{node}/configs")
    assert status == 200 and answer["node_id"] == node
    configs = {c["name"]: c for c in answer["configs"]}
    assert configs["console.listen"]["override"] and configs["console.listen"]["source"] == (
        "STATIC_BROKER_CONFIG"
    )
    assert (configs["log.retention.hours"]["value"], configs["log.retention.hours"]["human"]) == (
        "168",
        "7 d",
    )
    assert configs["log.segment.bytes"]["human"] == "1 GiB"
    assert configs["console.ssl.key.password"]["value"] in ("******", None)
    status, refused = api(console_url, "/api/brokers/99/configs")
    assert status == 404 and "does not exist" in refused["error"]

    page.goto(f"{console_url}#/cluster")
    page.locator("#broker-configs-link").click()
    expect(page.locator("#broker-id")).to_have_text(str(node))
    first = page.locator("#broker-configs tbody tr").first
    expect(first).to_have_class("override")
    row = page.locator('#broker-configs tr[data-config="log.retention.hours"] td').nth(1)
    expect(row.locator(".human")).to_have_text("7 d")
    page.locator("#config-filter").fill("log.retention")
    expect(page.locator("#broker-configs tbody tr")).to_have_count(
        sum(1 for name in configs if "log.retention" in name)
    )


def test_the_search_never_shows_deleted_records_and_steps_over_transaction_markers(
    broker: BrokerProcess, console_url: str
) -> None:
    create(broker, "haystack-trimmed", 1)
    producer = Producer(
        {"bootstrap.servers": broker.bootstrap, "transactional.id": "haystack-t", "linger.ms": 50}
    )
    producer.init_transactions(30)
    for first in (0, 10):  # two transactions of ten records, each ended by a marker
        producer.begin_transaction()
        for i in range(first, first + 10):
            producer.produce("haystack-trimmed", value=b"straw %d" % i, partition=0)
        producer.commit_transaction(30)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    trimmed = admin.delete_records([TopicPartition("haystack-trimmed", 0, 5)])
    trimmed[next(iter(trimmed))].result(30)  # records before offset 5 are gone

    def straws(query: str) -> list[int]:
        status, answer = api(console_url, f"/api/topics/haystack-trimmed/search?{query}")
        assert status == 200 and answer["done"], answer
        return [r["offset"] for r in answer["records"]]

    # Offsets 5-9, the marker at 10, then 11-20, and the last marker at 21.
    kept = [*range(5, 10), *range(11, 21)]
    assert straws("q=straw") == kept[::-1]
    assert straws("q=straw&from=oldest") == kept
    assert straws("q=straw%2013") == [14]  # the value after the first marker moved up one
    assert straws("q=straw%202&from=offset&offset=0") == []  # offset 2 was deleted
