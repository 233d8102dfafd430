"""Read one ``DirectRange`` as Arrow record batches, straight from the object store (on an executor).

The executor's twin of ``PartitionRangeReader``, called the same way and
yielding the same batches: the segment's bytes are read in windows
(``tiered.direct_read.scan_segment``) by a thread of its own -- the stores
are async, and the thread's event loop keeps the next window's read in
flight while this thread decodes -- and each window's whole batches go
through the columnar path a Fetch answer goes through
(``client.arrow.fetched_to_arrow``: control batches and, under
read_committed, aborted transactions dropped, offsets outside the range cut
off), so the rows are the brokers' rows.  At most ``_AHEAD`` windows wait
beside the one being decoded and the one being read: an executor never
holds a whole segment.

A segment deleted from the store since the driver planned (total retention)
is data loss: the read fails, naming the offsets, or with
``failOnDataLoss=false`` yields nothing and logs a warning, as the broker
read path does for records retention removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from samsa.spark.direct.options import StoreSettings
from samsa.spark.direct.partition import DirectRange, overlapping
from samsa.spark.options import SamsaSparkError
from samsa.tiered.direct_read import SegmentChunk, read_bounds, scan_segment
from samsa.tiered.store.base import RemoteObjectNotFoundError
from samsa.tiered.store.settings import open_remote_store

__all__ = ["WINDOW_BYTES", "DirectRangeReader"]

log = logging.getLogger("samsa.spark")

WINDOW_BYTES = 8 * 1024 * 1024
"""Bytes per range read: large enough that a read's latency is small beside its
transfer, small enough that a few of them are a modest share of an executor."""
_AHEAD = 1
_END = object()


class _Feed:
    """The range's chunks, read ahead by a thread running the store's event loop."""

    def __init__(self, store: StoreSettings, part: DirectRange, window: int) -> None:
        self._settings, self._part, self._window = store, part, window
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=_AHEAD)
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"direct-read-{part.topic}-{part.partition}", daemon=True
        )

    def __iter__(self) -> Iterator[SegmentChunk]:
        self._thread.start()
        while True:
            item = self._queue.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(queue.Empty):
            while True:  # unblock a put waiting for room
                self._queue.get_nowait()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    def _put(self, item: Any) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        try:
            asyncio.run(self._read())
        except BaseException as exc:  # handed to the caller's thread, raised there
            self._put(exc)
        else:
            self._put(_END)

    async def _read(self) -> None:
        part = self._part
        store = open_remote_store(self._settings)
        try:
            first, last = 0, part.segment_size
            if not part.whole_segment:
                index = await store.get(part.index_key)
                first, last = read_bounds(
                    index, part.segment_start, part.start, part.end, part.segment_size
                )
            async for chunk in scan_segment(store, part.log_key, first, last, self._window):
                if not await asyncio.to_thread(self._put, chunk):
                    return
                if chunk.last_offset >= part.end - 1:
                    return
        finally:
            await store.close()


class DirectRangeReader:
    """Iterate over a ``DirectRange``'s records in ``[start_offset, end_offset)`` as RecordBatches.

    The arguments are ``PartitionRangeReader``'s (``config`` gives
    ``isolation.level`` and ``check.crcs``), plus the partition and the store."""

    def __init__(
        self,
        config: Mapping[str, Any],
        topic: str,
        partition: int,
        start_offset: int,
        end_offset: int,
        *,
        part: DirectRange,
        store: StoreSettings,
        include_headers: bool = False,
        fail_on_data_loss: bool = True,
        spark: bool = False,
        max_rows_per_batch: int = 100_000,
        window_bytes: int = WINDOW_BYTES,
    ) -> None:
        if (topic, partition) != (part.topic, part.partition):
            raise ValueError(f"{topic}-{partition} is not the partition of {part}")
        self._part = part
        self._start = max(start_offset, part.segment_start)
        self._end = min(end_offset, part.segment_end + 1)
        self._include_headers, self._spark = include_headers, spark
        self._fail_on_data_loss = fail_on_data_loss
        self._max_rows = max_rows_per_batch
        self._check_crcs = str(config.get("check.crcs", "true")).lower() != "false"
        self._read_committed = config.get("isolation.level") == "read_committed"
        self._feed = _Feed(store, part, window_bytes)

    def __iter__(self) -> Iterator[Any]:
        from samsa.client.arrow import fetched_to_arrow

        part = self._part
        try:
            for chunk in self._feed:
                if chunk.first_offset >= self._end:
                    return
                aborted = (
                    overlapping(part.aborted, chunk.first_offset, chunk.last_offset + 1)
                    if self._read_committed
                    else []
                )
                batch, _next = fetched_to_arrow(
                    chunk.data,
                    topic=part.topic,
                    partition=part.partition,
                    start_offset=self._start,
                    end_offset=self._end,
                    aborted=aborted,
                    check_crcs=self._check_crcs,
                    include_headers=self._include_headers,
                    spark=self._spark,
                )
                for at in range(0, batch.num_rows, self._max_rows):
                    yield batch.slice(at, self._max_rows)
                if chunk.last_offset >= self._end - 1:
                    return
        except RemoteObjectNotFoundError as exc:
            where = f"offsets {self._start}..{self._end - 1} of {part.topic}-{part.partition}"
            if self._fail_on_data_loss:
                raise SamsaSparkError(
                    f"{where} were deleted from the remote tier (retention) before they could "
                    f"be read ({exc}); set failOnDataLoss=false to skip them"
                ) from None
            log.warning("%s were deleted from the remote tier; skipping them: %s", where, exc)
        finally:
            self._feed.close()

    def close(self) -> None:
        self._feed.close()

    def __enter__(self) -> DirectRangeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
