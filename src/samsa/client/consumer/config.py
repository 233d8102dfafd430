"""The consumer's configuration: Kafka's key names, defaults and checks.

Shares the network keys (``COMMON_DEFS``) with the producer; the consumer's
own keys follow the Java client's ``ConsumerConfig`` names and defaults, so a
properties file written for Kafka's consumer reads the same here.  Values are
checked at construction: an unknown key, a bad value or a broken cross-key
rule (heartbeat longer than the session) raises ``ConfigError`` before any
socket is opened.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from samsa.client.config import (
    COMMON_DEFS,
    ConfigDef,
    at_least,
    parse_bool,
    parse_config,
    parse_int,
    parse_optional_callable,
)
from samsa.errors import ConfigError

__all__ = ["ASSIGNOR_NAMES", "CONSUMER_DEFS", "parse_consumer_config"]

ASSIGNOR_NAMES = ("range", "roundrobin", "cooperative-sticky")


def _optional_str(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    return value


def _choice(*names: str) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        if not isinstance(value, str) or value.strip().lower() not in names:
            raise ValueError(f"must be one of {', '.join(names)}")
        return value.strip().lower()

    return parse


def _assignors(value: Any) -> tuple[Any, ...]:
    """Names (comma separated or a list) or assignor objects, in preference order."""
    items = value.split(",") if isinstance(value, str) else list(value)
    out: list[Any] = []
    for item in items:
        if isinstance(item, str):
            name = item.strip().lower()
            if not name:
                continue
            if name not in ASSIGNOR_NAMES:
                raise ValueError(f"unknown assignor {item!r}; known: {', '.join(ASSIGNOR_NAMES)}")
            out.append(name)
        elif hasattr(item, "assign") and hasattr(item, "name"):
            out.append(item)
        else:
            raise ValueError(f"{item!r} is neither an assignor name nor an assignor")
    if not out:
        raise ValueError("at least one assignor is required")
    return tuple(out)


CONSUMER_DEFS: tuple[ConfigDef, ...] = (
    *COMMON_DEFS,
    ConfigDef("group.id", _optional_str, None, doc="None: no group (assign() only)"),
    ConfigDef("group.instance.id", _optional_str, None, doc="static membership (KIP-345)"),
    ConfigDef(
        "group.protocol",
        _choice("classic", "consumer"),
        "classic",
        doc="consumer: KIP-848 heartbeats, the broker assigns",
    ),
    ConfigDef(
        "group.remote.assignor", _optional_str, None, doc="server assignor (consumer protocol)"
    ),
    ConfigDef("enable.auto.commit", parse_bool, True),
    ConfigDef("auto.commit.interval.ms", parse_int, 5000, at_least(0)),
    ConfigDef("auto.offset.reset", _choice("latest", "earliest", "none"), "latest"),
    ConfigDef("isolation.level", _choice("read_uncommitted", "read_committed"), "read_uncommitted"),
    ConfigDef("max.poll.records", parse_int, 500, at_least(1)),
    ConfigDef("max.poll.interval.ms", parse_int, 300000, at_least(1)),
    ConfigDef("session.timeout.ms", parse_int, 45000, at_least(1)),
    ConfigDef("heartbeat.interval.ms", parse_int, 3000, at_least(1)),
    ConfigDef("fetch.min.bytes", parse_int, 1, at_least(0)),
    ConfigDef("fetch.max.wait.ms", parse_int, 500, at_least(0)),
    ConfigDef("fetch.max.bytes", parse_int, 52428800, at_least(0)),
    ConfigDef("max.partition.fetch.bytes", parse_int, 1048576, at_least(0)),
    ConfigDef("partition.assignment.strategy", _assignors, ("range", "cooperative-sticky")),
    ConfigDef("key.deserializer", parse_optional_callable, None),
    ConfigDef("value.deserializer", parse_optional_callable, None),
    ConfigDef("check.crcs", parse_bool, True),
    ConfigDef("exclude.internal.topics", parse_bool, True),
    ConfigDef("allow.auto.create.topics", parse_bool, True),
    ConfigDef("client.rack", _optional_str, None),
    # Overrides the shared 64 KiB: a fixed SO_RCVBUF turns off the kernel's
    # receive-window autotuning, and a fetch stream of megabytes then arrives
    # in 64 KiB reads (~5 % of consuming).  The OS default is also what
    # librdkafka and kafka-python use.
    ConfigDef("receive.buffer.bytes", parse_int, -1, at_least(-1), "-1: OS default"),
    # Samsa-only (Kafka's client has no such switch): false sends a full Fetch
    # every time instead of using incremental fetch sessions (KIP-227); for benchmarks.
    ConfigDef("fetch.sessions.enable", parse_bool, True),
)


def parse_consumer_config(values: Mapping[str, Any]) -> dict[str, Any]:
    """Parse and cross-check; raises ConfigError naming the offending key."""
    cfg = parse_config(CONSUMER_DEFS, values, "consumer")
    if cfg["heartbeat.interval.ms"] >= cfg["session.timeout.ms"]:
        raise ConfigError(
            "heartbeat.interval.ms must be lower than session.timeout.ms "
            f"({cfg['heartbeat.interval.ms']} >= {cfg['session.timeout.ms']})"
        )
    if cfg["group.instance.id"] is not None and cfg["group.id"] is None:
        raise ConfigError("group.instance.id requires group.id")
    return cfg
