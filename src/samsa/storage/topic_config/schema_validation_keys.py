"""Confluent Server's schema id validation topic configs, for ``samsa.registry``.

``confluent.{key,value}.schema.validation`` make the broker refuse records
whose key or value lacks the magic byte and a schema id registered for the
topic's subject (replication/leader/schema_validation.py checks them), the
subject named by ``confluent.{key,value}.subject.name.strategy``.  A family of
its own beside Kafka's log keys (``keys``): Confluent's, on top of Kafka's
(the Kafka 4.4 DescribeConfigs comparison leaves them out), with the naming
strategies their values are checked against.  Part of ``LOG_CONFIG_KEYS``.
"""

from __future__ import annotations

from samsa.storage.topic_config.types import ConfigKey, ConfigType, topic_key

STRATEGY_PACKAGE = "io.confluent.kafka.serializers.subject."
SUBJECT_NAME_STRATEGIES = ("TopicNameStrategy", "RecordNameStrategy", "TopicRecordNameStrategy")
TOPIC_NAME_STRATEGY = STRATEGY_PACKAGE + "TopicNameStrategy"


def strategy_name(value: str) -> str:
    """``TopicNameStrategy`` for ``io.confluent...subject.TopicNameStrategy`` or itself."""
    return value.removeprefix(STRATEGY_PACKAGE)


def _subject_name_strategy(v: str) -> str | None:
    """Confluent's three strategies, by class name (short or in full)."""
    if strategy_name(v) in SUBJECT_NAME_STRATEGIES:
        return None
    return "must be one of " + ", ".join(STRATEGY_PACKAGE + s for s in SUBJECT_NAME_STRATEGIES)


_T = ConfigType
SCHEMA_VALIDATION_KEYS: tuple[ConfigKey, ...] = (
    topic_key(
        "confluent.key.schema.validation",
        _T.BOOLEAN,
        False,
        "refuse records whose key lacks a schema id registered for the key subject",
    ),
    topic_key(
        "confluent.key.subject.name.strategy",
        _T.STRING,
        TOPIC_NAME_STRATEGY,
        "how the key subject is named: TopicNameStrategy, RecordNameStrategy, "
        "TopicRecordNameStrategy",
        _subject_name_strategy,
    ),
    topic_key(
        "confluent.value.schema.validation",
        _T.BOOLEAN,
        False,
        "refuse records whose value lacks a schema id registered for the value subject",
    ),
    topic_key(
        "confluent.value.subject.name.strategy",
        _T.STRING,
        TOPIC_NAME_STRATEGY,
        "how the value subject is named: TopicNameStrategy, RecordNameStrategy, "
        "TopicRecordNameStrategy",
        _subject_name_strategy,
    ),
)
