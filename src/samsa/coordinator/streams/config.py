"""Settings of streams groups: the broker's ``group.streams.*`` keys (Kafka's names and
defaults) and a group's own ``streams.*`` configs over them.

A group's configs (IncrementalAlterConfigs on a GROUP resource) live in the
cluster metadata; the broker hands the coordinator a lookup of them
(``GroupConfigs``), so a change applies at the group's next heartbeat as in
Kafka.  Values outside the broker's min/max are refused when they are set;
one that slipped past (the bounds changed later) is clamped here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from samsa.coordinator.streams.assignment.assignor import NAME as STICKY

_INT32_MAX = 2**31 - 1

GroupConfigs = Callable[[str], Mapping[str, str]]
"""group id -> the configs set on that group (names without ``group.``)."""

SESSION_TIMEOUT = "streams.session.timeout.ms"
HEARTBEAT_INTERVAL = "streams.heartbeat.interval.ms"
NUM_STANDBY_REPLICAS = "streams.num.standby.replicas"
INITIAL_REBALANCE_DELAY = "streams.initial.rebalance.delay.ms"
GROUP_KEYS = (SESSION_TIMEOUT, HEARTBEAT_INTERVAL, NUM_STANDBY_REPLICAS, INITIAL_REBALANCE_DELAY)
"""The group-level streams configs Samsa serves (Kafka's GroupConfig names)."""

_BROKER_KEYS = {
    "group.streams.session.timeout.ms": "session_timeout_ms",
    "group.streams.min.session.timeout.ms": "min_session_timeout_ms",
    "group.streams.max.session.timeout.ms": "max_session_timeout_ms",
    "group.streams.heartbeat.interval.ms": "heartbeat_interval_ms",
    "group.streams.min.heartbeat.interval.ms": "min_heartbeat_interval_ms",
    "group.streams.max.heartbeat.interval.ms": "max_heartbeat_interval_ms",
    "group.streams.max.size": "max_size",
    "group.streams.num.standby.replicas": "num_standby_replicas",
    "group.streams.max.standby.replicas": "max_standby_replicas",
    "group.streams.initial.rebalance.delay.ms": "initial_rebalance_delay_ms",
    "group.streams.task.offset.interval.ms": "task_offset_interval_ms",
    "group.streams.acceptable.recovery.lag": "acceptable_recovery_lag",
}


def _no_group_configs(group_id: str) -> Mapping[str, str]:
    return {}


@dataclass(frozen=True, slots=True)
class StreamsGroupConfig:
    session_timeout_ms: int = 45_000
    min_session_timeout_ms: int = 45_000
    max_session_timeout_ms: int = 60_000
    heartbeat_interval_ms: int = 5_000
    min_heartbeat_interval_ms: int = 5_000
    max_heartbeat_interval_ms: int = 15_000
    max_size: int = _INT32_MAX
    num_standby_replicas: int = 0
    max_standby_replicas: int = 2
    initial_rebalance_delay_ms: int = 3_000
    """A new group waits this long for more members before its first assignment."""
    task_offset_interval_ms: int = 60_000
    acceptable_recovery_lag: int = 10_000
    assignors: tuple[str, ...] = (STICKY,)

    @classmethod
    def from_properties(cls, props: Mapping[str, Any]) -> StreamsGroupConfig:
        """Read the ``group.streams.*`` keys of a broker property map; others are ignored."""
        values: dict[str, Any] = {}
        for key, name in _BROKER_KEYS.items():
            if key in props:
                values[name] = int(props[key])
        return cls(**values)


class StreamsSettings:
    """The effective settings of each group: its own configs over the broker's."""

    def __init__(
        self, config: StreamsGroupConfig, group_configs: GroupConfigs | None = None
    ) -> None:
        self.config = config
        self.group_configs = group_configs or _no_group_configs

    def _group_int(self, group_id: str, key: str, default: int, low: int, high: int) -> int:
        raw = self.group_configs(group_id).get(key)
        try:
            value = default if raw is None else int(raw)
        except ValueError:
            return default
        return min(max(value, low), high)

    def session_timeout_ms(self, group_id: str) -> int:
        c = self.config
        return self._group_int(
            group_id,
            SESSION_TIMEOUT,
            c.session_timeout_ms,
            c.min_session_timeout_ms,
            c.max_session_timeout_ms,
        )

    def heartbeat_interval_ms(self, group_id: str) -> int:
        c = self.config
        return self._group_int(
            group_id,
            HEARTBEAT_INTERVAL,
            c.heartbeat_interval_ms,
            c.min_heartbeat_interval_ms,
            c.max_heartbeat_interval_ms,
        )

    def num_standby_replicas(self, group_id: str) -> int:
        c = self.config
        return self._group_int(
            group_id, NUM_STANDBY_REPLICAS, c.num_standby_replicas, 0, c.max_standby_replicas
        )

    def initial_rebalance_delay_ms(self, group_id: str) -> int:
        c = self.config
        return self._group_int(
            group_id, INITIAL_REBALANCE_DELAY, c.initial_rebalance_delay_ms, 0, _INT32_MAX
        )

    def assignment_configs(self, group_id: str) -> dict[str, str]:
        """What the assignor is given; a change of it starts a rebalance (Kafka's
        lastAssignmentConfigs)."""
        return {"num.standby.replicas": str(self.num_standby_replicas(group_id))}
