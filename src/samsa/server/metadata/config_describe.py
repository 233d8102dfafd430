"""DescribeConfigs rows for topics, brokers and groups, as Kafka's ``ConfigHelper`` writes them.

A topic lists every topic config.  A config's synonyms are, in precedence
order, the topic's own override (TOPIC_CONFIG) and then the broker settings that
give its default, each at every level where it is set (dynamic per broker,
dynamic cluster default, static, built-in default); the config's source is the
first synonym's, DEFAULT_CONFIG when there is none.  Like Kafka, the broker
synonyms are listed from the chain's first name on (``dropWhile``), so a
default given only by ``log.retention.hours`` shows as DEFAULT_CONFIG on the
topic, exactly as Kafka shows it.

A broker (resource name = its id) lists every broker setting, read-only unless
it is dynamic; the cluster default (resource name ``""``) lists only the
dynamic defaults that are set.  Types are Kafka 4.4's (broker_config_types);
settings Kafka 4.x removed, and topic configs it no longer lists, show only
where they are set.  A group lists every group config Samsa serves, its own
value (GROUP_CONFIG) over the broker setting it overrides.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from samsa.config.broker_keys import KEYS
from samsa.config.group_configs import GROUP_CONFIG_KEYS
from samsa.config.synonyms import (
    DYNAMIC_BROKER_CONFIGS,
    TOPIC_CONFIG_SYNONYMS,
    broker_config_synonyms,
    is_sensitive,
)
from samsa.errors import ConfigError
from samsa.server.metadata.broker_config_types import (
    KAFKA_BROKER_CONFIG_TYPES,
    KAFKA_NULL_DEFAULTS,
    PASSWORD,
    REMOVED_IN_KAFKA_4,
    TYPE_IDS,
)
from samsa.server.metadata.dynamic_broker_config import (
    SOURCE_DEFAULT,
    SOURCE_DYNAMIC_DEFAULT_BROKER,
    SOURCE_TOPIC_CONFIG,
    DynamicBrokerConfig,
)
from samsa.storage.topic_config.log_config import (
    DEPRECATED_KEYS,
    LOG_CONFIG_KEYS,
    ConfigType,
    LogConfig,
)

Synonym = dict[str, Any]

_TYPE_IDS = TYPE_IDS
# Broker settings Kafka declares as lists: written comma-joined without spaces.
KAFKA_LIST_SETTINGS = frozenset(
    {
        "listeners",
        "advertised.listeners",
        "log.dirs",
        "log.dir",
        "process.roles",
        "controller.listener.names",
        "controller.quorum.voters",
        "controller.quorum.bootstrap.servers",
        "listener.security.protocol.map",
        "log.cleanup.policy",
    }
)
# Kafka's LONG-typed settings whose names do not end in .ms.
_LONG_SETTINGS = frozenset(
    {
        "remote.log.manager.copy.max.bytes.per.second",
        "remote.log.manager.fetch.max.bytes.per.second",
        "remote.log.index.file.cache.total.size.bytes",
    }
)
_TOPIC_KEY_OF_BROKER = {chain[0].name: topic for topic, chain in TOPIC_CONFIG_SYNONYMS.items()}


def _row(
    name: str,
    value: str | None,
    synonyms: list[Synonym],
    *,
    read_only: bool,
    config_type: int,
    doc: str | None,
    include_synonyms: bool,
) -> dict[str, Any]:
    sensitive = is_sensitive(name)
    if sensitive:
        value = None
        synonyms = [{**synonym, "value": None} for synonym in synonyms]
    return {
        "name": name,
        "value": value,
        "read_only": read_only,
        "config_source": synonyms[0]["source"] if synonyms else SOURCE_DEFAULT,
        "is_sensitive": sensitive,
        "synonyms": synonyms if include_synonyms else [],
        "config_type": config_type,
        "documentation": doc,
    }


def broker_synonyms(dynamic: DynamicBrokerConfig, name: str) -> list[Synonym]:
    """Kafka's ``configSynonyms``: every level, then every name of the chain,
    from the first entry named ``name`` on."""
    names = broker_config_synonyms(name)
    found = [
        {"name": synonym, "value": values[synonym], "source": source}
        for values, source in dynamic.layers()
        for synonym in names
        if synonym in values
    ]
    for index, synonym in enumerate(found):
        if synonym["name"] == name:
            return found[index:]
    return []


def topic_rows(
    dynamic: DynamicBrokerConfig,
    overrides: dict[str, str],
    keys: Iterable[str] | None,
    *,
    include_synonyms: bool,
    include_documentation: bool,
) -> list[dict[str, Any]]:
    """Every topic config of a topic with these overrides."""
    wanted = None if keys is None else set(keys)
    effective = dynamic.topic_defaults()
    effective.update(overrides)
    try:
        values = {entry.name: entry.value for entry in LogConfig.from_dict(effective).describe()}
    except ConfigError:  # an override stored before a rule tightened: show it as stored
        values = effective
    rows = []
    for key in sorted(LOG_CONFIG_KEYS, key=lambda k: k.name):
        if wanted is not None and key.name not in wanted:
            continue
        if key.name in DEPRECATED_KEYS and key.name not in overrides:
            continue  # Kafka 4.x lists them no more
        value = values[key.name]
        chain = TOPIC_CONFIG_SYNONYMS.get(key.name)
        synonyms = broker_synonyms(dynamic, chain[0].name) if chain else []
        if key.name in overrides:
            synonyms.insert(0, {"name": key.name, "value": value, "source": SOURCE_TOPIC_CONFIG})
        rows.append(
            _row(
                key.name,
                value,
                synonyms,
                read_only=False,
                config_type=_TYPE_IDS[key.type],
                doc=key.doc if include_documentation else None,
                include_synonyms=include_synonyms,
            )
        )
    return rows


def _as_kafka_list(name: str, value: str | None) -> str | None:
    if value is None or name not in KAFKA_LIST_SETTINGS:
        return value
    return ",".join(item.strip() for item in value.split(",") if item.strip())


def _broker_type(name: str) -> int:
    kafka_type = KAFKA_BROKER_CONFIG_TYPES.get(name)
    if kafka_type is not None:
        return _TYPE_IDS[kafka_type]
    if name in KAFKA_LIST_SETTINGS:
        return _TYPE_IDS[ConfigType.LIST]
    topic = _TOPIC_KEY_OF_BROKER.get(name)
    if topic is not None:
        return _TYPE_IDS[next(k.type for k in LOG_CONFIG_KEYS if k.name == topic)]
    key = KEYS[name]
    kind = key.type
    if kind not in (int, float, str) and not isinstance(key.default, bool):
        kind = type(key.default)  # a validating parser: its default says the type
    if kind is int:
        long = name.endswith(".ms") or name in _LONG_SETTINGS
        return _TYPE_IDS[ConfigType.LONG if long else ConfigType.INT]
    if kind is float:
        return _TYPE_IDS[ConfigType.DOUBLE]
    if kind is str:
        return _TYPE_IDS[ConfigType.STRING]
    return _TYPE_IDS[ConfigType.BOOLEAN]


def broker_rows(
    dynamic: DynamicBrokerConfig,
    keys: Iterable[str] | None,
    *,
    per_broker: bool,
    include_synonyms: bool,
    include_documentation: bool,
) -> list[dict[str, Any]]:
    """This broker's settings (``per_broker``) or the cluster-wide dynamic defaults."""
    wanted = None if keys is None else set(keys)
    defaults = dynamic.dynamic_default()
    names = sorted(KEYS) if per_broker else sorted(defaults)
    rows = []
    for name in names:
        if wanted is not None and name not in wanted:
            continue
        synonyms = broker_synonyms(dynamic, name)
        if not per_broker:
            synonyms = [s for s in synonyms if s["source"] == SOURCE_DYNAMIC_DEFAULT_BROKER]
        value = _as_kafka_list(name, dynamic.value_of(name) if per_broker else defaults[name])
        if _unset_in_kafka(name, value, synonyms):
            # Kafka's default is null here: no value, and no default synonym.
            value = None
            synonyms = [s for s in synonyms if s["source"] != SOURCE_DEFAULT]
        if name in REMOVED_IN_KAFKA_4 and _only_default(synonyms):
            continue
        rows.append(
            _row(
                name,
                value,
                synonyms,
                read_only=name not in DYNAMIC_BROKER_CONFIGS,
                config_type=_broker_type(name),
                doc=KEYS[name].doc if include_documentation else None,
                include_synonyms=include_synonyms,
            )
        )
    return rows


