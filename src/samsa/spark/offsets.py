"""Where a query's partitions start and end: resolved on the driver through Admin.

Spark keeps a streaming query's offsets in its checkpoint as JSON, compares
them as strings, and turns int keys into strings on the way, so offsets are
always ``{"topic": {"0": 42}}`` built in one sorted order (topics by name,
partitions by number): the same positions always give the same JSON.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from samsa.client.admin import EARLIEST, LATEST, Admin
from samsa.client.metadata import TopicPartition
from samsa.errors import SamsaError
from samsa.spark.options import ReadOptions, SamsaSparkError

Offsets = dict[TopicPartition, int]
DEFAULT_TIMEOUT_MS = 30_000


def to_json(offsets: Offsets) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets, key=lambda tp: (tp.topic, tp.partition)):
        out.setdefault(tp.topic, {})[str(tp.partition)] = int(offsets[tp])
    return out


def from_json(value: dict[str, Any]) -> Offsets:
    return {
        TopicPartition(topic, int(p)): int(o)
        for topic, parts in value.items()
        for p, o in parts.items()
    }


class OffsetResolver:
    """Driver-side answers about a query's partitions and offsets (one Admin, lazily)."""

    def __init__(self, options: ReadOptions) -> None:
        self.options = options
        self._admin: Admin | None = None
        self._isolation = (
            1 if options.client_config.get("isolation.level") == "read_committed" else 0
        )

    def _client(self) -> Admin:
        if self._admin is None:
            config: dict[str, Any] = {"request.timeout.ms": DEFAULT_TIMEOUT_MS}
            config.update(self.options.client_config)
            config["bootstrap.servers"] = self.options.bootstrap
            config.pop("isolation.level", None)
            config.pop("group.id", None)
            try:
                self._admin = Admin(config)
            except SamsaError as exc:
                raise SamsaSparkError(f"bad kafka.* client settings: {exc}") from None
        return self._admin

    def close(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None

    def _unreachable(self, exc: Exception) -> SamsaSparkError:
        return SamsaSparkError(
            f"cannot read offsets from kafka.bootstrap.servers={self.options.bootstrap}: {exc}"
        )

    def partitions(self) -> list[TopicPartition]:
        """The partitions the query reads now (new ones appear for subscribePattern)."""
        opts = self.options
        if opts.assign is not None:
            return sorted(TopicPartition(t, p) for t, ps in opts.assign.items() for p in ps)
        admin = self._client()
        try:
            names = sorted(t for t in admin.list_topics() if opts.matches(t))
            described = admin.describe_topics(names) if names else {}
        except SamsaError as exc:
            raise self._unreachable(exc) from None
        return [
            TopicPartition(name, p.partition) for name in names for p in described[name].partitions
        ]

    def _list(self, specs: dict[TopicPartition, int]) -> Offsets:
        if not specs:
            return {}
        try:
            found = self._client().list_offsets(specs, isolation_level=self._isolation)
        except SamsaError as exc:
            raise self._unreachable(exc) from None
        return {tp: offset for tp, (offset, _ts) in found.items()}

    def earliest(self, tps: Iterable[TopicPartition]) -> Offsets:
        return self._list(dict.fromkeys(tps, EARLIEST))

    def latest(self, tps: Iterable[TopicPartition]) -> Offsets:
        return self._list(dict.fromkeys(tps, LATEST))

    def resolve(self, spec: Any, tps: list[TopicPartition], what: str) -> Offsets:
        """``earliest``/``latest``/per-partition JSON (-2/-1) -> offsets for ``tps``."""
        if spec == "earliest":
            return self.earliest(tps)
        if spec == "latest":
            return self.latest(tps)
        wanted: dict[TopicPartition, int] = {}
        for topic, parts in spec.items():
            for p, offset in parts.items():
                wanted[TopicPartition(topic, p)] = offset
        missing = [tp for tp in tps if tp not in wanted]
        if missing:
            tp = missing[0]
            raise SamsaSparkError(
                f"option '{what}' has no offset for {tp.topic}-{tp.partition} "
                f"(it must name every partition the query reads)"
            )
        special = {tp: o for tp, o in wanted.items() if o in (EARLIEST, LATEST)}
        out = {tp: o for tp, o in wanted.items() if tp in tps and o >= 0}
        out.update(self._list({tp: o for tp, o in special.items() if tp in tps}))
        return out

    def starting(self, tps: list[TopicPartition]) -> Offsets:
        """Start offsets: startingTimestamp, else startingOffsetsByTimestamp, else startingOffsets."""
        opts = self.options
        if opts.starting_timestamp is not None:
            return self._by_time(dict.fromkeys(tps, opts.starting_timestamp), "startingTimestamp")
        if opts.starting_by_timestamp is not None:
            times: dict[TopicPartition, int] = {}
            for tp in tps:
                parts = opts.starting_by_timestamp.get(tp.topic, {})
                if tp.partition not in parts:
                    raise SamsaSparkError(
                        f"option 'startingOffsetsByTimestamp' has no timestamp for "
                        f"{tp.topic}-{tp.partition}"
                    )
                times[tp] = parts[tp.partition]
            return self._by_time(times, "startingOffsetsByTimestamp")
        return self.resolve(opts.starting, tps, "startingOffsets")

    def _by_time(self, times: dict[TopicPartition, int], what: str) -> Offsets:
        """The first offset at or after each timestamp; past the last record: the end."""
        found = self._list(times)
        ends = self.latest([tp for tp, o in found.items() if o < 0])
        return {tp: (ends[tp] if o < 0 else o) for tp, o in found.items()}
