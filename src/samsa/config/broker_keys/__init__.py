"""The broker's key table (Kafka's names, types, defaults, docs), one module per area.

To add a key, append a ``ConfigKey`` to the list of its area's module.  A later
subsystem with keys of its own (tiered storage, a schema registry, ...) gets its
own module here exporting a ``<AREA>_KEYS`` list, added to ``AREAS`` below.  A
name declared twice stops the import, so two areas cannot both claim a key.
The order of ``KEYS`` is the order of ``AREAS`` and of each list; nothing a user
sees depends on it (DescribeConfigs sorts by name).
"""

from __future__ import annotations

from collections.abc import Iterable

from samsa.config.broker_keys.connections import CONNECTION_KEYS
from samsa.config.broker_keys.endpoints import ENDPOINT_KEYS
from samsa.config.broker_keys.groups import GROUP_KEYS
from samsa.config.broker_keys.log import LOG_KEYS
from samsa.config.broker_keys.node import NODE_KEYS
from samsa.config.broker_keys.registry import REGISTRY_KEYS
from samsa.config.broker_keys.replication import REPLICATION_KEYS
from samsa.config.broker_keys.security import SECURITY_KEYS
from samsa.config.broker_keys.tiered import TIERED_KEYS
from samsa.config.broker_keys.transactions import TRANSACTION_KEYS
from samsa.config.values import ConfigKey

AREAS: tuple[list[ConfigKey], ...] = (
    NODE_KEYS,
    CONNECTION_KEYS,
    LOG_KEYS,
    REPLICATION_KEYS,
    GROUP_KEYS,
    TRANSACTION_KEYS,
    SECURITY_KEYS,
    ENDPOINT_KEYS,
    # Keys of later subsystems: one list per subsystem, after the ones above.
    REGISTRY_KEYS,
    TIERED_KEYS,
)


def _by_name(areas: Iterable[list[ConfigKey]]) -> dict[str, ConfigKey]:
    keys: dict[str, ConfigKey] = {}
    for area in areas:
        for key in area:
            if key.name in keys:
                raise ValueError(f"broker config key {key.name!r} is declared twice")
            keys[key.name] = key
    return keys


KEYS: dict[str, ConfigKey] = _by_name(AREAS)
