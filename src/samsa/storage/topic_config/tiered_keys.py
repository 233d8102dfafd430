"""Tiered storage's topic configs (KIP-405, KIP-950): local retention, remote copy and delete.

A family of its own beside Kafka's log keys (``keys``): a topic sets them to
tier its closed segments to the remote store, and ``remote_rules`` checks them
together (local retention within the total, copy disabled only with equal
retentions, remote data deleted on disable).  ``remote.copy.lag.*`` are
accepted and not used.  Part of ``LOG_CONFIG_KEYS``, where every caller finds
them.
"""

from __future__ import annotations

from samsa.storage.topic_config.types import ConfigKey, ConfigType, at_least, topic_key

_T = ConfigType
TIERED_STORAGE_KEYS: tuple[ConfigKey, ...] = (
    topic_key(
        "local.retention.bytes",
        _T.LONG,
        -2,
        "tiered storage: local size retention (-2 = retention.bytes)",
        at_least(-2),
        "log.local.retention.bytes",
    ),
    topic_key(
        "local.retention.ms",
        _T.LONG,
        -2,
        "tiered storage: local time retention (-2 = retention.ms)",
        at_least(-2),
        "log.local.retention.ms",
    ),
    topic_key(
        "remote.storage.enable",
        _T.BOOLEAN,
        False,
        "tiered storage: copy closed segments to the remote store, serve old reads from it",
    ),
    topic_key(
        "remote.log.copy.disable",
        _T.BOOLEAN,
        False,
        "tiered storage: stop copying; remote data stays readable until it expires",
    ),
    topic_key(
        "remote.log.delete.on.disable",
        _T.BOOLEAN,
        False,
        "tiered storage: when remote.storage.enable turns false, delete the remote data",
    ),
    topic_key(
        "remote.copy.lag.bytes",
        _T.LONG,
        -1,
        "tiered storage: local bytes before a copy to remote storage (accepted, not used)",
        at_least(-1),
        "log.remote.copy.lag.bytes",
    ),
    topic_key(
        "remote.copy.lag.ms",
        _T.LONG,
        0,
        "tiered storage: age before a copy to remote storage (accepted, not used)",
        at_least(-1),
        "log.remote.copy.lag.ms",
    ),
)
