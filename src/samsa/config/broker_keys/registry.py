"""Broker keys of the schema registry (``samsa.registry.node``, docs/schema-registry.md):
its REST listener, login and TLS, its topic, its primary's election."""

from __future__ import annotations

from samsa.config.broker_keys.endpoints import endpoint_ssl_keys
from samsa.config.values import ConfigKey, parse_bool, parse_list

REGISTRY_KEYS: list[ConfigKey] = [
    ConfigKey(
        "registry.listen",
        str,
        "",
        "HOST:PORT of the schema registry's REST API, Confluent's (empty: off).",
    ),
    ConfigKey(
        "registry.advertised.url",
        str,
        "",
        "URL the other registry nodes forward writes to when this node is the primary "
        "(default: http(s)://the bind host, or the broker's advertised host for a wildcard "
        "bind, and the bound port); each node's must differ.",
    ),
    ConfigKey(
        "registry.login.listener",
        str,
        "",
        "A SASL listener whose users the registry takes by HTTP Basic authentication; "
        "required with an authorizer or SASL-only client listeners (empty: no login).",
    ),
    ConfigKey(
        "registry.allowed.hosts",
        parse_list,
        [],
        "Host header names the registry answers besides its bind address and advertised "
        "URL (and localhost for a loopback bind); * answers any.",
    ),
    *endpoint_ssl_keys("registry"),
    ConfigKey(
        "registry.ssl.truststore.location",
        str,
        "",
        "PEM file of the CAs that sign the other nodes' registry certificates, for "
        "forwarding writes over HTTPS (empty: the system's CAs).",
    ),
    ConfigKey(
        "registry.topic",
        str,
        "_schemas",
        "The compacted one-partition topic the registry keeps its state in (Confluent's "
        "kafkastore.topic).",
    ),
    ConfigKey(
        "registry.topic.replication.factor",
        int,
        3,
        "Replication factor of the registry's topic when it is created (at most the brokers up).",
    ),
    ConfigKey(
        "registry.group.id",
        str,
        "schema-registry",
        "The group the registry nodes elect their primary in; its writer's transactional id "
        "is this with -primary.",
    ),
    ConfigKey(
        "registry.leader.eligibility",
        parse_bool,
        True,
        "Whether this node may be the registry's primary (false: it forwards every write).",
    ),
    ConfigKey(
        "registry.group.session.timeout.ms",
        int,
        10000,
        "How long a silent primary keeps the role before another node is elected.",
    ),
    ConfigKey(
        "registry.timeout.ms",
        int,
        30000,
        "How long a write waits for the store, the election or the primary before it is "
        "answered 50002/50003/50004.",
    ),
]
