"""Group configs: settings of one group (GROUP config resources, KIP-848/KIP-1071), under
Kafka's names, each over the broker key it overrides and within that key's bounds.

Samsa serves the streams group ones: ``streams.session.timeout.ms``,
``streams.heartbeat.interval.ms``, ``streams.num.standby.replicas`` and
``streams.initial.rebalance.delay.ms``.  The controller checks a change against
the broker bounds (``group.streams.min/max.*``) with Kafka's messages; the
broker describes every name with the group's value or the broker's default;
the group coordinator reads them at each heartbeat.  A name Samsa does not
act on is refused rather than kept and ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from samsa.errors import ErrorCode, KafkaError

_INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class GroupConfigKey:
    name: str
    broker_key: str
    """The broker setting it overrides (its default and its synonym in describe)."""
    min_key: str | None = None
    max_key: str | None = None
    minimum: int = 0


GROUP_CONFIG_KEYS: dict[str, GroupConfigKey] = {
    k.name: k
    for k in (
        GroupConfigKey(
            "streams.heartbeat.interval.ms",
            "group.streams.heartbeat.interval.ms",
            "group.streams.min.heartbeat.interval.ms",
            "group.streams.max.heartbeat.interval.ms",
        ),
        GroupConfigKey(
            "streams.session.timeout.ms",
            "group.streams.session.timeout.ms",
            "group.streams.min.session.timeout.ms",
            "group.streams.max.session.timeout.ms",
        ),
        GroupConfigKey(
            "streams.num.standby.replicas",
            "group.streams.num.standby.replicas",
            None,
            "group.streams.max.standby.replicas",
        ),
        GroupConfigKey(
            "streams.initial.rebalance.delay.ms", "group.streams.initial.rebalance.delay.ms"
        ),
    )
}


BrokerSetting = Callable[[str], object]
"""A broker key -> its value (the bounds a group config is checked against)."""


def validate_group_configs(configs: Mapping[str, str], broker: BrokerSetting) -> None:
    """Kafka's GroupConfig.validate for the names Samsa serves.  Raises INVALID_CONFIG."""
    for name in configs:
        if name not in GROUP_CONFIG_KEYS:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown group config name: {name}")
    for name, raw in configs.items():
        key = GROUP_CONFIG_KEYS[name]
        try:
            value = int(raw)
        except ValueError:
            raise KafkaError(
                ErrorCode.INVALID_CONFIG,
                f"Invalid value {raw} for configuration {name}: Not a number of type INT",
            ) from None
        if value < key.minimum:
            raise KafkaError(
                ErrorCode.INVALID_CONFIG,
                f"Invalid value {raw} for configuration {name}: Value must be at least"
                f" {key.minimum}",
            )
        low = _bound(broker, key.min_key)
        high = _bound(broker, key.max_key)
        if low is not None and high is not None and not low <= value <= high:
            raise KafkaError(
                ErrorCode.INVALID_CONFIG, f"{name} must be in the range {low} to {high} inclusive."
            )
        if low is None and high is not None and value > high:
            raise KafkaError(
                ErrorCode.INVALID_CONFIG, f"{name} must be less than or equal to {high}"
            )


def _bound(broker: BrokerSetting, key: str | None) -> int | None:
    return None if key is None else int(str(broker(key)))
