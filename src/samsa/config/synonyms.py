"""Which broker settings stand for which topic configs, and which may change at runtime.

Kafka names a topic config and the broker setting that gives its default
differently (``retention.ms`` / ``log.retention.ms``), and some defaults may be
given in several units (``log.retention.ms``, ``.minutes``, ``.hours``: the
first one set wins).  ``TOPIC_CONFIG_SYNONYMS`` is that table, in Kafka's order
(``ServerTopicConfigSynonyms``); ``topic_defaults`` applies it to a broker's
settings.  DescribeConfigs reports the same chains as a config's synonyms.

``DYNAMIC_BROKER_CONFIGS`` are the broker settings IncrementalAlterConfigs may
change without a restart (Kafka's ``DynamicBrokerConfig.AllDynamicConfigs``,
limited to the ones Samsa has).  Only the first name of each topic synonym
chain is dynamic, as in Kafka: ``log.retention.ms`` is, ``log.retention.hours``
is not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from samsa.storage.topic_config.log_config import (
    LOG_CONFIG_BY_NAME,
    LOG_CONFIG_KEYS,
    format_value,
    parse_value,
)

HOUR_MS = 3_600_000
MINUTE_MS = 60_000


@dataclass(frozen=True, slots=True)
class Synonym:
    """A broker setting that gives a topic config's default, ``factor`` times its value."""

    name: str
    factor: int = 1

    def to_topic_value(self, topic_config: str, raw: str) -> str:
        """The broker value converted to the topic config's unit, normalized."""
        key = LOG_CONFIG_BY_NAME[topic_config]
        if self.factor == 1:
            return format_value(key, parse_value(replace(key, name=self.name), raw))
        value = parse_value(replace(key, name=self.name, validator=None), raw)
        return str(-1 if value < 0 else value * self.factor)


_SEVERAL_UNITS: dict[str, tuple[Synonym, ...]] = {
    "segment.ms": (Synonym("log.roll.ms"), Synonym("log.roll.hours", HOUR_MS)),
    "segment.jitter.ms": (
        Synonym("log.roll.jitter.ms"),
        Synonym("log.roll.jitter.hours", HOUR_MS),
    ),
    "flush.ms": (Synonym("log.flush.interval.ms"), Synonym("log.flush.scheduler.interval.ms")),
    "retention.ms": (
        Synonym("log.retention.ms"),
        Synonym("log.retention.minutes", MINUTE_MS),
        Synonym("log.retention.hours", HOUR_MS),
    ),
}
TOPIC_CONFIG_SYNONYMS: dict[str, tuple[Synonym, ...]] = {
    key.name: _SEVERAL_UNITS.get(key.name, (Synonym(key.synonym),))
    for key in LOG_CONFIG_KEYS
    if key.synonym is not None
}
_BROKER_SYNONYM_CHAINS: dict[str, tuple[str, ...]] = {
    synonym.name: tuple(s.name for s in chain)
    for chain in _SEVERAL_UNITS.values()
    for synonym in chain
}

# Broker settings without a default in Kafka (their value comes from a synonym).
NO_STATIC_DEFAULT = frozenset(
    {
        "log.retention.ms",
        "log.retention.minutes",
        "log.roll.ms",
        "log.roll.jitter.ms",
        "log.flush.interval.ms",
    }
)

# Samsa documents -1 for "leave flushing to the OS", Kafka leaves it unset.
NEGATIVE_MEANS_UNSET = frozenset({"log.flush.interval.ms"})

