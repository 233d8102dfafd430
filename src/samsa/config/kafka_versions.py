"""The broker setting type for a Kafka version (``inter.broker.protocol.version``, ...).

The versions themselves, and the parser rule Kafka applies to them, are Kafka
facts shared with the topic configs (``message.format.version``), so they live
below both in ``samsa.protocol.kafka_versions``; this is the setting's type.
"""

from __future__ import annotations

from samsa.protocol.kafka_versions import EXPECTED, is_kafka_version


def kafka_version(text: str) -> str:
    """``text`` unchanged when it names a Kafka version (ValueError otherwise);
    the value is kept as written, as Kafka describes it back."""
    stripped = text.strip()
    if not is_kafka_version(stripped):
        raise ValueError(f"expected {EXPECTED}")
    return stripped
