"""The ConfigDef type Kafka 4.4 declares for each broker setting Samsa has.

DescribeConfigs v3+ reports a config's type, and admin tools format values by
it (a PASSWORD is never printed, a LIST is split on commas).  Guessing it from
the Python type Samsa parses a setting into was wrong for dozens of keys
(Kafka's timeouts are INT, not LONG; replication factors are SHORT), so the
types are Kafka's, as a real Kafka 4.4 broker describes them; a key not in the
table (Samsa's own) falls back to the guess.  The test that diffs a broker's
DescribeConfigs against Kafka 4.4's keeps this table honest.

Also Kafka's null defaults: a setting Kafka leaves unset (``broker.rack``) is
described with a null value, where Samsa's settings hold an empty string.
"""

from __future__ import annotations

from samsa.storage.topic_config.log_config import ConfigType

PASSWORD = "PASSWORD"
SHORT = "SHORT"

_BY_TYPE: dict[str, tuple[str, ...]] = {
    ConfigType.BOOLEAN: (
        "auto.create.topics.enable",
        "auto.leader.rebalance.enable",
        "controlled.shutdown.enable",
        "delete.topic.enable",
        "log.cleaner.enable",
        "log.preallocate",
        "transaction.partition.verification.enable",
        "unclean.leader.election.enable",
    ),
    ConfigType.STRING: (
        "authorizer.class.name",
        "broker.rack",
        "compression.type",
        "inter.broker.listener.name",
        "listener.security.protocol.map",
        "log.message.timestamp.type",
        "max.connections.per.ip.overrides",
        "metadata.log.dir",
        "sasl.mechanism.controller.protocol",
        "sasl.mechanism.inter.broker.protocol",
        "sasl.oauthbearer.expected.issuer",
        "sasl.oauthbearer.jwks.endpoint.url",
        "sasl.oauthbearer.scope.claim.name",
        "sasl.oauthbearer.sub.claim.name",
        "ssl.client.auth",
        "ssl.endpoint.identification.algorithm",
        "ssl.keystore.location",
        "ssl.keystore.type",
        "ssl.principal.mapping.rules",
        "ssl.truststore.location",
        "ssl.truststore.type",
    ),
    SHORT: (
        "offsets.topic.replication.factor",
        "share.coordinator.state.topic.min.isr",
        "share.coordinator.state.topic.replication.factor",
        "transaction.state.log.replication.factor",
    ),
    ConfigType.INT: (
        "broker.heartbeat.interval.ms",
        "broker.session.timeout.ms",
        "compression.gzip.level",
        "compression.lz4.level",
        "compression.zstd.level",
        "connection.failed.authentication.delay.ms",
        "controller.quorum.append.linger.ms",
        "controller.quorum.election.backoff.max.ms",
        "controller.quorum.election.timeout.ms",
        "controller.quorum.fetch.timeout.ms",
        "controller.quorum.request.timeout.ms",
        "controller.quorum.retry.backoff.ms",
        "default.replication.factor",
        "group.consumer.heartbeat.interval.ms",
        "group.consumer.max.size",
        "group.consumer.session.timeout.ms",
        "group.initial.rebalance.delay.ms",
        "group.max.session.timeout.ms",
        "group.max.size",
        "group.min.session.timeout.ms",
        "group.share.delivery.count.limit",
        "group.share.heartbeat.interval.ms",
        "group.share.max.size",
        "group.share.partition.max.record.locks",
        "group.share.record.lock.duration.ms",
        "group.share.session.timeout.ms",
        "group.streams.heartbeat.interval.ms",
        "group.streams.initial.rebalance.delay.ms",
        "group.streams.max.heartbeat.interval.ms",
        "group.streams.max.session.timeout.ms",
        "group.streams.min.heartbeat.interval.ms",
        "group.streams.min.session.timeout.ms",
        "group.streams.session.timeout.ms",
        "log.flush.offset.checkpoint.interval.ms",
        "log.index.interval.bytes",
        "log.index.size.max.bytes",
        "log.retention.hours",
        "log.retention.minutes",
        "log.roll.hours",
        "log.roll.jitter.hours",
        "log.segment.bytes",
        "max.connections",
        "max.connections.per.ip",
        "max.decompressed.message.bytes",
        "max.incremental.fetch.session.cache.slots",
        "message.max.bytes",
        "metadata.log.segment.bytes",
        "min.insync.replicas",
        "node.id",
        "num.partitions",
        "num.replica.fetchers",
        "offset.metadata.max.bytes",
        "offsets.retention.minutes",
        "offsets.topic.num.partitions",
        "offsets.topic.segment.bytes",
        "producer.id.expiration.ms",
        "quota.window.num",
        "quota.window.size.seconds",
        "remote.fetch.max.wait.ms",
        "replica.fetch.backoff.ms",
        "replica.fetch.max.bytes",
        "replica.fetch.min.bytes",
        "replica.fetch.response.max.bytes",
        "replica.fetch.wait.max.ms",
        "sasl.oauthbearer.clock.skew.seconds",
        "sasl.server.max.receive.size",
        "share.coordinator.state.topic.num.partitions",
        "socket.request.max.bytes",
        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        "transaction.max.timeout.ms",
        "transaction.state.log.min.isr",
        "transaction.state.log.num.partitions",
        "transaction.state.log.segment.bytes",
        "transactional.id.expiration.ms",
    ),
    ConfigType.LONG: (
        "connections.max.idle.ms",
        "connections.max.reauth.ms",
        "leader.imbalance.check.interval.seconds",
        "log.cleaner.backoff.ms",
        "log.cleaner.delete.retention.ms",
        "log.cleaner.max.compaction.lag.ms",
        "log.cleaner.min.compaction.lag.ms",
        "log.flush.interval.messages",
        "log.flush.interval.ms",
        "log.flush.scheduler.interval.ms",
        "log.local.retention.bytes",
        "log.local.retention.ms",
        "log.message.timestamp.after.max.ms",
        "log.message.timestamp.before.max.ms",
        "log.remote.copy.lag.bytes",
        "log.remote.copy.lag.ms",
        "log.retention.bytes",
        "log.retention.check.interval.ms",
        "log.retention.ms",
        "log.roll.jitter.ms",
        "log.roll.ms",
        "log.segment.delete.delay.ms",
        "metadata.log.max.record.bytes.between.snapshots",
        "metadata.log.max.snapshot.interval.ms",
        "offsets.retention.check.interval.ms",
        "replica.lag.time.max.ms",
    ),
    ConfigType.DOUBLE: ("log.cleaner.min.cleanable.ratio",),
    ConfigType.LIST: (
        "advertised.listeners",
        "controller.listener.names",
        "controller.quorum.bootstrap.servers",
        "controller.quorum.voters",
        "group.consumer.assignors",
        "listeners",
        "log.cleanup.policy",
        "log.dir",
        "log.dirs",
        "process.roles",
        "sasl.enabled.mechanisms",
        "sasl.oauthbearer.expected.audience",
        "ssl.enabled.protocols",
    ),
    PASSWORD: (
        "delegation.token.master.key",
        "delegation.token.secret.key",
        "sasl.jaas.config",
        "ssl.key.password",
        "ssl.keystore.certificate.chain",
        "ssl.keystore.key",
        "ssl.keystore.password",
        "ssl.truststore.certificates",
        "ssl.truststore.password",
    ),
}

