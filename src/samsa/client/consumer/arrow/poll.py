"""``Consumer.poll_arrow``: the fetcher's buffered fetches handed out as Arrow record batches.

Kept out of ``consumer.py`` so that module never imports pyarrow (only this
one does, when ``poll_arrow`` is first called) and stays the thin facade.
"""

from __future__ import annotations

from typing import Any

from samsa.client.consumer.arrow.batch import fetched_columns
from samsa.client.consumer.arrow.schema import arrow_schema, require_pyarrow
from samsa.client.consumer.fetch.decoder import PartitionRecords
from samsa.client.consumer.fetch.fetcher import Fetcher

__all__ = ["ArrowTaker"]


class ArrowTaker:
    """One ``poll_arrow`` call's way of taking records from the fetcher, and of joining them."""

    def __init__(
        self,
        fetcher: Fetcher,
        max_records: int | None,
        include_headers: bool,
        spark: bool,
        cfg: dict[str, Any],
    ) -> None:
        self._pa = require_pyarrow()
        self._fetcher = fetcher
        self._max_records = max_records if max_records is not None else 1 << 62
        self._include_headers = include_headers
        self._spark = spark
        self._check_crcs: bool = cfg["check.crcs"]

    def convert(self, chunk: PartitionRecords, position: int) -> Any:
        data, batches, aborted = chunk.raw()
        columns = fetched_columns(data, batches, position, None, aborted, self._check_crcs)
        topic, partition = chunk.tp
        return columns.to_arrow(topic, partition, self._include_headers, self._spark)

    def take(self) -> list[Any]:
        """Record batches with at least one row (a fetch of only markers still moves the position)."""
        batches = self._fetcher.fetched_arrow(self._max_records, self.convert)
        return [b for b in batches if b.num_rows]

    def combine(self, batches: list[Any]) -> Any:
        """One RecordBatch of them all (empty, with the schema, when there are none)."""
        schema = arrow_schema(self._include_headers, self._spark)
        if len(batches) == 1:
            return batches[0]
        if not batches:
            return _empty_batch(self._pa, schema)
        table = self._pa.Table.from_batches(batches, schema=schema).combine_chunks()
        return table.to_batches()[0]


def _empty_batch(pa: Any, schema: Any) -> Any:
    return pa.RecordBatch.from_arrays([pa.array([], type=f.type) for f in schema], schema=schema)
