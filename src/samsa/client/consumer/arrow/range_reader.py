"""Read one partition's offset range as Arrow record batches: what a Spark task does.

A ``PartitionRangeReader`` owns an assigned (non-group) fetch pipeline --
the consumer's own ``Fetcher``, ``SubscriptionState`` and network client --
and hands out the records with ``start_offset <= offset < end_offset`` as
``pyarrow.RecordBatch`` es, in offset order, built by the columnar path
(``arrow.batch``).  The next Fetch is on the wire before a batch is handed
to the caller, so the broker works while the caller does.

When is the range done?  When the position reaches ``end_offset``; also when
compaction removed the range's last records: a fetch at the position answered
with no records while the high watermark (last stable offset under
read_committed) is at or past ``end_offset`` means nothing below the end is
left to read.

Records that retention deleted (the range starts below the log start offset,
or the broker answers OFFSET_OUT_OF_RANGE midway) raise ``DataLossError``
with ``fail_on_data_loss``; without it the reader logs a warning and carries
on from the earliest offset still stored.  A broker that never answers makes
the reader raise ``KafkaTimeoutError`` after ``request.timeout.ms`` without
progress, never hang.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any

from samsa.client.consumer.arrow.batch import fetched_columns
from samsa.client.consumer.arrow.schema import require_pyarrow
from samsa.client.consumer.config import parse_consumer_config
from samsa.client.consumer.consumer import build_network_client
from samsa.client.consumer.errors import OffsetOutOfRangeError
from samsa.client.consumer.fetch.decoder import PartitionRecords
from samsa.client.consumer.fetch.fetcher import Fetcher
from samsa.client.consumer.fetch.offsets import EARLIEST, LATEST, OffsetFetcher
from samsa.client.consumer.network import monotonic_ms
from samsa.client.consumer.subscription import SubscriptionState
from samsa.client.errors import DataLossError, KafkaTimeoutError
from samsa.client.metadata import TopicPartition

__all__ = ["PartitionRangeReader"]

log = logging.getLogger(__name__)

# Keys that only mean something to a group member; a range reader has no group.
_GROUP_KEYS = ("group.id", "group.instance.id", "enable.auto.commit", "auto.offset.reset")
# How long one wait on the network may last, so the progress deadline is checked often.
_WAIT_SLICE_MS = 200


class PartitionRangeReader:
    """Iterate over ``topic``/``partition`` records in ``[start_offset, end_offset)`` as RecordBatches.

    Use as a context manager (or call :meth:`close`).  ``config`` is the
    usual client config (``bootstrap.servers``, ``isolation.level``,
    ``fetch.max.bytes``, ``max.partition.fetch.bytes``, ``client.id``...).
    Batches hold at most ``max_rows_per_batch`` rows and have
    ``arrow_schema(include_headers, spark)``.
    """

    def __init__(
        self,
        config: Mapping[str, Any],
        topic: str,
        partition: int,
        start_offset: int,
        end_offset: int,
        *,
        include_headers: bool = False,
        fail_on_data_loss: bool = True,
        spark: bool = False,
        max_rows_per_batch: int = 100_000,
    ) -> None:
        require_pyarrow()
        if start_offset < 0 or end_offset < 0:
            raise ValueError(f"offsets must be >= 0, got {start_offset}..{end_offset}")
        if max_rows_per_batch < 1:
            raise ValueError(f"max_rows_per_batch must be >= 1, got {max_rows_per_batch}")
        settings = {k: v for k, v in config.items() if k not in _GROUP_KEYS}
        settings["auto.offset.reset"] = "none"
        # One partition for one short task: a fetch session would save a few
        # bytes per fetch and hold one of the broker's slots after the task
        # ends (the reader mostly closes with a fetch parked, so sends no
        # FINAL_EPOCH), crowding out consumers that gain from one.
        settings["fetch.sessions.enable"] = False
        cfg = parse_consumer_config(settings)
        self._tp = TopicPartition(topic, partition)
        self._start, self._end = start_offset, end_offset
        self._include_headers, self._spark = include_headers, spark
        self._fail_on_data_loss = fail_on_data_loss
        self._max_rows = max_rows_per_batch
        self._check_crcs: bool = cfg["check.crcs"]
        self._read_committed = cfg["isolation.level"] == "read_committed"
        self._timeout_ms: int = cfg["request.timeout.ms"]
        self._bootstrap = cfg["bootstrap.servers"]
        self._client = build_network_client(cfg, self._timeout_ms)
        self._subs = SubscriptionState("none")
        self._subs.assign_from_user([self._tp])
        self._subs.seek(self._tp, start_offset)
        self._client.metadata.add_topic(topic)
        self._fetcher = Fetcher(self._client, self._subs, cfg)
        self._offsets = OffsetFetcher(self._client, self._subs, 1 if self._read_committed else 0)
        self._closed = False
        self.aborted_transactions: set[tuple[int, int]] = set()
        """(first offset, producer id) of every aborted transaction the broker
        listed with the records read so far (read_committed): what a reader of
        the same partition elsewhere, e.g. straight from the remote tier, needs
        to drop those transactions' records before this range."""

    # -- iteration -------------------------------------------------------------
    def __iter__(self) -> Iterator[Any]:
        st = self._subs.state(self._tp)
        fetcher, client = self._fetcher, self._client
        progress_deadline = monotonic_ms() + self._timeout_ms
        while not self._closed:
            assert st.position is not None
            if st.position >= self._end or self._compacted_to_end(st):
                return
            try:
                batches = fetcher.fetched_arrow(self._max_rows, self._convert)
            except OffsetOutOfRangeError as exc:
                if exc.offset != st.position:
                    continue  # answered to a fetch from before the last skip
                self._skip_lost_records(st.position)
                progress_deadline = monotonic_ms() + self._timeout_ms
                continue
            if batches:
                progress_deadline = monotonic_ms() + self._timeout_ms
                if st.position < self._end and fetcher.send_fetches():
                    client.poll(0)  # the next fetch goes out before the caller works
                for batch in batches:
                    if batch.num_rows:
                        yield batch
                continue
            fetcher.send_fetches()
            left = progress_deadline - monotonic_ms()
            if left <= 0:
                raise self._stalled(st)
            client.poll(min(left, _WAIT_SLICE_MS))

    def _convert(self, chunk: PartitionRecords, position: int) -> Any:
        data, batches, aborted = chunk.raw()
        self.aborted_transactions.update(aborted)
        columns = fetched_columns(data, batches, position, self._end, aborted, self._check_crcs)
        return columns.to_arrow(
            self._tp.topic, self._tp.partition, self._include_headers, self._spark
        )

    def _compacted_to_end(self, st: Any) -> bool:
        """Nothing stored from the position up to a log end at or past ``end_offset``."""
        log_end = st.last_stable_offset if self._read_committed else st.high_watermark
        return st.last_empty_fetch == st.position and log_end >= self._end

    def _skip_lost_records(self, requested: int) -> None:
        """The position fell out of the log: fail (``fail_on_data_loss``) or move to what is left."""
        edges = []
        for which in (EARLIEST, LATEST):
            found = self._offsets.offsets_by_times({self._tp: which}, self._timeout_ms)
            edge = found.get(self._tp)
            edges.append(edge[0] if edge is not None else 0)
        first, last = edges
        if self._fail_on_data_loss:
            raise DataLossError(self._tp.topic, self._tp.partition, requested, first, last)
        skip_to = first if requested < first else self._end
        log.warning(
            "data loss in %s-%d: offset %d is not available (log offsets %d..%d); "
            "fail_on_data_loss is off, continuing from %d",
            self._tp.topic, self._tp.partition, requested, first, last, skip_to,
        )  # fmt: skip
        self._subs.seek(self._tp, skip_to)

    def _stalled(self, st: Any) -> KafkaTimeoutError:
        where = f"{self._tp.topic}-{self._tp.partition}"
        if st.high_watermark < 0:
            return KafkaTimeoutError(
                f"no fetch answer for {where} within request.timeout.ms={self._timeout_ms}: "
                f"is bootstrap.servers={self._bootstrap} reachable and the topic there?"
            )
        bound = "last stable offset" if self._read_committed else "high watermark"
        log_end = st.last_stable_offset if self._read_committed else st.high_watermark
        return KafkaTimeoutError(
            f"{where}: no records past offset {st.position} within "
            f"request.timeout.ms={self._timeout_ms}, but the range ends at {self._end} "
            f"(the {bound} is {log_end})"
        )

    # -- lifecycle ---------------------------------------------------------------
    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._client.close()

    def __enter__(self) -> PartitionRangeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
