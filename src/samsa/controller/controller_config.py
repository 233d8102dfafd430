"""The controller's settings, under Kafka's config names.

A plain value built by the node from its server.properties (``from_properties``
takes the Kafka keys); the controller never reads configuration files itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PRODUCER_ID_BLOCK_SIZE = 1000
"""Producer ids handed to a broker per AllocateProducerIds, as Kafka's ProducerIdsBlock."""


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() == "true"
    return bool(value)


@dataclass(frozen=True, slots=True)
class ControllerConfig:
    """Settings of the QuorumController (Kafka's names in the field docs)."""

    default_num_partitions: int = 1
    """num.partitions: partitions of a CreateTopics entry that asks for -1."""
    default_replication_factor: int = 1
    """default.replication.factor: replication factor of an entry that asks for -1."""
    delete_topic_enable: bool = True
    """delete.topic.enable."""
    broker_session_timeout_ms: int = 9000
    """broker.session.timeout.ms: a broker silent this long is fenced."""
    broker_heartbeat_interval_ms: int = 2000
    """broker.heartbeat.interval.ms: half of it is how long a heartbeat may wait
    behind other writes before it is answered REQUEST_TIMED_OUT (as Kafka's)."""
    auto_leader_rebalance_enable: bool = True
    """auto.leader.rebalance.enable: move leadership back to preferred replicas."""
    leader_imbalance_per_broker_percentage: int = 10
    """leader.imbalance.per.broker.percentage: imbalance that triggers it, per broker."""
    leader_imbalance_check_interval_ms: int = 300_000
    """leader.imbalance.check.interval.seconds, in milliseconds."""
    cluster_id: str | None = None
    """The cluster id brokers must register with; None accepts any."""
    topic_defaults: Mapping[str, str] = field(default_factory=dict)
    """Broker-level defaults of topic configs, under topic key names (segment.bytes...),
    shown in CreateTopics responses and the base topic overrides are checked on."""
    static_broker_props: Mapping[str, str] = field(default_factory=dict)
    """The broker settings given at start (not defaults): which topic defaults
    CreateTopics reports as STATIC_BROKER_CONFIG rather than DEFAULT_CONFIG."""
    remote_log_storage_system_enable: bool = False
    """remote.log.storage.system.enable: topics may have remote.storage.enable=true
    (Kafka checks the controller's own setting)."""
    scram_seeds: tuple[tuple[str, str, str, int], ...] = ()
    """scram.bootstrap.credentials, parsed: (user, mechanism, password, iterations)
    the active controller writes once when the image has no such credential."""
    delegation_token_secret_key: str | None = None
    """delegation.token.secret.key (or its old name delegation.token.master.key):
    the key of every token's HMAC; unset or empty, tokens are disabled."""
    delegation_token_max_lifetime_ms: int = 604_800_000
    """delegation.token.max.lifetime.ms: no token outlives this, renewals or not."""
    delegation_token_expiry_time_ms: int = 86_400_000
    """delegation.token.expiry.time.ms: how long a token lasts from creation or
    a renewal that names no shorter period."""
    delegation_token_expiry_check_interval_ms: int = 3_600_000
    """delegation.token.expiry.check.interval.ms: how often expired tokens are removed."""

    @classmethod
    def from_properties(
        cls,
        props: Mapping[str, Any],
        *,
        topic_defaults: Mapping[str, str] | None = None,
        static_broker_props: Mapping[str, str] | None = None,
        cluster_id: str | None = None,
        scram_seeds: tuple[tuple[str, str, str, int], ...] = (),
    ) -> ControllerConfig:
        """From Kafka config keys; keys not given keep Kafka's defaults."""
        defaults = cls()

        get = props.get
        return cls(
            default_num_partitions=int(get("num.partitions", defaults.default_num_partitions)),
            default_replication_factor=int(
                get("default.replication.factor", defaults.default_replication_factor)
            ),
            delete_topic_enable=_as_bool(get("delete.topic.enable", True)),
            broker_session_timeout_ms=int(
                get("broker.session.timeout.ms", defaults.broker_session_timeout_ms)
            ),
            broker_heartbeat_interval_ms=int(
                get("broker.heartbeat.interval.ms", defaults.broker_heartbeat_interval_ms)
            ),
            auto_leader_rebalance_enable=_as_bool(get("auto.leader.rebalance.enable", True)),
            leader_imbalance_per_broker_percentage=int(
                get(
                    "leader.imbalance.per.broker.percentage",
                    defaults.leader_imbalance_per_broker_percentage,
                )
            ),
            leader_imbalance_check_interval_ms=1000
            * int(get("leader.imbalance.check.interval.seconds", 300)),
            cluster_id=cluster_id,
            topic_defaults=dict(topic_defaults or {}),
            static_broker_props=dict(static_broker_props or {}),
            scram_seeds=scram_seeds,
            remote_log_storage_system_enable=_as_bool(
                get("remote.log.storage.system.enable", False)
            ),
            delegation_token_secret_key=delegation_token_secret(props),
            delegation_token_max_lifetime_ms=int(
                get("delegation.token.max.lifetime.ms", defaults.delegation_token_max_lifetime_ms)
            ),
            delegation_token_expiry_time_ms=int(
                get("delegation.token.expiry.time.ms", defaults.delegation_token_expiry_time_ms)
            ),
            delegation_token_expiry_check_interval_ms=int(
                get(
                    "delegation.token.expiry.check.interval.ms",
                    defaults.delegation_token_expiry_check_interval_ms,
                )
            ),
        )


def delegation_token_secret(props: Mapping[str, Any]) -> str | None:
    """Kafka's ``delegationTokenSecretKey``: delegation.token.secret.key, else the
    deprecated delegation.token.master.key; None (tokens off) when neither is set."""
    for key in ("delegation.token.secret.key", "delegation.token.master.key"):
        value = props.get(key)
        if value:
            return str(value)
    return None
