"""``spark.read.format("samsa")``: a bounded read of offset ranges.

Planning (on the driver) resolves the partitions and their start and end
offsets once; each Spark partition then reads one range with an assigned
consumer and yields Arrow batches straight from the fetched bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSourceReader

from samsa.spark.offsets import OffsetResolver
from samsa.spark.options import ReadOptions, SamsaSparkError
from samsa.spark.ranges import OffsetRange, plan_ranges, read_range
from samsa.spark.schemas.columns import ReadColumn


class SamsaBatchReader(DataSourceReader):
    def __init__(self, options: ReadOptions, typed: tuple[ReadColumn, ...] = ()) -> None:
        self.options = options
        self.typed = typed

    def partitions(self) -> list[OffsetRange]:
        resolver = OffsetResolver(self.options)
        try:
            tps = resolver.partitions()
            starts = resolver.starting(tps)
            ends = resolver.resolve(self.options.ending, tps, "endingOffsets")
            earliest = resolver.earliest(tps) if self.options.fail_on_data_loss else {}
        finally:
            resolver.close()
        for tp, start in starts.items():
            if tp in earliest and start < earliest[tp]:
                raise SamsaSparkError(
                    f"offsets {start}..{earliest[tp] - 1} of {tp.topic}-{tp.partition} were "
                    "deleted (retention) before they could be read; set failOnDataLoss=false "
                    "to skip them"
                )
            if tp in ends and start > ends[tp]:
                raise SamsaSparkError(
                    f"startingOffsets {start} of {tp.topic}-{tp.partition} is after its "
                    f"endingOffsets {ends[tp]}"
                )
        return plan_ranges(starts, ends, self.options.min_partitions, self.options)

    def read(self, partition: Any) -> Iterator[Any]:
        return read_range(self.options, partition, self.typed)
