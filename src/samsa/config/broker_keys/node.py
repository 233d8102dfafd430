"""Broker keys of the node itself: identity, roles, listeners, data dirs, and the
topics it creates on its own (auto-creation defaults, the largest batch accepted)."""

from __future__ import annotations

from samsa.config.values import ConfigKey, parse_bool

NODE_KEYS: list[ConfigKey] = [
    ConfigKey("node.id", int, 1, "This broker's id; also the controller id on a single node."),
    ConfigKey("cluster.id", str, "", "Cluster id for a new data dir (default: random)."),
    ConfigKey("process.roles", str, "broker,controller", "Roles of this node (single node: both)."),
    ConfigKey("broker.rack", str, "", "Rack of this broker, for rack-aware placement."),
    ConfigKey("log4j.level", str, "INFO", "Log level of the broker's logger."),
    # Listeners.
    ConfigKey(
        "listeners", str, "PLAINTEXT://127.0.0.1:9092", "Address to bind (port 0 = any free port)."
    ),
    ConfigKey(
        "advertised.listeners",
        str,
        "",
        "Address clients are told to connect to (default: the bound one).",
    ),
    ConfigKey(
        "listener.security.protocol.map",
        str,
        "",
        "NAME:PROTOCOL pairs (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL); a listener named "
        "after a protocol needs no entry.",
    ),
    ConfigKey(
        "controller.listener.names",
        str,
        "",
        "Listeners that serve the controller quorum (empty: every listener serves it).",
    ),
    ConfigKey("inter.broker.listener.name", str, "", "Listener brokers use to reach each other."),
    # Data dirs.
    ConfigKey("log.dirs", str, "./samsa-data", "Data dirs, comma-separated (one per disk)."),
    ConfigKey("log.dir", str, "", "Alias of log.dirs used when log.dirs is unset."),
    ConfigKey(
        "metadata.log.dir",
        str,
        "",
        "Dir of the metadata log and the node's meta.properties (default: the first log dir).",
    ),
    # Topics this node creates and accepts.
    ConfigKey("num.partitions", int, 1, "Partitions of auto-created topics."),
    ConfigKey("default.replication.factor", int, 1, "Replication factor of auto-created topics."),
    ConfigKey(
        "auto.create.topics.enable", parse_bool, True, "Create unknown topics on Metadata/Produce."
    ),
    ConfigKey("delete.topic.enable", parse_bool, True, "Allow DeleteTopics."),
    ConfigKey(
        "message.max.bytes",
        int,
        1048588,
        "Largest record batch accepted (topic default max.message.bytes).",
    ),
]