SOURCE_GROUP_CONFIG = 8
"""DescribeConfigs' ConfigSource of a group's own config."""


def group_rows(
    dynamic: DynamicBrokerConfig,
    overrides: dict[str, str],
    keys: Iterable[str] | None,
    *,
    include_synonyms: bool,
    include_documentation: bool,
) -> list[dict[str, Any]]:
    """Every group config of a group with these overrides."""
    wanted = None if keys is None else set(keys)
    rows = []
    for name, key in sorted(GROUP_CONFIG_KEYS.items()):
        if wanted is not None and name not in wanted:
            continue
        synonyms = broker_synonyms(dynamic, key.broker_key)
        value = overrides.get(name)
        if value is not None:
            synonyms.insert(0, {"name": name, "value": value, "source": SOURCE_GROUP_CONFIG})
        else:
            value = str(dynamic.value_of(key.broker_key))
        rows.append(
            _row(
                name,
                value,
                synonyms,
                read_only=False,
                config_type=_TYPE_IDS[ConfigType.INT],
                doc=KEYS[key.broker_key].doc if include_documentation else None,
                include_synonyms=include_synonyms,
            )
        )
    return rows


def _unset_in_kafka(name: str, value: str | None, synonyms: list[Synonym]) -> bool:
    """A setting whose Kafka default is null, still at Samsa's empty default."""
    null_default = name in KAFKA_NULL_DEFAULTS or KAFKA_BROKER_CONFIG_TYPES.get(name) == PASSWORD
    return null_default and not value and _only_default(synonyms)


def _only_default(synonyms: list[Synonym]) -> bool:
    return all(s["source"] == SOURCE_DEFAULT for s in synonyms)
