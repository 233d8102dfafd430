"""The broker's log as an operator reads it: levels, components, JSON lines, start-up."""

from __future__ import annotations

import json
from pathlib import Path

from samsa.testing import BrokerProcess


def json_lines(broker: BrokerProcess) -> list[dict[str, object]]:
    return [json.loads(line) for line in broker.log_lines if line.startswith("{")]


def test_json_log_has_a_startup_line_and_reports_a_new_data_dir(tmp_path: Path) -> None:
    broker = BrokerProcess(
        tmp_path / "data", {"num.partitions": "3"}, args=["--log-format", "json"]
    )
    broker.start()
    try:
        assert broker.wait_for_log('"message": "node 1 of cluster')
    finally:
        assert broker.stop() == 0
    lines = json_lines(broker)
    assert lines and all({"ts", "level", "logger", "message"} <= set(line) for line in lines)
    assert {line["logger"] for line in lines} >= {"samsa.server", "samsa.storage"}
    startup = next(str(line["message"]) for line in lines if "starting" in str(line["message"]))
    assert startup.startswith("samsa ")
    assert "listeners=127.0.0.1:0" in startup and f"data dir={broker.data_dir}" in startup
    assert "num.partitions=3" in startup
    messages = [str(line["message"]) for line in lines]
    assert any(m.startswith("new data directory") for m in messages)
    assert not any("unclean" in m for m in messages)

    broker.log_lines.clear()
    broker.start()
    try:
        assert broker.wait_for_log("clean shutdown")
        assert not any("new data directory" in line for line in broker.log_lines)
    finally:
        broker.stop()


def test_log_level_warning_hides_info_lines(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data", args=["--log-level", "warning"])
    broker.start()
    assert broker.stop() == 0
    assert not any(" INFO " in line for line in broker.log_lines), broker.log_lines
    assert any(line.startswith("samsa broker listening on") for line in broker.log_lines)
