"""Kafka's ``SCRAM-SHA-256=[name=...,password=...]`` syntax, as --add-scram takes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from samsa.cli.commands.broker import resolve_config
from samsa.cli.main import build_parser, main
from samsa.errors import ConfigError
from samsa.security.scram_spec import ScramSpec, parse_scram_specs


def test_several_specs_with_and_without_iterations() -> None:
    text = (
        "SCRAM-SHA-256=[name=alice,password=alice-secret] "
        'scram-sha-512=[name="bob",password=b0b,iterations=8192];'
    )
    assert parse_scram_specs(text, "k") == [
        ScramSpec("SCRAM-SHA-256", "alice", "alice-secret", 4096),
        ScramSpec("SCRAM-SHA-512", "bob", "b0b", 8192),
    ]
    assert "b0b" not in repr(parse_scram_specs(text, "k"))


def test_kafka_configs_form_takes_the_user_from_elsewhere() -> None:
    specs = parse_scram_specs(
        "SCRAM-SHA-512=[password=pw],SCRAM-SHA-256=[password=pw]", "k", user="u"
    )
    assert [(s.mechanism, s.name) for s in specs] == [
        ("SCRAM-SHA-512", "u"),
        ("SCRAM-SHA-256", "u"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("SCRAM-SHA-1=[name=a,password=b]", "unknown SCRAM mechanism SCRAM-SHA-1"),
        ("SCRAM-SHA-256=[password=b]", "needs name=USER"),
        ("SCRAM-SHA-256=[name=a]", "needs password"),
        ("SCRAM-SHA-256=[name=a,password=b,iterations=10]", "between 4096 and 16384"),
        ("SCRAM-SHA-256=[name=a,password=b,salt=c]", "unexpected 'salt=c'"),
        ("alice:secret", "expected MECHANISM=[name=...,password=...]"),
    ],
)
def test_mistakes_name_the_setting(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=r"^scram\.bootstrap\.credentials: ") as refused:
        parse_scram_specs(text, "scram.bootstrap.credentials")
    assert message in str(refused.value)


def test_broker_add_scram_flag_adds_to_the_setting_and_refuses_mistakes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = build_parser().parse_args(
        [
            "broker",
            "--set",
            "scram.bootstrap.credentials=SCRAM-SHA-256=[name=a,password=b]",
            "--add-scram",
            "SCRAM-SHA-512=[name=c,password=d]",
        ]
    )
    config = resolve_config(args)
    specs = parse_scram_specs(str(config["scram.bootstrap.credentials"]), "k")
    assert [(s.mechanism, s.name) for s in specs] == [
        ("SCRAM-SHA-256", "a"),
        ("SCRAM-SHA-512", "c"),
    ]
    assert main(["broker", "--data-dir", str(tmp_path), "--add-scram", "alice:secret"]) == 2
    assert "--add-scram: expected MECHANISM=[name=...,password=...]" in capsys.readouterr().err
