"""Kafka's rules for a topic's tiered-storage configs, checked where topic configs are.

Kafka checks them in ``LogConfig.validateTopicLogConfigValues`` on the
controller, against the topic's whole effective config (broker defaults plus
overrides) and, for a change, its configs before it:

* ``remote.storage.enable=true`` needs ``remote.log.storage.system.enable`` on
  the controller, and ``cleanup.policy=delete`` (a compacted log cannot be
  tiered: its segments would change after they were copied);
* ``local.retention.bytes`` / ``local.retention.ms`` are -2 (the total
  retention), or at most ``retention.bytes`` / ``retention.ms`` when those
  bound the log (and then not -1: local data can not outlive the whole);
* with ``remote.log.copy.disable=true`` local and total retention must be the
  same (nothing more moves to the remote tier, KIP-950);
* turning ``remote.storage.enable`` off on a topic that had it needs
  ``remote.log.delete.on.disable=true``: the remote data is deleted, never
  silently orphaned (KIP-950).

The messages are Kafka's, so tools and people see the same answer.
"""

from __future__ import annotations

from collections.abc import Mapping

from samsa.errors import ConfigError
from samsa.storage.topic_config.log_config import LogConfig

__all__ = ["validate_remote_storage"]


def _invalid(name: str, value: int, message: str) -> ConfigError:
    """Kafka's ``ConfigException(name, value, message)`` text."""
    return ConfigError(f"Invalid value {value} for configuration {name}: {message}")


def validate_remote_storage(
    config: LogConfig, existing: Mapping[str, str], *, system_enabled: bool
) -> None:
    """Raise ConfigError unless ``config`` (the topic's effective config after
    the change) follows the rules above; ``existing`` is the topic's overrides
    before it (empty for a new topic)."""
    if not config.remote_storage_enable:
        was_enabled = existing.get("remote.storage.enable", "false").strip().lower() == "true"
        if was_enabled and not config.remote_log_delete_on_disable:
            raise ConfigError(
                "It is invalid to disable remote storage without deleting remote data. "
                "If you want to keep the remote data and turn to read only, please set "
                "`remote.storage.enable=true,remote.log.copy.disable=true`. If you want to "
                "disable remote storage and delete all remote data, please set "
                "`remote.storage.enable=false,remote.log.delete.on.disable=true`."
            )
        return
    if not system_enabled:
        raise ConfigError(
            "Tiered Storage functionality is disabled in the broker. "
            "Topic cannot be configured with remote log storage."
        )
    if config.cleanup_policy and config.cleanup_policy != ("delete",):
        raise ConfigError(
            "Remote log storage only supports topics with cleanup.policy=delete or "
            "cleanup.policy being an empty list."
        )
    _check_local(
        "local.retention.bytes",
        config.local_retention_bytes,
        "retention.bytes",
        config.retention_bytes,
    )
    _check_local(
        "local.retention.ms", config.local_retention_ms, "retention.ms", config.retention_ms
    )
    if config.remote_log_copy_disable:
        for local_name, local, total_name, total in (
            (
                "local.retention.bytes",
                config.local_retention_bytes,
                "retention.bytes",
                config.retention_bytes,
            ),
            ("local.retention.ms", config.local_retention_ms, "retention.ms", config.retention_ms),
        ):
            if local != -2 and local != total:
                raise ConfigError(
                    f"When `remote.log.copy.disable` is set to true, the `{local_name}` and "
                    f"`{total_name}` must be set to the identical value because there will be "
                    "no more logs copied to the remote storage."
                )


def _check_local(local_name: str, local: int, total_name: str, total: int) -> None:
    """Kafka's ``validateRemoteStorageRetentionSize`` / ``...Time``."""
    if total == -1 or local == -2 or (total_name == "retention.bytes" and total < -1):
        return
    if local == -1:
        raise _invalid(
            local_name, local, f"Value must not be -1 as {total_name} value is set as {total}."
        )
    if local > total:
        raise _invalid(
            local_name, local, f"Value must not be more than {total_name} property value: {total}"
        )
