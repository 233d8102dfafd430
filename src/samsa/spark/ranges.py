"""Offset ranges as Spark input partitions, and reading one on an executor.

An executor gets only the pickled partition and the options (nothing the
driver learned survives), so a range carries everything its read needs.  Large
ranges are split when ``minPartitions`` asks for more Spark partitions than
the topics have, in proportion to their sizes, as Spark's Kafka source does.
Ranges of a tiered topic's history may be read straight from the object
store instead of through the brokers (``direct``: planned there, read by
the reader ``direct.partition.reader_for`` picks).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import InputPartition

from samsa.client.metadata import TopicPartition
from samsa.spark.options import ReadOptions, SamsaSparkError
from samsa.spark.schemas.columns import ReadColumn, TypedColumnError, decode_batches

log = logging.getLogger("samsa.spark")


@dataclass
class OffsetRange(InputPartition):
    """Offsets ``[start, end)`` of one topic partition."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start


def plan_ranges(
    starts: dict[TopicPartition, int],
    ends: dict[TopicPartition, int],
    min_partitions: int | None,
    options: ReadOptions | None = None,
) -> list[OffsetRange]:
    """Non-empty ranges for every partition in ``ends``, split up to ``min_partitions``;
    with ``options``, the history the object store holds planned as direct reads."""
    ranges = [
        OffsetRange(tp.topic, tp.partition, starts[tp], end)
        for tp, end in sorted(ends.items(), key=lambda kv: (kv[0].topic, kv[0].partition))
        if tp in starts and end > starts[tp]
    ]
    if options is not None and options.tiered is not None and options.tiered.plans_direct_reads:
        from samsa.spark.direct.planning import plan_direct

        ranges = plan_direct(options, ranges)
    return split_ranges(ranges, min_partitions)


def split_ranges(ranges: list[OffsetRange], min_partitions: int | None) -> list[OffsetRange]:
    """``ranges`` split, in proportion to their sizes, into about ``min_partitions``."""
    if not min_partitions or min_partitions <= len(ranges):
        return ranges
    total = sum(r.size for r in ranges)
    out: list[OffsetRange] = []
    for r in ranges:
        pieces = max(1, min(r.size, round(min_partitions * r.size / total)))
        step, extra = divmod(r.size, pieces)
        start = r.start
        for i in range(pieces):
            end = start + step + (1 if i < extra else 0)
            out.append(dataclasses.replace(r, start=start, end=end))
            start = end
    return out


def read_range(
    options: ReadOptions, partition: Any, typed: tuple[ReadColumn, ...] = ()
) -> Iterator[Any]:
    """The Arrow batches of one range, in Spark's schema (runs on an executor);
    ``typed``: columns decoded with the schema registry (``schemas.columns``)."""
    if not isinstance(partition, OffsetRange):
        return  # Spark's stand-in partition for "nothing to read"
    from samsa.spark.direct.partition import reader_for

    config = {**options.client_config, "bootstrap.servers": options.bootstrap}
    with reader_for(options, partition)(
        config,
        partition.topic,
        partition.partition,
        partition.start,
        partition.end,
        include_headers=options.include_headers,
        fail_on_data_loss=options.fail_on_data_loss,
        spark=True,
    ) as reader:
        if not typed:
            yield from reader
            return
        assert options.registry is not None
        try:
            yield from decode_batches(iter(reader), typed, options.registry)
        except TypedColumnError as exc:
            raise SamsaSparkError(str(exc)) from None