KAFKA_BROKER_CONFIG_TYPES: dict[str, str] = {
    name: kind for kind, names in _BY_TYPE.items() for name in names
}
"""Broker setting -> Kafka's ConfigDef type name."""

TYPE_IDS: dict[str, int] = {
    ConfigType.BOOLEAN: 1,
    ConfigType.STRING: 2,
    ConfigType.INT: 3,
    SHORT: 4,
    ConfigType.LONG: 5,
    ConfigType.DOUBLE: 6,
    ConfigType.LIST: 7,
    PASSWORD: 9,
}
"""DescribeConfigsResponse.ConfigType ids (v3+)."""

KAFKA_NULL_DEFAULTS = frozenset(
    {
        "broker.rack",
        "metadata.log.dir",
        "sasl.oauthbearer.expected.issuer",
        "sasl.oauthbearer.jwks.endpoint.url",
        "ssl.keystore.location",
        "ssl.truststore.location",
    }
)
"""Settings Kafka describes with a null value while unset (Samsa's default is "")."""

REMOVED_IN_KAFKA_4 = frozenset(
    {
        "inter.broker.protocol.version",
        "log.message.format.version",
        "log.message.downconversion.enable",
        "log.message.timestamp.difference.max.ms",
    }
)
"""Broker settings Kafka 4.x no longer has: still accepted in server.properties
(old files set them), described only when set."""
