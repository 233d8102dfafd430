"""Settings of the group coordinator, under Kafka's names and with Kafka's defaults.

The broker reads ``server.properties``; the keys that concern groups are passed
here through ``GroupConfig.from_properties`` so the coordinator never parses
configuration files itself.  Defaults are Kafka's; tests and single-node
development usually want ``group.initial.rebalance.delay.ms=0`` and a low
``group.min.session.timeout.ms``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

_INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class GroupConfig:
    """Group coordinator settings; each field documents its Kafka key."""

    group_initial_rebalance_delay_ms: int = 3000
    """``group.initial.rebalance.delay.ms``: how long a new (Empty) group waits for more members
    (never less than ``rebalance.MIN_INITIAL_JOIN_DELAY_MS``)."""
    group_min_session_timeout_ms: int = 6000
    """``group.min.session.timeout.ms``: smaller JoinGroup session timeouts are refused."""
    group_max_session_timeout_ms: int = 1_800_000
    """``group.max.session.timeout.ms``: larger JoinGroup session timeouts are refused."""
    group_max_size: int = _INT32_MAX
    """``group.max.size``: members beyond this get GROUP_MAX_SIZE_REACHED."""
    offsets_topic_num_partitions: int = 50
    """``offsets.topic.num.partitions``: partitions of ``__consumer_offsets``; fixes group placement."""
    offsets_retention_minutes: int = 10080
    """``offsets.retention.minutes``: how long offsets of an Empty group are kept."""
    offset_metadata_max_bytes: int = 4096
    """``offset.metadata.max.bytes``: longer commit metadata gets OFFSET_METADATA_TOO_LARGE."""
    offsets_retention_check_interval_ms: int = 600_000
    """``offsets.retention.check.interval.ms``: how often the broker should call ``expire_offsets``."""
    new_member_join_timeout_ms: int = 300_000
    """Kafka's fixed 5-minute limit for a new member that never completes its first join."""

    @property
    def offsets_retention_ms(self) -> int:
        return self.offsets_retention_minutes * 60_000

    @classmethod
    def from_properties(cls, props: Mapping[str, str | int]) -> GroupConfig:
        """Build from Kafka-named keys (``group.min.session.timeout.ms`` ...); unknown keys are ignored.

        The broker hands over its whole property map, so ignoring keys that are
        not ours is what lets one file configure every subsystem.
        """
        values: dict[str, int] = {}
        for f in fields(cls):
            key = f.name.replace("_", ".")
            if key in props:
                values[f.name] = int(props[key])
        return cls(**values)
