"""Settings of KIP-848 consumer groups, under Kafka's ``group.consumer.*`` names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_INT32_MAX = 2**31 - 1
KNOWN_ASSIGNORS = ("uniform", "range")
MIGRATION_POLICIES = ("disabled", "upgrade", "downgrade", "bidirectional")
"""``group.consumer.migration.policy`` values (KIP-848's online migration)."""


def assignor_name(configured: str) -> str:
    """Kafka's config takes class names (``...assignor.UniformAssignor``); members send
    the short name.  Both spellings map to the short one."""
    short = configured.rsplit(".", 1)[-1].strip()
    if short.endswith("Assignor"):
        short = short[: -len("Assignor")]
    return short.lower()


@dataclass(frozen=True, slots=True)
class ConsumerGroupConfig:
    session_timeout_ms: int = 45_000
    """``group.consumer.session.timeout.ms``: a member silent this long is fenced."""
    heartbeat_interval_ms: int = 5_000
    """``group.consumer.heartbeat.interval.ms``: told to members in every response."""
    assignors: tuple[str, ...] = KNOWN_ASSIGNORS
    """``group.consumer.assignors``: accepted server assignors; the first is the default."""
    max_size: int = _INT32_MAX
    """``group.consumer.max.size``: members beyond this get GROUP_MAX_SIZE_REACHED."""
    migration_policy: str = "bidirectional"
    """``group.consumer.migration.policy``: whether a classic group with members becomes
    a consumer group when a consumer-protocol member joins (upgrade), and a consumer
    group whose last consumer-protocol member leaves becomes classic again (downgrade)."""

    @property
    def upgrade_enabled(self) -> bool:
        return self.migration_policy in ("upgrade", "bidirectional")

    @property
    def downgrade_enabled(self) -> bool:
        return self.migration_policy in ("downgrade", "bidirectional")

    @classmethod
    def from_properties(cls, props: Mapping[str, Any]) -> ConsumerGroupConfig:
        """Read the ``group.consumer.*`` keys of a broker property map; others are ignored."""
        values: dict[str, Any] = {}
        for key, name in (
            ("group.consumer.session.timeout.ms", "session_timeout_ms"),
            ("group.consumer.heartbeat.interval.ms", "heartbeat_interval_ms"),
            ("group.consumer.max.size", "max_size"),
        ):
            if key in props:
                values[name] = int(props[key])
        policy = props.get("group.consumer.migration.policy")
        if policy is not None:
            values["migration_policy"] = str(policy).strip().lower()
            if values["migration_policy"] not in MIGRATION_POLICIES:
                raise ValueError(
                    f"group.consumer.migration.policy: {policy!r} is not one of"
                    f" {', '.join(MIGRATION_POLICIES)}"
                )
        raw = props.get("group.consumer.assignors")
        if raw is not None:
            items = raw.split(",") if isinstance(raw, str) else list(raw)
            names = tuple(assignor_name(a) for a in items if str(a).strip())
            unknown = [n for n in names if n not in KNOWN_ASSIGNORS]
            if unknown or not names:
                raise ValueError(
                    f"group.consumer.assignors: unknown assignor(s) {unknown or items};"
                    f" known are {', '.join(KNOWN_ASSIGNORS)}"
                )
            values["assignors"] = names
        return cls(**values)
