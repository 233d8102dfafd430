"""The topic page shows both tiers of a tiered topic, in headless Chromium (issue 34).

One broker with tiering on (the filesystem store beside its data dir, tasks
every 200 ms) and its console.  What the page shows is checked against the
console's API and ``samsa topics describe`` (ListOffsets -4/-5 and the remote
metadata), and the copy lag against a copy quota that holds copies back.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import playwright.sync_api as playwright_api
import pytest
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)
from tests.console.conftest import api, cli_json, console_address, console_broker, snap
from tests.tiered.broker_tiering import BROKER_SETTINGS, create_topic, produce, wait_for

from samsa.testing import BrokerProcess

expect = playwright_api.expect
pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    settings = {**BROKER_SETTINGS, "rlmm.config.remote.log.metadata.topic.replication.factor": "1"}
    with console_broker(tmp_path_factory.mktemp("console-tiers") / "data", settings) as proc:
        yield proc


@pytest.fixture(scope="module")
def console_url(broker: BrokerProcess) -> str:
    return console_address(broker)


def shown_bytes(n: int) -> str:
    """A size as the page's ``bytes()`` shows it."""
    value, unit = float(n), 0
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    while value >= 1024 and unit < len(units) - 1:
        value /= 1024
        unit += 1
    return f"{value:.1f} {units[unit]}" if unit else f"{int(value)} B"


def _tiers(console_url: str, topic: str) -> dict[str, Any]:
    status, described = api(console_url, f"/api/topics/{topic}")
    assert status == 200, described
    return described


def _copy_quota(broker: BrokerProcess, value: str | None) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    op = AlterConfigOpType.SET if value is not None else AlterConfigOpType.DELETE
    resource = ConfigResource(
        ConfigResource.Type.BROKER,
        "1",
        incremental_configs=[
            ConfigEntry(
                "remote.log.manager.copy.max.bytes.per.second",
                value or "",
                incremental_operation=op,
            )
        ],
    )
    admin.incremental_alter_configs([resource])[resource].result(10)


def test_the_topic_page_shows_both_tiers_and_the_copy_lag(
    broker: BrokerProcess, console_url: str, page: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = "console-tiered"
    create_topic(broker.bootstrap, topic)
    produce(broker.bootstrap, topic, 400)

    def tiered() -> dict[str, Any] | None:
        described = _tiers(console_url, topic)
        row = described["partitions"][0]["tiers"]
        done = row and row["tiered_end_offset"] == row["local_log_start_offset"] - 1 > 0
        # The totals are summed at most once a second: wait until they caught up too.
        caught_up = done and described["tiers"]["remote_size_bytes"] == row["remote_size_bytes"]
        return described if caught_up and row["copy_lag_segments"] == 0 else None

    described = wait_for(tiered, 60, f"{topic} tiered up to its active segment")
    row = described["partitions"][0]["tiers"]
    totals = described["tiers"]
    assert row["ready"] and row["log_start_offset"] == 0 and row["remote_segments"] > 0
    assert totals["remote_size_bytes"] == row["remote_size_bytes"] > 0
    assert totals["partitions"] == 1 and totals["not_ready"] == 0
    cli = cli_json(capsys, "topics", "describe", topic, "--bootstrap", broker.bootstrap)[0]
    [p] = cli["partitions"]
    assert (p["local_log_start_offset"], p["tiered_end_offset"]) == (
        row["local_log_start_offset"],
        row["tiered_end_offset"],
    )
    assert p["remote_size_bytes"] == row["remote_size_bytes"]
    assert p["size_bytes"] == row["local_size_bytes"]

    page.goto(f"{console_url}#/topics/{topic}")
    expect(page.locator("#tiers-card")).to_be_visible()
    cells = page.locator('#tiers tr[data-partition="0"] td')
    expect(cells.nth(1)).to_have_text(str(row["local_log_start_offset"]))
    expect(cells.nth(2)).to_have_text(shown_bytes(row["local_size_bytes"]))
    expect(cells.nth(3)).to_have_text("0")
    expect(cells.nth(4)).to_have_text(str(row["tiered_end_offset"]))
    expect(cells.nth(5)).to_have_text(shown_bytes(row["remote_size_bytes"]))
    expect(cells.nth(6)).to_have_text(str(row["remote_segments"]))
    expect(cells.nth(7)).to_have_text("0 segments (0 B)")
    totals_line = page.locator("#tier-totals")
    expect(totals_line).to_contain_text(f"remote {shown_bytes(totals['remote_size_bytes'])}")
    expect(totals_line).to_contain_text("1 of 1 partitions hosted here")
    snap(page, "topic-tiers")

    # Copies held back by a copy quota of one byte a second: the lag grows
    # and shows, the local segments stay; without the quota it is caught up.
    _copy_quota(broker, "1")
    try:
        produce(broker.bootstrap, topic, 400, start=400)
        lagging = wait_for(
            lambda: (
                (r := _tiers(console_url, topic)["partitions"][0]["tiers"])
                and r["copy_lag_segments"] >= 2
                and r
            ),
            60,
            "a copy lag of two segments or more",
        )
        expect(cells.nth(7)).not_to_have_text("0 segments (0 B)")
        expect(totals_line).to_contain_text("copy lag")
        snap(page, "topic-tiers-lagging")
        assert lagging["local_log_start_offset"] == row["local_log_start_offset"]
    finally:
        _copy_quota(broker, None)
    wait_for(tiered, 60, "the copies to catch up once the quota is gone")
    expect(cells.nth(7)).to_have_text("0 segments (0 B)")


def test_a_topic_without_remote_storage_has_no_tier_section(
    broker: BrokerProcess, console_url: str, page: Any
) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("console-local", 1, 1)])["console-local"].result(10)
    described = _tiers(console_url, "console-local")
    assert described["tiers"] is None and described["partitions"][0]["tiers"] is None
    page.goto(f"{console_url}#/topics/console-local")
    expect(page.locator("#partitions tbody tr")).to_have_count(1)
    expect(page.locator("#tiers-card")).to_be_hidden()
