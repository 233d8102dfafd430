"""Kafka's rules for tiered-storage topic configs (``LogConfig.validateTopicLogConfigValues``)."""

from __future__ import annotations

import pytest

from samsa.errors import ConfigError
from samsa.storage.topic_config.log_config import LogConfig
from samsa.storage.topic_config.remote_rules import validate_remote_storage


def check(new: dict[str, str], existing: dict[str, str] | None = None, *, on: bool = True) -> None:
    validate_remote_storage(LogConfig.from_dict(new), existing or {}, system_enabled=on)


def test_valid_tiered_configs() -> None:
    check({"remote.storage.enable": "true"})
    check({"remote.storage.enable": "true", "local.retention.ms": "1000", "retention.ms": "1000"})
    check({"remote.storage.enable": "true", "local.retention.bytes": "10", "retention.bytes": "-1"})
    check({"remote.storage.enable": "true", "local.retention.ms": "-1", "retention.ms": "-1"})
    check({"remote.storage.enable": "true", "remote.log.copy.disable": "true"})
    check({"remote.storage.enable": "false"}, {"remote.storage.enable": "false"}, on=False)
    check({"remote.storage.enable": "false", "remote.log.delete.on.disable": "true"},
          {"remote.storage.enable": "true"})  # fmt: skip


@pytest.mark.parametrize(
    ("new", "existing", "on", "message"),
    [
        ({"remote.storage.enable": "true"}, {}, False, "Tiered Storage functionality is disabled"),
        (
            {"remote.storage.enable": "true", "cleanup.policy": "compact,delete"},
            {},
            True,
            "only supports topics with cleanup.policy=delete",
        ),
        (
            {"remote.storage.enable": "true", "local.retention.ms": "2000", "retention.ms": "1000"},
            {},
            True,
            "Invalid value 2000 for configuration local.retention.ms: Value must not be more "
            "than retention.ms property value: 1000",
        ),
        (
            {
                "remote.storage.enable": "true",
                "local.retention.bytes": "-1",
                "retention.bytes": "5",
            },
            {},
            True,
            "Value must not be -1 as retention.bytes value is set as 5.",
        ),
        (
            {
                "remote.storage.enable": "true",
                "remote.log.copy.disable": "true",
                "local.retention.ms": "10",
            },
            {},
            True,
            "`local.retention.ms` and `retention.ms` must be set to the identical value",
        ),
        (
            {"remote.storage.enable": "false"},
            {"remote.storage.enable": "true"},
            True,
            "It is invalid to disable remote storage without deleting remote data",
        ),
    ],
)
def test_refused_as_kafka_refuses(
    new: dict[str, str], existing: dict[str, str], on: bool, message: str
) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(".", r"\.")):
        check(new, existing, on=on)
