"""Settings of share groups, under Kafka's ``group.share.*`` names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class ShareGroupConfig:
    session_timeout_ms: int = 45_000
    """``group.share.session.timeout.ms``: a member silent this long is removed."""
    heartbeat_interval_ms: int = 5_000
    """``group.share.heartbeat.interval.ms``: told to members in every response."""
    max_size: int = 200
    """``group.share.max.size``: members beyond this get GROUP_MAX_SIZE_REACHED."""

    @classmethod
    def from_properties(cls, props: Mapping[str, Any]) -> ShareGroupConfig:
        """Read the ``group.share.*`` membership keys of a broker property map."""
        values: dict[str, Any] = {}
        for key, name in (
            ("group.share.session.timeout.ms", "session_timeout_ms"),
            ("group.share.heartbeat.interval.ms", "heartbeat_interval_ms"),
            ("group.share.max.size", "max_size"),
        ):
            if key in props:
                values[name] = int(props[key])
        return cls(**values)
