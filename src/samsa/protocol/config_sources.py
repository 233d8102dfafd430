"""Kafka's ConfigSource names, by the number DescribeConfigs answers in
``config_source``: what the CLI and the web console print for it."""

from __future__ import annotations

CONFIG_SOURCES = {
    0: "UNKNOWN",
    1: "DYNAMIC_TOPIC_CONFIG",
    2: "DYNAMIC_BROKER_CONFIG",
    3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    4: "STATIC_BROKER_CONFIG",
    5: "DEFAULT_CONFIG",
    6: "DYNAMIC_BROKER_LOGGER_CONFIG",
}


def config_source_name(source: int) -> str:
    return CONFIG_SOURCES.get(source, str(source))
