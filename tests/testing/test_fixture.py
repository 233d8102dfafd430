"""The public pytest fixture and the `samsa broker` command's user-facing behaviour."""

from __future__ import annotations

import socket
from pathlib import Path

from samsa.cli.commands.broker import resolve_config
from samsa.cli.main import build_parser, main
from samsa.testing import BrokerProcess


def test_samsa_broker_fixture_serves_on_loopback(samsa_broker: BrokerProcess) -> None:
    host, port = samsa_broker.bootstrap.rsplit(":", 1)
    assert host == "127.0.0.1" and int(port) > 0
    with socket.create_connection((host, int(port)), timeout=5):
        pass
    assert (samsa_broker.data_dir / "meta.properties").exists()


def test_bad_config_is_a_readable_error(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["broker", "--data-dir", str(tmp_path), "--set", "no.such.key=1"]) == 2
    assert "unknown broker config key 'no.such.key'" in capsys.readouterr().err
    assert main(["broker", "--data-dir", str(tmp_path), "--set", "num.partitions=many"]) == 2
    assert "invalid value 'many' for num.partitions" in capsys.readouterr().err
    assert main(["broker", "--config", str(tmp_path / "missing.properties")]) == 2
    assert "cannot read config file" in capsys.readouterr().err


def test_precedence_flags_over_set_over_config(tmp_path: Path) -> None:
    props = tmp_path / "server.properties"
    props.write_text(
        "# Kafka-style file\nnum.partitions=3\nlisteners=PLAINTEXT://127.0.0.1:1\n"
        "log.dirs=/from/file\nlog.retention.hours=2\n"
    )
    args = build_parser().parse_args(
        [
            "broker",
            "--config",
            str(props),
            "--set",
            "num.partitions=4",
            "--set",
            "listeners=127.0.0.1:2",
            "--listen",
            "127.0.0.1:0",
        ]
    )
    config = resolve_config(args)
    assert config["num.partitions"] == 4  # --set beats --config
    assert config["listeners"] == "127.0.0.1:0"  # a flag beats --set
    assert config.data_dir == Path("/from/file")  # --config beats the default
    assert config.retention_ms == 2 * 3_600_000
    assert config["auto.create.topics.enable"] is True  # Kafka's default