# From LogCleaner.RECONFIGURABLE_CONFIGS, SocketServer's connection limits and
# the producer-state settings, the ones Samsa has (no thread pools to resize yet).
_OTHER_DYNAMIC = frozenset(
    {
        "log.cleaner.backoff.ms",
        "max.connections.per.ip",
        "producer.id.expiration.ms",
        "max.connections",
        "max.connections.per.ip.overrides",
        # Set and cleared by kafka-reassign-partitions --throttle around a move;
        # kept and described, but Samsa does not throttle replication.
        "leader.replication.throttled.rate",
        "follower.replication.throttled.rate",
        # ... and --replica-alter-log-dirs-throttle: moves between log dirs obey it.
        "replica.alter.log.dirs.io.max.bytes.per.second",
        # Tiered storage: Kafka's DynamicRemoteLogConfig, the ones Samsa has.
        "remote.log.index.file.cache.total.size.bytes",
        "remote.fetch.max.wait.ms",
        "remote.log.manager.copy.max.bytes.per.second",
        "remote.log.manager.fetch.max.bytes.per.second",
        "remote.list.offsets.request.timeout.ms",
        "remote.log.reader.threads",
        "remote.log.manager.orphan.grace.ms",
    }
)

# Kafka's PASSWORD-typed settings: DescribeConfigs answers them with a null
# value and is_sensitive, here and in every synonym, so a secret set in
# server.properties never leaves the broker.
_SENSITIVE = (
    "sasl.jaas.config",
    "ssl.keystore.password",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
    "ssl.key.password",
    "ssl.truststore.password",
    "ssl.truststore.certificates",
    "delegation.token.secret.key",
    "delegation.token.master.key",
)


# The remote store's credentials (``samsa.tiered.store.settings.SECRET_SETTINGS``):
# never described, never logged.
_SENSITIVE_NAMES = frozenset(
    {
        "rsm.config.storage.aws.access.key.id",
        "rsm.config.storage.aws.secret.access.key",
        "rsm.config.storage.aws.session.token",
    }
)


def is_sensitive(name: str) -> bool:
    """Also per listener (``listener.name.l.ssl.key.password``) and per mechanism
    (``listener.name.l.scram-sha-512.sasl.jaas.config``)."""
    return name in _SENSITIVE_NAMES or any(
        name == key or name.endswith("." + key) for key in _SENSITIVE
    )


DYNAMIC_BROKER_CONFIGS = (
    frozenset(chain[0].name for chain in TOPIC_CONFIG_SYNONYMS.values()) | _OTHER_DYNAMIC
)


RELOADABLE_LISTENER_SSL = frozenset(
    {
        "ssl.keystore.type",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.keystore.certificate.chain",
        "ssl.keystore.key",
        "ssl.key.password",
    }
)
"""A TLS listener's keystore settings, dynamic only under ``listener.name.<l>.``
(Kafka's way to replace a certificate without a restart)."""


def listener_ssl_setting(name: str) -> tuple[str, str] | None:
    """``listener.name.<l>.ssl.keystore.location`` -> (L, ssl.keystore.location)."""
    if not name.startswith("listener.name."):
        return None
    listener, _, key = name[len("listener.name.") :].partition(".")
    if not listener or key not in RELOADABLE_LISTENER_SSL:
        return None
    return listener.upper(), key


def broker_config_synonyms(name: str) -> tuple[str, ...]:
    """The names that set the same broker setting, most precise first
    (Kafka's ``DynamicBrokerConfig.brokerConfigSynonyms``)."""
    return _BROKER_SYNONYM_CHAINS.get(name, (name,))


def topic_defaults(broker_props: Mapping[str, str]) -> dict[str, str]:
    """Every topic config's default given the broker settings that were set
    (``server.properties`` and dynamic ones): the first synonym set wins, else
    Kafka's default.  ConfigError names a broker setting with a bad value."""
    defaults = {}
    for key in LOG_CONFIG_KEYS:
        value = format_value(key, key.default)
        for synonym in TOPIC_CONFIG_SYNONYMS.get(key.name, ()):
            raw = broker_props.get(synonym.name)
            if synonym.name in NEGATIVE_MEANS_UNSET and raw is not None and raw.startswith("-"):
                continue
            if raw is not None:
                value = synonym.to_topic_value(key.name, raw)
                break
        defaults[key.name] = value
    return defaults


def format_broker_value(value: object) -> str | None:
    """A broker setting's value the way Kafka writes it (``true``, not ``True``)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)
