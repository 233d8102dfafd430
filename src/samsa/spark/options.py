"""The ``samsa`` source's options, named and checked as Spark's Kafka connector does.

Every mistake is found here, when Spark plans the query, and named in one
message (``SamsaSparkError``): a missing ``kafka.bootstrap.servers``, not
exactly one of ``subscribe``/``subscribePattern``/``assign``, malformed offset
JSON, ``endingOffsets`` on a stream, ``latest`` as a batch start, Kafka
settings the source manages itself.  Nothing is contacted here, so planning a
bad query fails fast instead of hanging on a broker.

Offset specs follow Spark: ``earliest``, ``latest`` or JSON such as
``{"orders": {"0": 23, "1": -2}}`` where -2 means earliest and -1 latest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from samsa.spark.schemas.columns import (
    ColumnFormat,
    RegistryOptions,
    TypedColumnError,
    parse_formats,
)

EARLIEST, LATEST = -2, -1
OffsetSpec = str | dict[str, dict[int, int]]

# Settings the source sets itself, refused as Spark's Kafka source refuses them.
MANAGED = {
    "kafka.auto.offset.reset": "use startingOffsets instead",
    "kafka.enable.auto.commit": "offsets live in Spark's checkpoint",
    "kafka.key.deserializer": "keys are always binary",
    "kafka.value.deserializer": "values are always binary",
    "kafka.key.serializer": "write a binary or string key column",
    "kafka.value.serializer": "write a binary or string value column",
    "kafka.interceptor.classes": "not supported",
}


class SamsaSparkError(ValueError):
    """A bad option or column, named in the message."""


@dataclass(frozen=True)
class ReadOptions:
    bootstrap: str
    subscribe: tuple[str, ...] | None
    subscribe_pattern: str | None
    assign: dict[str, tuple[int, ...]] | None
    starting: OffsetSpec
    ending: OffsetSpec
    starting_timestamp: int | None
    starting_by_timestamp: dict[str, dict[int, int]] | None
    max_offsets_per_trigger: int | None
    min_partitions: int | None
    fail_on_data_loss: bool
    include_headers: bool
    tiered: Any = None
    """Direct reads of tiered history (``tieredReads``, ``rsm.config.*``): a
    ``direct.options.TieredReadOptions``, which imports this module."""
    client_config: dict[str, str] = field(default_factory=dict)
    key_format: ColumnFormat = field(default_factory=lambda: ColumnFormat("key"))
    value_format: ColumnFormat = field(default_factory=lambda: ColumnFormat("value"))
    registry: RegistryOptions | None = None
    """Typed columns (``valueFormat=avro``...): ``schemas.columns``."""

    def matches(self, topic: str) -> bool:
        """Whether ``topic`` belongs to the query (assign: its listed topics)."""
        if self.subscribe is not None:
            return topic in self.subscribe
        if self.subscribe_pattern is not None:
            return re.fullmatch(self.subscribe_pattern, topic) is not None
        return self.assign is not None and topic in self.assign


@dataclass(frozen=True)
class WriteOptions:
    bootstrap: str
    topic: str | None
    producer_config: dict[str, str]
    key_format: ColumnFormat = field(default_factory=lambda: ColumnFormat("key"))
    value_format: ColumnFormat = field(default_factory=lambda: ColumnFormat("value"))
    registry: RegistryOptions | None = None


def _bool(options: Mapping[str, str], name: str, default: bool) -> bool:
    raw = options.get(name)
    if raw is None:
        return default
    if raw.strip().lower() not in ("true", "false"):
        raise SamsaSparkError(f"option '{name}' must be true or false, got {raw!r}")
    return raw.strip().lower() == "true"


def _positive(options: Mapping[str, str], name: str) -> int | None:
    raw = options.get(name)
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise SamsaSparkError(f"option '{name}' must be a positive integer, got {raw!r}") from None
    if value <= 0:
        raise SamsaSparkError(f"option '{name}' must be a positive integer, got {raw!r}")
    return value


def _partition_json(name: str, raw: str) -> dict[str, dict[int, int]]:
    """``{"topic": {"0": 5}}`` -> ``{"topic": {0: 5}}``, or a SamsaSparkError naming ``name``."""
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise SamsaSparkError(
            f"option '{name}' is not valid JSON ({exc.msg}); expected e.g. "
            '{"topic": {"0": 23, "1": -2}}'
        ) from None
    if not isinstance(parsed, dict):
        raise SamsaSparkError(f"option '{name}' must be a JSON object of topics, got {raw!r}")
    out: dict[str, dict[int, int]] = {}
    for topic, partitions in parsed.items():
        if not isinstance(partitions, dict):
            raise SamsaSparkError(f"option '{name}': topic {topic!r} needs {{partition: offset}}")
        try:
            out[topic] = {int(p): int(o) for p, o in partitions.items()}
        except (TypeError, ValueError):
            raise SamsaSparkError(
                f"option '{name}': partitions and offsets of {topic!r} must be integers"
            ) from None
    return out


def _offset_spec(options: Mapping[str, str], name: str, default: str) -> OffsetSpec:
    raw = options.get(name, default).strip()
    if raw.lower() in ("earliest", "latest"):
        return raw.lower()
    spec = _partition_json(name, raw)
    for topic, partitions in spec.items():
        for p, offset in partitions.items():
            if offset < EARLIEST:
                raise SamsaSparkError(
                    f"option '{name}': offset {offset} of {topic}-{p} is invalid "
                    "(use -2 for earliest, -1 for latest)"
                )
    return spec


def _client_config(options: Mapping[str, str]) -> dict[str, str]:
    """``kafka.*`` options minus the prefix, for the Samsa client."""
    out = {}
    for key, value in options.items():
        lowered = key.lower()
        if not lowered.startswith("kafka."):
            continue
        if lowered in MANAGED:
            raise SamsaSparkError(f"option '{key}' is not supported: {MANAGED[lowered]}")
        out[key[len("kafka.") :]] = value
    return out


def _bootstrap(options: Mapping[str, str]) -> str:
    bootstrap = (options.get("kafka.bootstrap.servers") or "").strip()
    if not bootstrap:
        raise SamsaSparkError("option 'kafka.bootstrap.servers' is required")
    return bootstrap


def parse_read_options(options: Mapping[str, str], *, stream: bool) -> ReadOptions:
    from samsa.spark.direct.options import parse_tiered_options

    bootstrap = _bootstrap(options)
    given = [k for k in ("subscribe", "subscribePattern", "assign") if options.get(k)]
    if len(given) != 1:
        raise SamsaSparkError(
            "exactly one of the options 'subscribe', 'subscribePattern' and 'assign' "
            f"must be given, got {given or 'none'}"
        )
    subscribe = pattern = assign = None
    if "subscribe" in given:
        subscribe = tuple(t.strip() for t in options["subscribe"].split(",") if t.strip())
        if not subscribe:
            raise SamsaSparkError("option 'subscribe' names no topic")
    elif "subscribePattern" in given:
        pattern = options["subscribePattern"]
        try:
            re.compile(pattern)
        except re.error as exc:
            raise SamsaSparkError(f"option 'subscribePattern' is not a regex: {exc}") from None
    else:
        assign = _assign(options["assign"])
    if stream and options.get("endingOffsets"):
        raise SamsaSparkError("option 'endingOffsets' is not supported for streaming queries")
    starting = _offset_spec(options, "startingOffsets", "latest" if stream else "earliest")
    ending = _offset_spec(options, "endingOffsets", "latest")
    if not stream and starting == "latest":
        raise SamsaSparkError("option 'startingOffsets' cannot be 'latest' for batch queries")
    if not stream and ending == "earliest":
        raise SamsaSparkError("option 'endingOffsets' cannot be 'earliest' for batch queries")
    if (
        not stream
        and isinstance(ending, dict)
        and any(o == EARLIEST for parts in ending.values() for o in parts.values())
    ):
        raise SamsaSparkError("option 'endingOffsets' cannot use -2 (earliest) for batch queries")
    timestamp = None
    if options.get("startingTimestamp"):
        try:
            timestamp = int(options["startingTimestamp"])
        except ValueError:
            raise SamsaSparkError(
                "option 'startingTimestamp' must be epoch milliseconds, got "
                f"{options['startingTimestamp']!r}"
            ) from None
    by_timestamp = None
    if options.get("startingOffsetsByTimestamp"):
        by_timestamp = _partition_json(
            "startingOffsetsByTimestamp", options["startingOffsetsByTimestamp"]
        )
    isolation = options.get("kafka.isolation.level", "read_uncommitted")
    if isolation not in ("read_uncommitted", "read_committed"):
        raise SamsaSparkError(
            "option 'kafka.isolation.level' must be read_uncommitted or read_committed, "
            f"got {isolation!r}"
        )
    client = _client_config(options)
    client.pop("bootstrap.servers", None)
    key_format, value_format, registry = _formats(options, subscribe)
    return ReadOptions(
        bootstrap=bootstrap,
        subscribe=subscribe,
        subscribe_pattern=pattern,
        assign=assign,
        starting=starting,
        ending=ending,
        starting_timestamp=timestamp,
        starting_by_timestamp=by_timestamp,
        max_offsets_per_trigger=_positive(options, "maxOffsetsPerTrigger"),
        min_partitions=_positive(options, "minPartitions"),
        fail_on_data_loss=_bool(options, "failOnDataLoss", True),
        include_headers=_bool(options, "includeHeaders", False),
        tiered=parse_tiered_options(options),
        client_config=client,
        key_format=key_format,
        value_format=value_format,
        registry=registry,
    )


def _formats(
    options: Mapping[str, str], topics: tuple[str, ...] | None
) -> tuple[ColumnFormat, ColumnFormat, RegistryOptions | None]:
    try:
        return parse_formats(options, topics)
    except TypedColumnError as exc:
        raise SamsaSparkError(str(exc)) from None


def _assign(raw: str) -> dict[str, tuple[int, ...]]:
    try:
        parsed: Any = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise SamsaSparkError(
            f"option 'assign' is not valid JSON ({exc.msg}); expected e.g. "
            '{"topicA": [0, 1], "topicB": [2]}'
        ) from None
    if not isinstance(parsed, dict) or not all(
        isinstance(ps, list) and all(isinstance(p, int) for p in ps) for ps in parsed.values()
    ):
        raise SamsaSparkError(f"option 'assign' must map topics to partition lists, got {raw!r}")
    return {topic: tuple(ps) for topic, ps in parsed.items()}


def parse_write_options(options: Mapping[str, str]) -> WriteOptions:
    bootstrap = _bootstrap(options)
    config = _client_config(options)
    config.pop("bootstrap.servers", None)
    topic = options.get("topic") or None
    key_format, value_format, registry = _formats(options, (topic,) if topic else None)
    return WriteOptions(bootstrap, topic, config, key_format, value_format, registry)
