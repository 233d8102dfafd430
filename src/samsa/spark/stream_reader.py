"""``spark.readStream.format("samsa")``: micro-batches of offset ranges.

Spark keeps the offsets in its checkpoint, so a restarted query resumes right
after the last committed micro-batch: each batch reads exactly ``[start, end)``
of every partition, nothing twice and nothing skipped.  This object lives in
one driver-side process for the whole query (``latestOffset``, ``partitions``,
``commit``); ``read`` runs on executors from the options and the range alone.

* ``maxOffsetsPerTrigger`` caps a batch through Spark's read-limit API
  (``ReadMaxRows``), shared among partitions in proportion to what each has
  waiting, as Spark's Kafka source does.
* ``trigger(availableNow=True)`` reads up to the offsets that were latest when
  the query started, then stops.
* New partitions and new topics matching ``subscribePattern`` are picked up at
  the next batch, from their earliest offset.
* Records deleted by retention before they were read fail the query when
  ``failOnDataLoss`` (default), else they are skipped with a warning.
* ``reportLatestOffset`` lets Spark's progress show how far behind the query is.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from samsa.spark.offsets import OffsetResolver, Offsets, from_json, to_json
from samsa.spark.options import ReadOptions, SamsaSparkError
from samsa.spark.ranges import OffsetRange, plan_ranges, read_range
from samsa.spark.schemas.columns import ReadColumn

log = logging.getLogger("samsa.spark")


def cap(start: Offsets, latest: Offsets, max_rows: int) -> Offsets:
    """At most ``max_rows`` offsets in all, shared by what each partition has waiting."""
    waiting = {tp: max(latest[tp] - start.get(tp, latest[tp]), 0) for tp in latest}
    total = sum(waiting.values())
    if total <= max_rows:
        return dict(latest)
    out = {}
    given = 0
    for tp in sorted(latest, key=lambda tp: (tp.topic, tp.partition)):
        share = waiting[tp] * max_rows // total
        out[tp] = start.get(tp, latest[tp]) + share
        given += share
    # Hand out what integer division left over, so a batch always makes progress.
    for tp in sorted(latest, key=lambda tp: (tp.topic, tp.partition)):
        if given >= max_rows:
            break
        if out[tp] < latest[tp]:
            out[tp] += 1
            given += 1
    return out


class SamsaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: ReadOptions, typed: tuple[ReadColumn, ...] = ()) -> None:
        self.options = options
        self.typed = typed
        self._resolver: OffsetResolver | None = None
        self._latest: Offsets | None = None
        self._available_now: Offsets | None = None

    @property
    def resolver(self) -> OffsetResolver:
        if self._resolver is None:
            self._resolver = OffsetResolver(self.options)
        return self._resolver

    def initialOffset(self) -> dict[str, Any]:
        tps = self.resolver.partitions()
        return to_json(self.resolver.starting(tps))

    def getDefaultReadLimit(self) -> ReadLimit:
        limit = self.options.max_offsets_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxRows(limit)

    def prepareForTriggerAvailableNow(self) -> None:
        tps = self.resolver.partitions()
        self._available_now = self.resolver.latest(tps)

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        begin = from_json(start)
        tps = self.resolver.partitions()
        latest = self.resolver.latest(tps)
        self._latest = latest
        new = [tp for tp in tps if tp not in begin]
        if new:  # partitions that appeared since: read them from their start
            begin.update(self.resolver.earliest(new))
        target = dict(latest)
        if self._available_now is not None:
            target = {
                tp: min(o, self._available_now.get(tp, begin[tp])) for tp, o in target.items()
            }
        target = {tp: max(o, begin[tp]) for tp, o in target.items()}
        if isinstance(limit, ReadMaxRows):
            target = cap(begin, target, limit.max_rows)
        for tp, offset in begin.items():
            target.setdefault(tp, offset)  # a vanished partition keeps its place
        end = to_json(target)
        return start if end == to_json(begin) and not new else end

    def reportLatestOffset(self) -> dict[str, Any] | None:
        return None if self._latest is None else to_json(self._latest)

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[OffsetRange]:
        begin, finish = from_json(start), from_json(end)
        missing = [tp for tp in finish if tp not in begin]
        if missing:
            begin.update(self.resolver.earliest(missing))
        self._check_data_loss(begin, finish)
        return plan_ranges(begin, finish, self.options.min_partitions, self.options)

    def _check_data_loss(self, begin: Offsets, finish: Offsets) -> None:
        earliest = self.resolver.earliest([tp for tp in finish if finish[tp] > begin[tp]])
        for tp, first in earliest.items():
            if begin[tp] < first:
                message = (
                    f"offsets {begin[tp]}..{first - 1} of {tp.topic}-{tp.partition} were deleted "
                    "(retention) before the query read them"
                )
                if self.options.fail_on_data_loss:
                    raise SamsaSparkError(message + "; set failOnDataLoss=false to skip them")
                log.warning("%s; skipping them (failOnDataLoss=false)", message)
                begin[tp] = first
        for tp in finish:
            if finish[tp] < begin[tp]:
                message = f"{tp.topic}-{tp.partition} went back from {begin[tp]} to {finish[tp]}"
                if self.options.fail_on_data_loss:
                    raise SamsaSparkError(message + " (topic re-created?)")
                log.warning("%s; reading nothing of it in this batch", message)
                finish[tp] = begin[tp]

    def read(self, partition: Any) -> Iterator[Any]:
        return read_range(self.options, partition, self.typed)

    def commit(self, end: dict[str, Any]) -> None:
        """Offsets live in Spark's checkpoint; nothing to commit to the broker."""

    def stop(self) -> None:
        if self._resolver is not None:
            self._resolver.close()
