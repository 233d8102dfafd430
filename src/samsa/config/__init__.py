"""Typed broker configuration with Kafka's key names and defaults.

Every key is declared once (name, type, default, doc); values come from, in
increasing precedence, the defaults, a ``server.properties`` file, ``--set
key=value`` pairs and explicit command-line flags.  Unknown keys are refused with
a message naming the key, so typos do not silently fall back to defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from samsa.config.synonyms import topic_defaults
from samsa.errors import ConfigError
from samsa.protocol.kafka_versions import kafka_version

INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class ConfigKey:
    name: str
    type: Callable[[str], Any]
    default: Any
    doc: str


def _bool(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise ValueError(f"expected true or false, got {value!r}")


def _list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _int_between(low: int, high: int) -> Callable[[str], int]:
    """An int within [low, high] (Kafka's ``atLeast``/``between`` validators)."""

    def parse(value: str) -> int:
        number = int(value)
        if not low <= number <= high:
            raise ValueError(f"must be between {low} and {high}")
        return number

    return parse


def _share_offset_reset(value: str) -> str:
    lowered = value.strip().lower()
    if lowered not in ("latest", "earliest"):
        raise ValueError("must be latest or earliest")
    return lowered


def _endpoint_ssl_keys(endpoint: str) -> list[ConfigKey]:
    """``<endpoint>.ssl.*``: TLS for an HTTP endpoint, as for a listener (PEM)."""
    what = f"the {endpoint} endpoint"
    return [
        ConfigKey(
            f"{endpoint}.ssl.keystore.location",
            str,
            "",
            f"PEM file with the key and certificate chain of {what}: set, it serves HTTPS only.",
        ),
        ConfigKey(
            f"{endpoint}.ssl.keystore.certificate.chain", str, "", f"Inline PEM chain of {what}."
        ),
        ConfigKey(f"{endpoint}.ssl.keystore.key", str, "", f"Inline PEM private key of {what}."),
        ConfigKey(f"{endpoint}.ssl.keystore.type", str, "PEM", "Keystore format; PEM only."),
        ConfigKey(f"{endpoint}.ssl.key.password", str, "", "Password of an encrypted PEM key."),
        ConfigKey(
            f"{endpoint}.ssl.enabled.protocols", str, "TLSv1.2,TLSv1.3", f"TLS versions of {what}."
        ),
    ]


_KEYS: list[ConfigKey] = [
    ConfigKey("node.id", int, 1, "This broker's id; also the controller id on a single node."),
    ConfigKey(
        "listeners", str, "PLAINTEXT://127.0.0.1:9092", "Address to bind (port 0 = any free port)."
    ),
    ConfigKey(
        "advertised.listeners",
        str,
        "",
        "Address clients are told to connect to (default: the bound one).",
    ),
    ConfigKey("log.dirs", str, "./samsa-data", "Data dirs, comma-separated (one per disk)."),
    ConfigKey("log.dir", str, "", "Alias of log.dirs used when log.dirs is unset."),
    ConfigKey(
        "metadata.log.dir",
        str,
        "",
        "Dir of the metadata log and the node's meta.properties (default: the first log dir).",
    ),
    ConfigKey("num.partitions", int, 1, "Partitions of auto-created topics."),
    ConfigKey("default.replication.factor", int, 1, "Replication factor of auto-created topics."),
    ConfigKey(
        "auto.create.topics.enable", _bool, True, "Create unknown topics on Metadata/Produce."
    ),
    ConfigKey("delete.topic.enable", _bool, True, "Allow DeleteTopics."),
    ConfigKey(
        "message.max.bytes",
        int,
        1048588,
        "Largest record batch accepted (topic default max.message.bytes).",
    ),
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
    ConfigKey("quota.window.num", int, 11, "Samples a client quota's rate is measured over."),
    ConfigKey(
        "quota.window.size.seconds", int, 1, "Length of each client quota sample, in seconds."
    ),
    ConfigKey("log.segment.bytes", int, 1073741824, "Segment size before rolling."),
    ConfigKey("log.roll.ms", int, 604800000, "Segment age before rolling."),
    ConfigKey(
        "log.roll.hours", int, 168, "Segment age before rolling, in hours (log.roll.ms wins)."
    ),
    ConfigKey("log.retention.ms", int, 604800000, "Time retention of the delete policy."),
    ConfigKey(
        "log.retention.minutes", int, -2, "Time retention in minutes (log.retention.ms wins)."
    ),
    ConfigKey("log.retention.hours", int, 168, "Time retention in hours."),
    ConfigKey("log.retention.bytes", int, -1, "Size retention per partition (-1 = none)."),
    ConfigKey("log.retention.check.interval.ms", int, 300000, "How often retention runs."),
    ConfigKey("log.roll.jitter.ms", int, 0, "Random slack subtracted from the segment age."),
    ConfigKey("log.roll.jitter.hours", int, 0, "Segment roll jitter in hours (ms wins)."),
    ConfigKey(
        "log.segment.delete.delay.ms", int, 60000, "Delay before a deleted segment's files go."
    ),
    ConfigKey("log.preallocate", _bool, False, "Preallocate segment files (accepted, not used)."),
    ConfigKey("log.index.interval.bytes", int, 4096, "Bytes between offset index entries."),
    ConfigKey("log.index.size.max.bytes", int, 10485760, "Maximum index file size."),
    ConfigKey("log.flush.interval.messages", int, 2**63 - 1, "fsync after this many messages."),
    ConfigKey("log.flush.interval.ms", int, -1, "fsync after this long (-1 = page cache decides)."),
    ConfigKey(
        "log.flush.offset.checkpoint.interval.ms",
        int,
        60000,
        "How often recovery points are checkpointed.",
    ),
    ConfigKey(
        "log.flush.scheduler.interval.ms",
        int,
        2**63 - 1,
        "Default of flush.ms when log.flush.interval.ms is unset.",
    ),
    ConfigKey("log.message.timestamp.type", str, "CreateTime", "CreateTime or LogAppendTime."),
    ConfigKey(
        "log.message.timestamp.before.max.ms",
        int,
        2**63 - 1,
        "How far in the past a CreateTime timestamp may be.",
    ),
    ConfigKey(
        "log.message.timestamp.after.max.ms",
        int,
        3600000,
        "How far in the future a CreateTime timestamp may be (Kafka 4.x: one hour).",
    ),
    ConfigKey(
        "log.message.timestamp.difference.max.ms",
        int,
        2**63 - 1,
        "Deprecated (Kafka 3.6): accepted, no effect.",
    ),
    ConfigKey(
        "log.message.downconversion.enable", _bool, True, "Deprecated (Kafka 3.x): no effect."
    ),
    # Ignored (KRaft and RecordBatch v2 only), but old server.properties set them.
    ConfigKey(
        "log.message.format.version",
        kafka_version,
        "3.0-IV1",
        "Deprecated in Kafka 3.x; accepted when Kafka would accept it, no effect.",
    ),
    ConfigKey(
        "inter.broker.protocol.version",
        kafka_version,
        "3.9-IV0",
        "Ignored in KRaft mode (as in Kafka 3.x); accepted when Kafka would accept it.",
    ),
    ConfigKey("log.cleanup.policy", str, "delete", "delete, compact or compact,delete."),
    ConfigKey("log.cleaner.enable", _bool, True, "Run the log cleaner for compacted topics."),
    ConfigKey("log.cleaner.backoff.ms", int, 15000, "Cleaner sleep between passes."),
    ConfigKey(
        "leader.replication.throttled.rate",
        int,
        2**63 - 1,
        "Replication throttle on leaders (kafka-reassign-partitions --throttle); not enforced.",
    ),
    ConfigKey(
        "follower.replication.throttled.rate",
        int,
        2**63 - 1,
        "Replication throttle on followers (kafka-reassign-partitions --throttle); not enforced.",
    ),
    ConfigKey(
        "replica.alter.log.dirs.io.max.bytes.per.second",
        int,
        2**63 - 1,
        "Throttle of moves between log dirs; not enforced.",
    ),
    ConfigKey("log.cleaner.delete.retention.ms", int, 86400000, "Tombstone retention."),
    ConfigKey("log.cleaner.min.cleanable.ratio", float, 0.5, "Dirty ratio before cleaning."),
    ConfigKey("log.cleaner.min.compaction.lag.ms", int, 0, "Shortest a message stays uncompacted."),
    ConfigKey(
        "log.cleaner.max.compaction.lag.ms",
        int,
        2**63 - 1,
        "Longest a message may stay uncompacted.",
    ),
    ConfigKey("compression.type", str, "producer", "Broker-side compression (producer = keep)."),
    ConfigKey("compression.gzip.level", int, -1, "gzip level (accepted, not used)."),
    ConfigKey("compression.lz4.level", int, 9, "lz4 level (accepted, not used)."),
    ConfigKey("compression.zstd.level", int, 3, "zstd level (accepted, not used)."),
    ConfigKey("log.local.retention.ms", int, -2, "Tiered storage (not available)."),
    ConfigKey("log.local.retention.bytes", int, -2, "Tiered storage (not available)."),
    ConfigKey("log.remote.copy.lag.bytes", int, -1, "Tiered storage (not available)."),
    ConfigKey("log.remote.copy.lag.ms", int, 0, "Tiered storage (not available)."),
    ConfigKey(
        "max.decompressed.message.bytes",
        int,
        2147483639,
        "Largest decompressed batch (accepted, not enforced).",
    ),
    ConfigKey("min.insync.replicas", int, 1, "Replicas that must acknowledge acks=all."),
    ConfigKey("producer.id.expiration.ms", int, 86400000, "Idle producer state expiry."),
    ConfigKey(
        "group.initial.rebalance.delay.ms",
        int,
        3000,
        "Wait for more members of a new group (tests: 0).",
    ),
    ConfigKey("group.min.session.timeout.ms", int, 6000, "Smallest accepted session timeout."),
    ConfigKey("group.max.session.timeout.ms", int, 1800000, "Largest accepted session timeout."),
    ConfigKey("group.max.size", int, INT32_MAX, "Members per group."),
    ConfigKey(
        "group.consumer.session.timeout.ms",
        int,
        45000,
        "KIP-848 consumer groups: a member silent this long is removed.",
    ),
    ConfigKey(
        "group.consumer.heartbeat.interval.ms",
        int,
        5000,
        "KIP-848 consumer groups: how often members are told to heartbeat.",
    ),
    ConfigKey(
        "group.consumer.assignors",
        _list,
        ["uniform", "range"],
        "KIP-848 server-side assignors; the first is the default.",
    ),
    ConfigKey("group.consumer.max.size", int, INT32_MAX, "Members per consumer group."),
    ConfigKey(
        "group.consumer.migration.policy",
        str,
        "bidirectional",
        "KIP-848 online migration: disabled, upgrade, downgrade or bidirectional.",
    ),
    ConfigKey(
        "group.share.session.timeout.ms",
        int,
        45000,
        "Share groups: a member silent this long is removed.",
    ),
    ConfigKey(
        "group.share.heartbeat.interval.ms",
        int,
        5000,
        "Share groups: how often members are told to heartbeat.",
    ),
    ConfigKey("group.share.max.size", int, 200, "Members per share group."),
    ConfigKey(
        "group.share.record.lock.duration.ms",
        _int_between(1000, 3_600_000),
        30000,
        "Share groups: how long an acquired record stays with its consumer.",
    ),
    ConfigKey(
        "group.share.delivery.count.limit",
        _int_between(2, 10),
        5,
        "Share groups: deliveries of a record before it is archived.",
    ),
    ConfigKey(
        "group.share.partition.max.record.locks",
        _int_between(100, 10_000),
        2000,
        "Share groups: records in flight per share partition.",
    ),
    ConfigKey(
        "share.coordinator.state.topic.num.partitions",
        int,
        50,
        "Partitions of __share_group_state.",
    ),
    ConfigKey(
        "share.coordinator.state.topic.replication.factor",
        int,
        3,
        "Replication of __share_group_state (capped at the live brokers).",
    ),
    ConfigKey(
        "share.coordinator.state.topic.min.isr",
        int,
        2,
        "min.insync.replicas of __share_group_state.",
    ),
    ConfigKey(
        "share.auto.offset.reset",
        _share_offset_reset,
        "latest",
        "Share groups: where a share partition starts (latest or earliest); the"
        " default of Kafka's group config of the same name.",
    ),
    ConfigKey("offsets.topic.num.partitions", int, 50, "Partitions of __consumer_offsets."),
    ConfigKey(
        "offsets.topic.segment.bytes",
        int,
        104857600,
        "Segment size of __consumer_offsets (kept small so compaction can reclaim it).",
    ),
    ConfigKey(
        "offsets.topic.replication.factor",
        int,
        3,
        "Replication of __consumer_offsets (1 on one node).",
    ),
    ConfigKey(
        "offsets.retention.minutes",
        int,
        10080,
        "Committed offsets of empty groups expire after this.",
    ),
    ConfigKey("offsets.retention.check.interval.ms", int, 600000, "How often offset expiry runs."),
    ConfigKey("offset.metadata.max.bytes", int, 4096, "Largest commit metadata string."),
    ConfigKey(
        "transaction.state.log.num.partitions", int, 50, "Partitions of __transaction_state."
    ),
    ConfigKey(
        "transaction.state.log.replication.factor",
        int,
        3,
        "Replication of __transaction_state (capped by the live brokers).",
    ),
    ConfigKey(
        "transaction.state.log.min.isr", int, 2, "min.insync.replicas of __transaction_state."
    ),
    ConfigKey(
        "transaction.state.log.segment.bytes",
        int,
        104857600,
        "Segment size of __transaction_state.",
    ),
    ConfigKey(
        "transaction.max.timeout.ms",
        int,
        900000,
        "Largest transaction.timeout.ms a producer may ask.",
    ),
    ConfigKey(
        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        int,
        10000,
        "How often transactions open past their timeout are aborted.",
    ),
    ConfigKey(
        "transactional.id.expiration.ms", int, 604800000, "Idle transactional ids are forgotten."
    ),
    ConfigKey(
        "transaction.partition.verification.enable",
        _bool,
        True,
        "Leaders ask the coordinator before a transactional produce opens a transaction (KIP-890).",
    ),
    ConfigKey("cluster.id", str, "", "Cluster id for a new data dir (default: random)."),
    ConfigKey("process.roles", str, "broker,controller", "Roles of this node (single node: both)."),
    ConfigKey(
        "controller.quorum.voters",
        str,
        "",
        "Static Raft voters (ID@HOST:PORT,...); empty with no bootstrap servers = single node.",
    ),
    ConfigKey(
        "controller.quorum.bootstrap.servers",
        str,
        "",
        "Where to find the quorum when its voters live in the metadata log (HOST:PORT,...).",
    ),
    ConfigKey(
        "controller.listener.names",
        str,
        "",
        "Listeners that serve the controller quorum (empty: every listener serves it).",
    ),
    ConfigKey("inter.broker.listener.name", str, "", "Listener brokers use to reach each other."),
    ConfigKey(
        "listener.security.protocol.map",
        str,
        "",
        "NAME:PROTOCOL pairs (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL); a listener named "
        "after a protocol needs no entry.",
    ),
    ConfigKey("ssl.keystore.type", str, "PEM", "Keystore format; Samsa reads PEM only."),
    ConfigKey("ssl.keystore.location", str, "", "PEM file with the private key and its chain."),
    ConfigKey("ssl.keystore.password", str, "", "Unused for PEM keystores (Kafka's key)."),
    ConfigKey("ssl.keystore.certificate.chain", str, "", "Inline PEM certificate chain."),
    ConfigKey("ssl.keystore.key", str, "", "Inline PEM private key."),
    ConfigKey("ssl.key.password", str, "", "Password of an encrypted PEM private key."),
    ConfigKey("ssl.truststore.type", str, "PEM", "Truststore format; Samsa reads PEM only."),
    ConfigKey("ssl.truststore.location", str, "", "PEM file of trusted CA certificates."),
    ConfigKey("ssl.truststore.password", str, "", "Unused for PEM truststores (Kafka's key)."),
    ConfigKey("ssl.truststore.certificates", str, "", "Inline PEM trusted CA certificates."),
    ConfigKey("ssl.client.auth", str, "none", "Client certificates: none, requested, required."),
    ConfigKey("ssl.enabled.protocols", str, "TLSv1.2,TLSv1.3", "TLS versions accepted."),
    ConfigKey(
        "ssl.endpoint.identification.algorithm",
        str,
        "https",
        "https: this node checks peer host names against their certificates; empty: it does not.",
    ),
    ConfigKey(
        "ssl.principal.mapping.rules",
        str,
        "DEFAULT",
        "How a client certificate becomes a principal (DEFAULT: the subject's full name).",
    ),
    ConfigKey(
        "sasl.enabled.mechanisms",
        str,
        "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "SASL mechanisms offered (Kafka's default GSSAPI is not offered).",
    ),
    ConfigKey(
        "sasl.mechanism.inter.broker.protocol", str, "PLAIN", "Mechanism nodes use between them."
    ),
    ConfigKey(
        "sasl.mechanism.controller.protocol", str, "PLAIN", "Mechanism used to reach controllers."
    ),
    ConfigKey(
        "sasl.jaas.config",
        str,
        "",
        'JAAS line: username/password this node logs in with, user_NAME="PASSWORD" users it accepts.',
    ),
    ConfigKey("sasl.server.max.receive.size", int, 524288, "Largest frame before authentication."),
    ConfigKey(
        "sasl.oauthbearer.jwks.endpoint.url",
        str,
        "",
        "OAUTHBEARER: a JWKS file (file:/path) signed tokens are checked against; unset, "
        "unsecured tokens (alg none) are accepted, as Kafka's default validator does.",
    ),
    ConfigKey("sasl.oauthbearer.expected.audience", str, "", "OAUTHBEARER: accepted aud values."),
    ConfigKey("sasl.oauthbearer.expected.issuer", str, "", "OAUTHBEARER: the required iss."),
    ConfigKey("sasl.oauthbearer.sub.claim.name", str, "sub", "OAUTHBEARER: principal claim."),
    ConfigKey("sasl.oauthbearer.scope.claim.name", str, "scope", "OAUTHBEARER: scope claim."),
    ConfigKey("sasl.oauthbearer.clock.skew.seconds", int, 30, "OAUTHBEARER: allowed clock skew."),
    ConfigKey(
        "connection.failed.authentication.delay.ms",
        int,
        100,
        "Wait before answering (and closing) a failed authentication.",
    ),
    ConfigKey(
        "connections.max.reauth.ms",
        int,
        0,
        "KIP-368: SASL sessions last at most this long (0: no limit); a client must log in "
        "again on the same connection before then or be disconnected.",
    ),
    ConfigKey(
        "scram.bootstrap.credentials",
        str,
        "",
        "SCRAM users the controller writes once if the metadata log lacks them, as "
        "kafka-storage format --add-scram: 'SCRAM-SHA-256=[name=alice,password=...]' ...",
    ),
    ConfigKey(
        "authorizer.class.name",
        str,
        "",
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer turns ACLs on (empty: off).",
    ),
    ConfigKey("super.users", str, "", "Principals allowed everything (User:a;User:b)."),
    ConfigKey(
        "allow.everyone.if.no.acl.found",
        _bool,
        False,
        "Allow a resource that no ACL names (else only super users may use it).",
    ),
    ConfigKey("controller.quorum.election.timeout.ms", int, 1000, "Raft election timeout."),
    ConfigKey("controller.quorum.fetch.timeout.ms", int, 2000, "Raft follower's leader timeout."),
    ConfigKey("controller.quorum.election.backoff.max.ms", int, 1000, "Raft election backoff cap."),
    ConfigKey("controller.quorum.request.timeout.ms", int, 2000, "Raft request timeout."),
    ConfigKey("controller.quorum.retry.backoff.ms", int, 20, "Raft retry backoff."),
    ConfigKey("controller.quorum.append.linger.ms", int, 25, "Raft leader's batching of appends."),
    ConfigKey(
        "metadata.log.max.record.bytes.between.snapshots",
        int,
        20971520,
        "Metadata bytes appended before the next snapshot.",
    ),
    ConfigKey("metadata.log.segment.bytes", int, 1073741824, "Segment size of the metadata log."),
    ConfigKey(
        "metadata.log.max.snapshot.interval.ms",
        int,
        3600000,
        "Longest time between metadata snapshots (0: only by size).",
    ),
    ConfigKey("broker.heartbeat.interval.ms", int, 2000, "Broker heartbeat interval."),
    ConfigKey("broker.session.timeout.ms", int, 9000, "A broker silent this long is fenced."),
    ConfigKey("broker.rack", str, "", "Rack of this broker, for rack-aware placement."),
    ConfigKey("replica.lag.time.max.ms", int, 30000, "A follower this far behind leaves the ISR."),
    ConfigKey("replica.fetch.max.bytes", int, 1048576, "Bytes per partition per replica fetch."),
    ConfigKey(
        "replica.fetch.response.max.bytes", int, 10485760, "Bytes per replica fetch response."
    ),
    ConfigKey("replica.fetch.wait.max.ms", int, 500, "Longest wait of a replica fetch."),
    ConfigKey("replica.fetch.min.bytes", int, 1, "Bytes a replica fetch waits for."),
    ConfigKey("replica.fetch.backoff.ms", int, 1000, "Wait after a failed replica fetch."),
    ConfigKey("num.replica.fetchers", int, 1, "Fetcher tasks per source broker."),
    ConfigKey(
        "max.incremental.fetch.session.cache.slots",
        int,
        1000,
        "Fetch sessions (KIP-227) a broker keeps; 0 turns them off.",
    ),
    ConfigKey(
        "unclean.leader.election.enable",
        _bool,
        False,
        "Let an out-of-sync replica lead (data loss) when no in-sync one is alive.",
    ),
    ConfigKey("auto.leader.rebalance.enable", _bool, True, "Move leaders back to preferred."),
    ConfigKey(
        "leader.imbalance.per.broker.percentage", int, 10, "Imbalance that triggers rebalancing."
    ),
    ConfigKey(
        "leader.imbalance.check.interval.seconds", int, 300, "How often imbalance is checked."
    ),
    ConfigKey("controlled.shutdown.enable", _bool, True, "Move leaderships away before exiting."),
    ConfigKey("log4j.level", str, "INFO", "Log level of the broker's logger."),
    ConfigKey("metrics.listen", str, "", "HOST:PORT of the Prometheus endpoint (empty: off)."),
    ConfigKey(
        "metrics.login.listener",
        str,
        "",
        "A SASL listener whose users /metrics takes by HTTP Basic authentication (its mechanisms "
        "and users); with an authorizer they need DESCRIBE on the cluster (empty: no login).",
    ),
    ConfigKey(
        "metrics.allowed.hosts",
        _list,
        [],
        "Host header names /metrics answers besides its bind address (and localhost for a "
        "loopback bind); * answers any.",
    ),
    *_endpoint_ssl_keys("metrics"),
    ConfigKey("console.listen", str, "", "HOST:PORT of the web console (empty: off)."),
    ConfigKey(
        "console.allow.actions",
        _bool,
        False,
        "Let the web console create topics, add partitions, produce, reset offsets, delete records.",
    ),
    ConfigKey(
        "console.login.listener",
        str,
        "",
        "A SASL listener whose users log in to the console (its mechanisms, users and "
        "connection.failed.authentication.delay.ms); required with an authorizer or SASL-only "
        "client listeners (empty: no login).",
    ),
    ConfigKey(
        "console.session.max.lifetime.ms",
        int,
        28800000,
        "How long a console login lasts (an OAUTHBEARER token's expiry ends it sooner).",
    ),
    ConfigKey(
        "console.allow.remote.anonymous",
        _bool,
        False,
        "Let a console without login bind to an address other than loopback (anyone who "
        "reaches it sees and, with console.allow.actions, changes everything).",
    ),
    ConfigKey(
        "console.allowed.hosts",
        _list,
        [],
        "Host header names the console answers besides its bind address (and localhost for a "
        "loopback bind); * answers any (behind a proxy that checks it).",
    ),
    *_endpoint_ssl_keys("console"),
]

KEYS: dict[str, ConfigKey] = {k.name: k for k in _KEYS}

LISTENER_PREFIX = "listener.name."


def _listener_key(name: str) -> tuple[str, str] | None:
    """``listener.name.<listener>.<key>`` -> (LISTENER, key), for ssl/sasl keys."""
    if not name.startswith(LISTENER_PREFIX):
        return None
    listener, sep, key = name[len(LISTENER_PREFIX) :].partition(".")
    if not sep or not listener:
        return None
    if (key.startswith(("ssl.", "sasl.", "connection.failed.")) or key == "max.connections") and (
        key in KEYS
    ):
        return listener.upper(), key
    mechanism, sep, rest = key.partition(".")
    if sep and rest == "sasl.jaas.config":
        return listener.upper(), f"{mechanism.upper()}.sasl.jaas.config"
    return None


class BrokerConfig:
    """Resolved broker configuration; read values with ``config["log.dirs"]``."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self._values: dict[str, Any] = {k.name: k.default for k in _KEYS}
        self._explicit: set[str] = set()
        self._raw: dict[str, str] = {}
        self._per_listener: dict[tuple[str, str], str] = {}
        if values:
            self.update(values)

    def update(self, values: Mapping[str, str]) -> None:
        for name, raw in values.items():
            self.set(name, raw)

    def set(self, name: str, raw: str) -> None:
        per_listener = _listener_key(name)
        if per_listener is not None:
            self._per_listener[per_listener] = str(raw)
            self._explicit.add(name)
            return
        key = KEYS.get(name)
        if key is None:
            raise ConfigError(f"unknown broker config key {name!r}")
        try:
            value = key.type(str(raw))
        except ValueError as exc:
            raise ConfigError(f"invalid value {raw!r} for {name}: {exc}") from None
        self._values[name] = value
        self._explicit.add(name)
        self._raw[name] = str(raw).strip()

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def for_listener(self, listener: str, name: str) -> str:
        """A security setting of ``listener``: ``listener.name.<listener>.<name>``
        when given, else the node-wide ``name`` (Kafka's lookup order)."""
        value = self._per_listener.get((listener.upper(), name))
        if value is not None:
            return value
        return str(self._values[name]) if name in self._values else ""

    def jaas_for(self, listener: str, mechanism: str) -> tuple[str, str]:
        """(JAAS line, the key it came from) for ``mechanism`` on ``listener``."""
        prefix = f"{LISTENER_PREFIX}{listener.lower()}."
        for key in (f"{mechanism.upper()}.sasl.jaas.config", "sasl.jaas.config"):
            value = self._per_listener.get((listener.upper(), key))
            if value:
                return value, prefix + key.lower()
        return str(self._values["sasl.jaas.config"]), "sasl.jaas.config"

    def value_of(self, name: str) -> Any:
        """The value of any key ``explicit_keys`` lists (listener-prefixed ones too)."""
        per_listener = _listener_key(name)
        if per_listener is not None:
            return self._per_listener[per_listener]
        return self._values[name]

    def is_explicit(self, name: str) -> bool:
        return name in self._explicit

    def explicit_keys(self) -> frozenset[str]:
        """Keys set by a flag, ``--set`` or the config file (not defaults)."""
        return frozenset(self._explicit)

    def items(self) -> Iterable[tuple[str, Any]]:
        return self._values.items()

    @property
    def data_dir(self) -> Path:
        return self.log_dirs[0]

    @property
    def metadata_log_dir(self) -> Path:
        """Where the metadata log lives (Kafka's ``metadata.log.dir``): its own dir,
        else the first log dir.  If it fails, the node stops."""
        return Path(self["metadata.log.dir"]) if self["metadata.log.dir"] else self.data_dir

    @property
    def log_dirs(self) -> list[Path]:
        """Every dir ``log.dirs`` (or ``log.dir``) names (JBOD)."""
        dirs = (
            _list(self["log.dirs"]) if self.is_explicit("log.dirs") or not self["log.dir"] else []
        )
        if not dirs:
            dirs = _list(self["log.dir"]) or ["./samsa-data"]
        return [Path(d) for d in dirs]

    def explicit_values(self) -> dict[str, str]:
        """The settings given (file, ``--set``, flags) as the strings given:
        Kafka's STATIC_BROKER_CONFIG layer."""
        return dict(self._raw)

    @property
    def retention_ms(self) -> int:
        """log.retention.ms, else .minutes, else .hours (Kafka's precedence), in ms."""
        return int(self.topic_defaults()["retention.ms"])

    @property
    def roll_ms(self) -> int:
        """log.roll.ms, else log.roll.hours, in ms."""
        return int(self.topic_defaults()["segment.ms"])

    def topic_defaults(self) -> dict[str, str]:
        """Broker-level defaults of every topic config, under the topic key names."""
        try:
            return topic_defaults(self._raw)
        except ConfigError as exc:
            raise ConfigError(f"broker setting: {exc}") from None


def parse_properties(text: str) -> dict[str, str]:
    """Parse a Java ``.properties`` file (``key=value`` or ``key: value``, ``#``/``!`` comments)."""
    values: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#!":
            continue
        for sep in ("=", ":"):
            if sep in stripped:
                key, value = stripped.split(sep, 1)
                values[key.strip()] = value.strip()
                break
        else:
            raise ConfigError(f"line {lineno}: expected key=value, got {stripped!r}")
    return values


def parse_host_port(value: str) -> tuple[str, int]:
    """Parse ``HOST:PORT`` or ``PLAINTEXT://HOST:PORT`` (first listener of a list)."""
    first = _list(value)[0] if value.strip() else ""
    if "://" in first:
        first = first.split("://", 1)[1]
    host, sep, port = first.rpartition(":")
    if not sep or not port.isdigit():
        raise ConfigError(f"expected HOST:PORT, got {value!r}")
    host = host.strip("[]") or "0.0.0.0"
    return host, int(port)
