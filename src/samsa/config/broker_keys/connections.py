"""Broker keys of connections and quotas: request and connection limits, fetch
sessions, the client quota windows and the replication throttles."""

from __future__ import annotations

from samsa.config.values import INT32_MAX, INT64_MAX, ConfigKey

CONNECTION_KEYS: list[ConfigKey] = [
    # Requests and connections.
    ConfigKey("socket.request.max.bytes", int, 104857600, "Largest request frame accepted."),
    ConfigKey("connections.max.idle.ms", int, 600000, "Idle connections are closed after this."),
    ConfigKey(
        "max.connections.per.ip",
        int,
        INT32_MAX,
        "Connections one client address may hold open (more are closed at once).",
    ),
    ConfigKey(
        "max.connections.per.ip.overrides",
        str,
        "",
        "host:count pairs overriding max.connections.per.ip for those addresses.",
    ),
    ConfigKey(
        "max.connections",
        int,
        INT32_MAX,
        "Connections the broker holds open (new ones wait for a slot); per listener too, "
        "as listener.name.<l>.max.connections.",
    ),
    ConfigKey(
        "max.incremental.fetch.session.cache.slots",
        int,
        1000,
        "Fetch sessions (KIP-227) a broker keeps; 0 turns them off.",
    ),
    # Client quotas.
    ConfigKey("quota.window.num", int, 11, "Samples a client quota's rate is measured over."),
    ConfigKey(
        "quota.window.size.seconds", int, 1, "Length of each client quota sample, in seconds."
    ),
    # Replication throttles.
    ConfigKey(
        "leader.replication.throttled.rate",
        int,
        INT64_MAX,
        "Replication throttle on leaders (kafka-reassign-partitions --throttle); not enforced.",
    ),
    ConfigKey(
        "follower.replication.throttled.rate",
        int,
        INT64_MAX,
        "Replication throttle on followers (kafka-reassign-partitions --throttle); not enforced.",
    ),
    ConfigKey(
        "replica.alter.log.dirs.io.max.bytes.per.second",
        int,
        INT64_MAX,
        "Bytes per second all moves between this broker's log dirs copy, together.",
    ),
]
