"""Broker keys of transactions and idempotent producers: ``__transaction_state``,
timeouts and the expiry of idle producer and transactional ids."""

from __future__ import annotations

from samsa.config.values import ConfigKey, parse_bool

TRANSACTION_KEYS: list[ConfigKey] = [
    ConfigKey("producer.id.expiration.ms", int, 86400000, "Idle producer state expiry."),
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
        parse_bool,
        True,
        "Leaders ask the coordinator before a transactional produce opens a transaction (KIP-890).",
    ),
]
